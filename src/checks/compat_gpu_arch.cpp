#include "checks/compat_checks.hpp"
#include "compat/matrix.hpp"

namespace gpucheck::checks {

namespace {
constexpr CheckInfo k_info{
    "compat.gpu_arch", "CUDA builds target the GPUs",
    "Each CUDA runtime and toolkit found can target every GPU's architecture.", CheckKind::passive};

std::vector<CheckResult> run(const CheckContext& context) {
  return compat_result(k_info, compat::gpu_toolkit_rule(context.snapshot, compat::active_matrix()));
}
} // namespace

CheckDef compat_gpu_arch_check() {
  return {k_info, &run};
}

} // namespace gpucheck::checks
