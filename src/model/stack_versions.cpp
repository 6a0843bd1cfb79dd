#include "gpucheck/model/stack_versions.hpp"

#include <string>

namespace gpucheck {

std::optional<std::string> driver_version(const SystemSnapshot& snapshot) {
  return snapshot.kernel_module.version ? snapshot.kernel_module.version
                                        : snapshot.nvml.driver_version;
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
