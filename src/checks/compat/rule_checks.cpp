#include "checks/compat/common.hpp"
#include "compat/matrix.hpp"

namespace gpucheck::checks {

namespace {

using Rule = compat::RuleOutcome (*)(const SystemSnapshot& snapshot, const compat::Matrix& matrix);

/// The compatibility checks that are one rule of src/compat/ over the bundled (or --matrix)
/// matrix, each a row: its info and its rule, named by the factory that registers it.
/// compat.what_runs has its own file.
struct RuleCheck {
  CheckInfo info;
  Rule rule;
};

constexpr RuleCheck k_driver_runtime{
    {"compat.driver_runtime", "Driver runs the CUDA runtimes",
     "The driver supports each CUDA runtime found, directly or through minor-version "
     "compatibility.",
     CheckKind::passive},
    &compat::driver_runtime_rule};
constexpr RuleCheck k_driver_cudnn{
    {"compat.driver_cudnn", "Driver runs cuDNN's CUDA",
     "The driver supports the CUDA version each cuDNN found was built for "
     "(cudnnGetCudartVersion).",
     CheckKind::passive},
    &compat::driver_cudnn_rule};
constexpr RuleCheck k_toolkit_driver{
    {"compat.toolkit_driver", "nvcc builds run on this driver",
     "Binaries that nvcc builds here can run on the installed driver.", CheckKind::passive},
    &compat::toolkit_driver_rule};
constexpr RuleCheck k_forward_compat{
    {"compat.forward_compat", "Forward-compatibility package fits",
     "A cuda-compat libcuda in use runs on this GPU class and kernel driver branch.",
     CheckKind::passive},
    &compat::forward_compat_rule};
constexpr RuleCheck k_gpu_driver{
    {"compat.gpu_driver", "Driver branch supports the GPUs",
     "Each GPU's architecture is still supported by the installed driver branch.",
     CheckKind::passive},
    &compat::gpu_driver_rule};
constexpr RuleCheck k_gpu_arch{
    {"compat.gpu_arch", "CUDA builds target the GPUs",
     "Each CUDA runtime and toolkit found can target every GPU's architecture.",
     CheckKind::passive},
    &compat::gpu_toolkit_rule};
constexpr RuleCheck k_gpu_cudnn{{"compat.gpu_cudnn", "cuDNN supports the GPUs",
                                 "Each cuDNN release found supports every GPU's architecture.",
                                 CheckKind::passive},
                                &compat::gpu_cudnn_rule};

/// A row's check: a CheckFn is a plain function, so one instance per row.
template <const RuleCheck& row> std::vector<CheckResult> run(const CheckContext& context) {
  return compat_result(row.info, row.rule(context.snapshot, compat::active_matrix()));
}

template <const RuleCheck& row> CheckDef rule_check() {
  return {row.info, &run<row>};
}

} // namespace

CheckDef compat_driver_runtime_check() {
  return rule_check<k_driver_runtime>();
}
CheckDef compat_driver_cudnn_check() {
  return rule_check<k_driver_cudnn>();
}
CheckDef compat_toolkit_driver_check() {
  return rule_check<k_toolkit_driver>();
}
CheckDef compat_forward_compat_check() {
  return rule_check<k_forward_compat>();
}
CheckDef compat_gpu_driver_check() {
  return rule_check<k_gpu_driver>();
}
CheckDef compat_gpu_arch_check() {
  return rule_check<k_gpu_arch>();
}
CheckDef compat_gpu_cudnn_check() {
  return rule_check<k_gpu_cudnn>();
}

} // namespace gpucheck::checks
