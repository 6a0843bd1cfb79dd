#pragma once
/// The library families discover_libraries looks for, and what a file name says about a copy.

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace gpucheck::probes {

struct LibraryFamilySpec {
  std::string_view family;       ///< "cudnn"
  std::string_view stem;         ///< "libcudnn.so": family files are stem or stem.N[.N...]
  std::string_view wheel_dir;    ///< pip layout nvidia/<wheel_dir>/lib; empty for driver libs
  std::string_view dist_base;    ///< wheel distribution, "nvidia_cudnn" (+ "_cuNN"); or empty
  int dist_version_parts = 0;    ///< keep this many parts of the wheel version, 0 = all
  std::string_view fixed_soname; ///< driver libraries: "libcuda.so.1"; empty = from the version
};

/// cuda, nvml, cudart, cudnn, cublas, nccl (in that order).
std::span<const LibraryFamilySpec> library_family_specs();

/// Whether `file_name` is `stem` or `stem` followed by ".<digits>[.<digits>...]".
/// ("libcudnn.so.9", "libcudnn.so") -> true; ("libcudnn_ops.so.9", "libcudnn.so") -> false.
bool is_family_file(std::string_view file_name, std::string_view stem);

/// The version after the stem: ("libcudnn.so.9.19.0", "libcudnn.so") -> "9.19.0";
/// ("libcuda.so.580.159.04", "libcuda.so") -> "580.159.04"; "" for the bare stem or a non-member.
std::string version_from_file_name(std::string_view file_name, std::string_view stem);

/// The SONAME a copy most likely carries when its ELF header cannot be read: the fixed one for
/// driver libraries, else stem + "." + the major from the file name ("libcudart.so.13.0.96" ->
/// "libcudart.so.13"; CUDA <= 11 cudart keeps major.minor: "libcudart.so.11.0").
/// Empty when the file name has no version.
std::string guess_soname(const LibraryFamilySpec& spec, std::string_view real_file_name);

/// A wheel version trimmed to the parts the library itself reports ("9.19.0.56" -> "9.19.0"
/// when parts == 3); unchanged when parts == 0 or it has fewer parts.
std::string trim_version(std::string_view version, int parts);

} // namespace gpucheck::probes
