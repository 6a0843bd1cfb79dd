#include "probes/library_names.hpp"

#include <array>
#include <cctype>

namespace gpucheck::probes {

namespace {

// clang-format off
constexpr std::array k_specs = {
    LibraryFamilySpec{"cuda",   "libcuda.so",        "",             "",                    0, "libcuda.so.1"},
    LibraryFamilySpec{"nvml",   "libnvidia-ml.so",   "",             "",                    0, "libnvidia-ml.so.1"},
    LibraryFamilySpec{"cudart", "libcudart.so",      "cuda_runtime", "nvidia_cuda_runtime", 0, ""},
    LibraryFamilySpec{"cudnn",  "libcudnn.so",       "cudnn",        "nvidia_cudnn",        3, ""},
    LibraryFamilySpec{"cublas", "libcublas.so",      "cublas",       "nvidia_cublas",       0, ""},
    LibraryFamilySpec{"nccl",   "libnccl.so",        "nccl",         "nvidia_nccl",         0, ""},
};
// clang-format on

bool is_version_suffix(std::string_view suffix) {
  // ".9", ".9.19.0", ".580.159.04": dot-separated non-empty digit groups.
  if (suffix.empty()) {
    return true;
  }
  if (suffix.front() != '.') {
    return false;
  }
  bool group_has_digit = false;
  for (size_t i = 1; i < suffix.size(); ++i) {
    if (suffix[i] == '.') {
      if (!group_has_digit) {
        return false;
      }
      group_has_digit = false;
    } else if (std::isdigit(static_cast<unsigned char>(suffix[i])) != 0) {
      group_has_digit = true;
    } else {
      return false;
    }
  }
  return group_has_digit;
}

} // namespace

std::span<const LibraryFamilySpec> library_family_specs() {
  return k_specs;
}

bool is_family_file(std::string_view file_name, std::string_view stem) {
  return file_name.starts_with(stem) && is_version_suffix(file_name.substr(stem.size()));
}

std::string version_from_file_name(std::string_view file_name, std::string_view stem) {
  if (!is_family_file(file_name, stem) || file_name.size() == stem.size()) {
    return {};
  }
  return std::string(file_name.substr(stem.size() + 1));
}

std::string guess_soname(const LibraryFamilySpec& spec, std::string_view real_file_name) {
  if (!spec.fixed_soname.empty()) {
    return std::string(spec.fixed_soname);
  }
  const std::string version = version_from_file_name(real_file_name, spec.stem);
  if (version.empty()) {
    return {};
  }
  const std::string major = version.substr(0, version.find('.'));
  std::string soname = std::string(spec.stem) + "." + major;
  if (spec.family == "cudart" && (major == "10" || major == "11" || major.size() == 1)) {
    // cudart kept major.minor in its SONAME up to CUDA 11 (libcudart.so.11.0).
    const size_t dot = version.find('.');
    const std::string minor = dot == std::string::npos
                                  ? "0"
                                  : version.substr(dot + 1, version.find('.', dot + 1) - dot - 1);
    soname += "." + (major == "11" ? std::string("0") : minor);
  }
  return soname;
}

std::string trim_version(std::string_view version, int parts) {
  if (parts <= 0) {
    return std::string(version);
  }
  size_t start = 0;
  size_t dot = 0;
  for (int i = 0; i < parts; ++i) {
    dot = version.find('.', start);
    if (dot == std::string_view::npos) {
      return std::string(version);
    }
    start = dot + 1;
  }
  return std::string(version.substr(0, dot));
}

} // namespace gpucheck::probes
