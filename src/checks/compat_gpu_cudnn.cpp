#include "checks/compat_checks.hpp"
#include "compat/matrix.hpp"

namespace gpucheck::checks {

namespace {
constexpr CheckInfo k_info{"compat.gpu_cudnn", "cuDNN supports the GPUs",
                           "Each cuDNN release found supports every GPU's architecture.",
                           CheckKind::passive};

std::vector<CheckResult> run(const CheckContext& context) {
  return compat_result(k_info, compat::gpu_cudnn_rule(context.snapshot, compat::active_matrix()));
}
} // namespace

CheckDef compat_gpu_cudnn_check() {
  return {k_info, &run};
}

} // namespace gpucheck::checks
