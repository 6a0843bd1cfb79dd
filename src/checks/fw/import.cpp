#include <fmt/format.h>

#include "checks/checks.hpp"
#include "compat/framework_rules.hpp"
#include "gpucheck/plural.hpp"

namespace gpucheck::checks {

namespace fw = compat::fw; // the framework rules (compat/framework_rules.hpp)

namespace {
constexpr CheckInfo k_info{"fw.import", "Frameworks import and use the GPU",
                           "With --import: each framework imports in its own interpreter, sees "
                           "the GPU and runs one tiny operation on it.",
                           CheckKind::passive};

std::vector<CheckResult> run(const CheckContext& context) {
  std::vector<CheckResult> results;
  for (const PythonEnvironment& env : context.snapshot.python_environments) {
    for (const FrameworkImport& result : env.imports) {
      std::vector<Finding> findings = fw::import_findings(context.snapshot, env, result);
      std::string summary =
          fmt::format("{} in {}: ", fw::framework_label(result.framework), fw::env_label(env));
      if (result.failure) {
        summary += fmt::format("no result ({})", to_string(result.failure->kind));
      } else if (!result.error.empty()) {
        summary += result.error;
      } else {
        // ONNX Runtime and TensorRT say whether they use the GPU, not how many they see.
        const std::string sees =
            result.device_count            ? "sees " + plural(*result.device_count, "GPU")
            : result.gpu_available == true ? std::string("uses the GPU")
            : fw::cpu_only_build(env, result.framework)
                ? std::string("sees no GPU (a CPU-only build, as its files say)")
                : std::string("sees no GPU");
        summary += fmt::format("{} {}, {}{}{}", fw::framework_label(result.framework),
                               result.version, sees, result.op_ok == true ? ", tiny op ok" : "",
                               result.cudnn_version ? ", cuDNN " + *result.cudnn_version : "");
      }
      CheckResult check = make_result(k_info, std::move(summary), std::move(findings));
      if (!result.failure) {
        check.metrics.push_back({"import_s", result.seconds, "s", "import and one tiny op"});
      }
      results.push_back(std::move(check));
    }
  }
  if (results.empty()) {
    return {skip_result(k_info, "not asked: run with --import to import each framework found")};
  }
  return results;
}
} // namespace

CheckDef fw_import_check() {
  return {k_info, &run};
}

} // namespace gpucheck::checks
