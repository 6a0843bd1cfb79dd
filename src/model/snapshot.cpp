#include "gpucheck/model/snapshot.hpp"

#include "gpucheck/model/stack_versions.hpp"

namespace gpucheck {

const LibraryFamily* SystemSnapshot::library(std::string_view family) const {
  for (const LibraryFamily& lib : libraries) {
    if (lib.family == family) {
      return &lib;
    }
  }
  return nullptr;
}

std::optional<std::string> SystemSnapshot::env(const std::string& name) const {
  auto it = environment.variables.find(name);
  if (it == environment.variables.end()) {
    return std::nullopt;
  }
  return it->second;
}

std::optional<int> driver_cuda_version(const SystemSnapshot& snapshot) {
  for (const std::optional<int>& said :
       {snapshot.cuda.driver_version, snapshot.nvml.cuda_driver_version}) {
    if (said && *said > 0) {
      return said;
    }
  }
  return std::nullopt;
}

std::string cuda_version_text(int64_t encoded) {
  return std::to_string(encoded / 1000) + "." + std::to_string((encoded % 1000) / 10);
}

} // namespace gpucheck
