// fw.pytorch, fw.tensorflow, fw.jax, fw.onnxruntime, fw.tensorrt, fw.cupy: one check per framework,
// the same shape for each: one result per Python environment that has it, with the rule findings
// and the library findings.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "checks/checks.hpp"
#include "compat/framework_rules.hpp"
#include "compat/matrix.hpp"
#include "gpucheck/plural.hpp"

namespace gpucheck::checks {

namespace fw = compat::fw; // the framework rules (compat/framework_rules.hpp)

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

/// "; fits GPU 0 (NVIDIA H200, sm_90) and driver 580.159.04" for a CUDA build with no warning
/// or failure; empty otherwise.
std::string fits_text(const SystemSnapshot& s, const FrameworkInstall& fw,
                      const std::vector<Finding>& findings) {
  const bool clean = std::none_of(findings.begin(), findings.end(), [](const Finding& f) {
    return f.severity == Severity::warn || f.severity == Severity::fail;
  });
  // ONNX Runtime, TensorRT and CuPy: their kernels' architectures are not known, so no "fits".
  const bool judged_archs = fw.name == "pytorch" || fw.name == "tensorflow" || fw.name == "jax";
  if (!clean || !fw.cuda || s.gpus.empty() || !judged_archs) {
    return "";
  }
  std::vector<std::string> gpus;
  for (const GpuInfo& gpu : s.gpus) {
    gpus.push_back(gpu.cc_major ? fmt::format("GPU {} ({}, sm_{}{})", gpu.index, gpu.name,
                                              *gpu.cc_major, gpu.cc_minor.value_or(0))
                                : fmt::format("GPU {} ({})", gpu.index, gpu.name));
  }
  const std::string driver = s.nvml.driver_version ? " and driver " + *s.nvml.driver_version : "";
  return fmt::format("; fits {}{}", fmt::join(gpus, ", "), driver);
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
      std::string build =
          fw.cuda ? fmt::format("CUDA {}", *fw.cuda)
                  : std::string(fw.name == "tensorrt" ? "CUDA version unknown" : "CPU-only build");
      if (fw.cudnn && (fw.name == "onnxruntime" || fw.name == "tensorrt")) {
        build += fmt::format(", cuDNN {}", *fw.cudnn);
      }
      const std::string fits = fits_text(s, fw, findings);
      results.push_back(make_result(
          info, fmt::format("{} ({}{}){}", fw::subject(env, fw), build, libraries_text(fw), fits),
          std::move(findings)));
    }
  }
  if (results.empty()) {
    return {
        skip_result(info, fmt::format("no {} in the {} found", fw::framework_label(name),
                                      plural(s.python_environments.size(), "Python environment")))};
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
constexpr CheckInfo k_onnxruntime{
    "fw.onnxruntime", "ONNX Runtime uses this GPU",
    "Each onnxruntime-gpu found fits the driver, and the loader finds the CUDA, cuBLAS and cuDNN "
    "libraries of the majors its CUDA provider needs.",
    CheckKind::passive};
constexpr CheckInfo k_tensorrt{"fw.tensorrt", "TensorRT uses this GPU",
                               "Each TensorRT wheel found fits the driver, and the loader finds "
                               "the CUDA and cuDNN libraries its libnvinfer needs.",
                               CheckKind::passive};
constexpr CheckInfo k_cupy{"fw.cupy", "CuPy uses this GPU",
                           "Each CuPy wheel found fits the driver, and the loader finds the CUDA "
                           "runtime, NVRTC and cuBLAS of its wheel's CUDA major.",
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

std::vector<CheckResult> run_onnxruntime(const CheckContext& context) {
  return judge(k_onnxruntime, "onnxruntime", context);
}
std::vector<CheckResult> run_tensorrt(const CheckContext& context) {
  return judge(k_tensorrt, "tensorrt", context);
}
std::vector<CheckResult> run_cupy(const CheckContext& context) {
  return judge(k_cupy, "cupy", context);
}

} // namespace

CheckDef fw_onnxruntime_check() {
  return {k_onnxruntime, &run_onnxruntime};
}
CheckDef fw_tensorrt_check() {
  return {k_tensorrt, &run_tensorrt};
}
CheckDef fw_cupy_check() {
  return {k_cupy, &run_cupy};
}
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
