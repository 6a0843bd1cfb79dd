#include "checks/compat_checks.hpp"
#include "compat/matrix.hpp"

namespace gpucheck::checks {

namespace {
constexpr CheckInfo k_info{
    "compat.forward_compat", "Forward-compatibility package fits",
    "A cuda-compat libcuda in use runs on this GPU class and kernel driver branch.",
    CheckKind::passive};

std::vector<CheckResult> run(const CheckContext& context) {
  return compat_result(k_info,
                       compat::forward_compat_rule(context.snapshot, compat::active_matrix()));
}
} // namespace

CheckDef compat_forward_compat_check() {
  return {k_info, &run};
}

} // namespace gpucheck::checks
