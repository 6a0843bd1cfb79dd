#include "checks/compat_checks.hpp"
#include "compat/matrix.hpp"

namespace gpucheck::checks {

namespace {
constexpr CheckInfo k_info{
    "compat.driver_cudnn", "Driver runs cuDNN's CUDA",
    "The driver supports the CUDA version each cuDNN found was built for (cudnnGetCudartVersion).",
    CheckKind::passive};

std::vector<CheckResult> run(const CheckContext& context) {
  return compat_result(k_info,
                       compat::driver_cudnn_rule(context.snapshot, compat::active_matrix()));
}
} // namespace

CheckDef compat_driver_cudnn_check() {
  return {k_info, &run};
}

} // namespace gpucheck::checks
