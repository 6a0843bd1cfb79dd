#include "checks/compat_checks.hpp"
#include "compat/matrix.hpp"

namespace gpucheck::checks {

namespace {
constexpr CheckInfo k_info{"compat.toolkit_driver", "nvcc builds run on this driver",
                           "Binaries that nvcc builds here can run on the installed driver.",
                           CheckKind::passive};

std::vector<CheckResult> run(const CheckContext& context) {
  return compat_result(k_info,
                       compat::toolkit_driver_rule(context.snapshot, compat::active_matrix()));
}
} // namespace

CheckDef compat_toolkit_driver_check() {
  return {k_info, &run};
}

} // namespace gpucheck::checks
