#include "checks/compat_checks.hpp"
#include "compat/matrix.hpp"

namespace gpucheck::checks {

namespace {

using Rule = compat::RuleOutcome (*)(const SystemSnapshot& snapshot, const compat::Matrix& matrix);

/// The compatibility checks that are one rule of src/compat/ over the bundled (or --matrix)
/// matrix, each a row: its info and its rule. compat.what_runs has its own file.
struct RuleCheck {
  CheckInfo info;
  Rule rule;
};

constexpr RuleCheck k_rule_checks[] = {
    {{"compat.driver_runtime", "Driver runs the CUDA runtimes",
      "The driver supports each CUDA runtime found, directly or through minor-version "
      "compatibility.",
      CheckKind::passive},
     &compat::driver_runtime_rule},
    {{"compat.driver_cudnn", "Driver runs cuDNN's CUDA",
      "The driver supports the CUDA version each cuDNN found was built for "
      "(cudnnGetCudartVersion).",
      CheckKind::passive},
     &compat::driver_cudnn_rule},
    {{"compat.toolkit_driver", "nvcc builds run on this driver",
      "Binaries that nvcc builds here can run on the installed driver.", CheckKind::passive},
     &compat::toolkit_driver_rule},
    {{"compat.forward_compat", "Forward-compatibility package fits",
      "A cuda-compat libcuda in use runs on this GPU class and kernel driver branch.",
      CheckKind::passive},
     &compat::forward_compat_rule},
    {{"compat.gpu_driver", "Driver branch supports the GPUs",
      "Each GPU's architecture is still supported by the installed driver branch.",
      CheckKind::passive},
     &compat::gpu_driver_rule},
    {{"compat.gpu_arch", "CUDA builds target the GPUs",
      "Each CUDA runtime and toolkit found can target every GPU's architecture.",
      CheckKind::passive},
     &compat::gpu_toolkit_rule},
    {{"compat.gpu_cudnn", "cuDNN supports the GPUs",
      "Each cuDNN release found supports every GPU's architecture.", CheckKind::passive},
     &compat::gpu_cudnn_rule},
};

/// Row `index`'s check: a CheckFn is a plain function, so one instance per row.
template <std::size_t index> std::vector<CheckResult> run(const CheckContext& context) {
  const RuleCheck& row = k_rule_checks[index];
  return compat_result(row.info, row.rule(context.snapshot, compat::active_matrix()));
}

template <std::size_t index> CheckDef rule_check() {
  static_assert(index < std::size(k_rule_checks));
  return {k_rule_checks[index].info, &run<index>};
}

} // namespace

CheckDef compat_driver_runtime_check() {
  return rule_check<0>();
}
CheckDef compat_driver_cudnn_check() {
  return rule_check<1>();
}
CheckDef compat_toolkit_driver_check() {
  return rule_check<2>();
}
CheckDef compat_forward_compat_check() {
  return rule_check<3>();
}
CheckDef compat_gpu_driver_check() {
  return rule_check<4>();
}
CheckDef compat_gpu_arch_check() {
  return rule_check<5>();
}
CheckDef compat_gpu_cudnn_check() {
  return rule_check<6>();
}

} // namespace gpucheck::checks
