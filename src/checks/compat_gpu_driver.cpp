#include "checks/compat_checks.hpp"
#include "compat/matrix.hpp"

namespace gpucheck::checks {

namespace {
constexpr CheckInfo k_info{
    "compat.gpu_driver", "Driver branch supports the GPUs",
    "Each GPU's architecture is still supported by the installed driver branch.",
    CheckKind::passive};

std::vector<CheckResult> run(const CheckContext& context) {
  return compat_result(k_info, compat::gpu_driver_rule(context.snapshot, compat::active_matrix()));
}
} // namespace

CheckDef compat_gpu_driver_check() {
  return {k_info, &run};
}

} // namespace gpucheck::checks
