#include "gates/found_versions.hpp"

#include <fmt/format.h>

#include "gpucheck/model/stack_versions.hpp"

namespace gpucheck::gates {

namespace {

FoundVersion from_text(const std::string& text, std::string missing_reason) {
  FoundVersion found;
  if (!text.empty()) {
    found.version = Version::parse(text);
  }
  if (found.version) {
    found.text = text;
  } else {
    found.missing_reason = text.empty() ? std::move(missing_reason)
                                        : fmt::format("'{}' is not a version number", text);
  }
  return found;
}

FoundVersion from_cuda_int(std::optional<int> encoded, std::string missing_reason) {
  FoundVersion found;
  if (encoded && *encoded > 0) {
    found.version = cuda_from_int(*encoded);
    found.text = found.version->str();
  } else {
    found.missing_reason = std::move(missing_reason);
  }
  return found;
}

FoundVersion found_driver_version(const SystemSnapshot& snapshot) {
  // The kernel module's, else NVML's (the rule compat follows too).
  return from_text(driver_version(snapshot).value_or(""),
                   "no NVIDIA kernel module is loaded and NVML reports no driver version");
}

FoundVersion cuda_version(const SystemSnapshot& snapshot) {
  // libcuda's, or NVML's when libcuda gave none or 0 (the rule compat follows too).
  return from_cuda_int(driver_cuda_version(snapshot),
                       "neither libcuda nor NVML reports the CUDA version of the driver");
}

FoundVersion library_version(const SystemSnapshot& snapshot, std::string_view family) {
  const LibraryFamily* library = snapshot.library(family);
  if (library == nullptr) {
    return from_text("", fmt::format("lib{} was not probed", family));
  }
  if (library->failure) {
    return from_text("",
                     fmt::format("the lib{} probe failed: {}", family, library->failure->detail));
  }
  if (!library->load.loaded) {
    return from_text("", library->load.error.empty() ? fmt::format("lib{} is not loadable", family)
                                                     : fmt::format("lib{} is not loadable: {}",
                                                                   family, library->load.error));
  }
  return from_text(library->load.version,
                   fmt::format("lib{} loads but reports no version", family));
}

FoundVersion toolkit_version(const SystemSnapshot& snapshot) {
  if (snapshot.toolkit.nvcc_version) {
    return from_text(*snapshot.toolkit.nvcc_version, "");
  }
  if (!snapshot.toolkit.installs.empty()) {
    return from_text(snapshot.toolkit.installs.front().version,
                     fmt::format("the CUDA toolkit at {} has no version file",
                                 snapshot.toolkit.installs.front().path));
  }
  return from_text("", "no CUDA toolkit found (no nvcc on PATH, none under /usr/local/cuda*)");
}

std::vector<FoundVersion> compute_capabilities(const SystemSnapshot& snapshot) {
  std::vector<FoundVersion> out;
  for (const GpuInfo& gpu : snapshot.gpus) {
    FoundVersion found;
    found.gpu_index = gpu.index;
    found.gpu_name = gpu.name;
    if (gpu.cc_major && gpu.cc_minor) {
      found.version = Version({*gpu.cc_major, *gpu.cc_minor});
      found.text = found.version->str();
    } else {
      found.missing_reason = fmt::format("GPU {} reports no compute capability", gpu.index);
    }
    out.push_back(std::move(found));
  }
  if (out.empty()) {
    out.push_back(from_text("", "no GPU was found"));
  }
  return out;
}

} // namespace

std::vector<FoundVersion> found_versions(const SystemSnapshot& snapshot, std::string_view subject) {
  if (subject == "driver") {
    return {found_driver_version(snapshot)};
  }
  if (subject == "cuda") {
    return {cuda_version(snapshot)};
  }
  if (subject == "toolkit") {
    return {toolkit_version(snapshot)};
  }
  if (subject == "cc") {
    return compute_capabilities(snapshot);
  }
  return {library_version(snapshot, subject)};
}

} // namespace gpucheck::gates
