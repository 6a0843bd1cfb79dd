// fw.pytorch, fw.tensorflow, fw.jax: one check per framework, the same shape for each: one
// result per Python environment that has it, with the rule findings and the library findings.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "checks/fw_checks.hpp"
#include "checks/fw_rules.hpp"
#include "compat/matrix.hpp"

namespace gpucheck::checks {

namespace {

std::string libraries_text(const FrameworkInstall& fw) {
  std::vector<std::string> parts;
  for (const ResolvedLibrary& lib : fw.libraries) {
    if (!lib.path.empty()) {
      parts.push_back(
          fmt::format("{} {} ({})", lib.family, lib.version.empty() ? "?" : lib.version, lib.via));
    } else {
      parts.push_back(fmt::format("{} missing", lib.soname));
    }
  }
  return parts.empty() ? "" : fmt::format("; loads {}", fmt::join(parts, ", "));
}

std::vector<CheckResult> judge(const CheckInfo& info, std::string_view name,
                               const CheckContext& context) {
  const SystemSnapshot& s = context.snapshot;
  const compat::Matrix& matrix = compat::active_matrix();
  std::vector<CheckResult> results;
  for (const PythonEnvironment& env : s.python_environments) {
    for (const FrameworkInstall& fw : env.frameworks) {
      if (fw.name != name) {
        continue;
      }
      std::vector<Finding> findings = fw::framework_findings(s, matrix, env, fw);
      std::vector<Finding> libraries = fw::library_findings(s, matrix, env, fw);
      findings.insert(findings.end(), libraries.begin(), libraries.end());
      const std::string build =
          fw.cuda ? fmt::format("CUDA {}", *fw.cuda) : std::string("CPU-only build");
      results.push_back(make_result(
          info, fmt::format("{} ({}{})", fw::subject(env, fw), build, libraries_text(fw)),
          std::move(findings)));
    }
  }
  if (results.empty()) {
    return {
        skip_result(info, fmt::format("no {} in the {} Python environment(s) found",
                                      fw::framework_label(name), s.python_environments.size()))};
  }
  return results;
}

constexpr CheckInfo k_pytorch{"fw.pytorch", "PyTorch uses this GPU",
                              "Each PyTorch found fits the driver, has kernels for every GPU and "
                              "loads its own cuDNN, cuBLAS, CUDA runtime and NCCL.",
                              CheckKind::passive};
constexpr CheckInfo k_tensorflow{"fw.tensorflow", "TensorFlow uses this GPU",
                                 "Each TensorFlow found is a CUDA build the driver runs, for these "
                                 "GPUs, with the cuDNN it was tested with.",
                                 CheckKind::passive};
constexpr CheckInfo k_jax{"fw.jax", "JAX uses this GPU",
                          "Each JAX found has a CUDA plugin matching jaxlib that fits the driver, "
                          "the GPUs and the cuDNN it loads.",
                          CheckKind::passive};

std::vector<CheckResult> run_pytorch(const CheckContext& context) {
  return judge(k_pytorch, "pytorch", context);
}
std::vector<CheckResult> run_tensorflow(const CheckContext& context) {
  return judge(k_tensorflow, "tensorflow", context);
}
std::vector<CheckResult> run_jax(const CheckContext& context) {
  return judge(k_jax, "jax", context);
}

} // namespace

CheckDef fw_pytorch_check() {
  return {k_pytorch, &run_pytorch};
}
CheckDef fw_tensorflow_check() {
  return {k_tensorflow, &run_tensorflow};
}
CheckDef fw_jax_check() {
  return {k_jax, &run_jax};
}

} // namespace gpucheck::checks
