#include "gpucheck/registry.hpp"

#include "checks/checks.hpp"
#include "checks/compat_checks.hpp"

namespace gpucheck {

std::span<const CheckDef> all_checks() {
  // Order is report order: driver stack first, then environment, libraries, then each GPU.
  static const CheckDef k_checks[] = {
      checks::placeholder_check(),           checks::compat_driver_runtime_check(),
      checks::compat_driver_cudnn_check(),   checks::compat_toolkit_driver_check(),
      checks::compat_forward_compat_check(), checks::compat_gpu_driver_check(),
      checks::compat_gpu_arch_check(),       checks::compat_gpu_cudnn_check(),
      checks::compat_what_runs_check(),
  };
  return k_checks;
}

} // namespace gpucheck
