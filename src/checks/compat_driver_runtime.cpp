#include "checks/compat_checks.hpp"
#include "compat/matrix.hpp"

namespace gpucheck::checks {

namespace {
constexpr CheckInfo k_info{
    "compat.driver_runtime", "Driver runs the CUDA runtimes",
    "The driver supports each CUDA runtime found, directly or through minor-version compatibility.",
    CheckKind::passive};

std::vector<CheckResult> run(const CheckContext& context) {
  return compat_result(k_info,
                       compat::driver_runtime_rule(context.snapshot, compat::active_matrix()));
}
} // namespace

CheckDef compat_driver_runtime_check() {
  return {k_info, &run};
}

} // namespace gpucheck::checks
