#include "gpucheck/registry.hpp"

#include "checks/checks.hpp"
#include "checks/gpu_checks.hpp"

namespace gpucheck {

std::span<const CheckDef> all_checks() {
  // Order is report order: driver stack first, then environment, libraries, then each GPU.
  static const CheckDef k_checks[] = {
      checks::placeholder_check(), checks::gpu_compute_check(), checks::gpu_bandwidth_check(),
      checks::gpu_cudnn_check(),   checks::gpu_streams_check(),
  };
  return k_checks;
}

} // namespace gpucheck
