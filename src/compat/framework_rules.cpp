#include "compat/framework_rules.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <set>

#include "compat/lookup.hpp"
#include "compat/machine.hpp"
#include "findings/catalog.hpp"

namespace gpucheck::compat::fw {

namespace {

/// The numeric release at the start of a version: "2.11.0+cu130" -> 2.11.0, "2.18.0rc1" -> 2.18.0.
std::optional<Version> release_of(std::string_view version) {
  size_t end = 0;
  while (end < version.size() &&
         (std::isdigit(static_cast<unsigned char>(version[end])) != 0 || version[end] == '.')) {
    ++end;
  }
  std::string_view text = version.substr(0, end);
  while (!text.empty() && text.back() == '.') {
    text.remove_suffix(1);
  }
  return Version::parse(text);
}

std::string local_tag(const std::string& version) {
  const size_t plus = version.find('+');
  return plus == std::string::npos ? "" : version.substr(plus + 1);
}

std::string gpus_text(const std::vector<compat::MachineGpu>& gpus) {
  std::vector<std::string> names;
  for (const compat::MachineGpu& gpu : gpus) {
    names.push_back(gpu.cc ? fmt::format("{} ({})", gpu.name, sm_name(*gpu.cc)) : gpu.name);
  }
  return fmt::format("{} GPU{}: {}", gpus.size(), gpus.size() == 1 ? "" : "s",
                     fmt::join(names, ", "));
}

const ResolvedLibrary* resolved(const FrameworkInstall& fw, std::string_view family) {
  for (const ResolvedLibrary& lib : fw.libraries) {
    if (lib.family == family) {
      return &lib;
    }
  }
  return nullptr;
}

std::string cuda_suffix(const FrameworkInstall& fw) {
  const std::optional<Version> cuda = fw.cuda ? Version::parse(*fw.cuda) : std::nullopt;
  return cuda ? fmt::format("cu{}", cuda->major_number()) : "cu12";
}

/// The LD_LIBRARY_PATH entry that holds `path`.
std::string directory_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos || slash == 0 ? "/" : path.substr(0, slash);
}

/// What to do about a wrong cuDNN: drop the LD_LIBRARY_PATH copy, or install the wheel the
/// framework expects (`spec` like "==9.17.1.4" or ">=9.3,<10").
std::string cudnn_remedy(const FrameworkInstall& fw, const ResolvedLibrary& lib,
                         const std::string& spec) {
  if (lib.via == "LD_LIBRARY_PATH") {
    if (!lib.own_path.empty()) {
      return fmt::format("Remove {} from LD_LIBRARY_PATH in the environment that runs Python, so "
                         "that {} loads its own cuDNN {} ({}).",
                         directory_of(lib.path), framework_label(fw.name), lib.own_version,
                         lib.own_path);
    }
    return fmt::format("Remove {} from LD_LIBRARY_PATH and install the cuDNN wheel it expects: "
                       "pip install \"nvidia-cudnn-{}{}\"",
                       directory_of(lib.path), cuda_suffix(fw), spec);
  }
  return fmt::format("Install the cuDNN it expects: pip install \"nvidia-cudnn-{}{}\"",
                     cuda_suffix(fw), spec);
}

struct Machine {
  compat::MachineFacts facts;
  compat::MachineQuery query;
};

Machine machine_of(const SystemSnapshot& snapshot, const compat::Matrix& matrix) {
  return {compat::machine_facts(snapshot, matrix), compat::query_from_snapshot(snapshot, matrix)};
}

bool has_driver(const compat::MachineQuery& q) {
  return q.driver.has_value() || q.driver_cuda.has_value();
}

/// Driver against a CUDA build: driver_too_old or minor_version_compat, with `alternative` as the
/// remedy's other way out.
void driver_rule(const compat::Matrix& matrix, const Machine& m, const std::string& who,
                 const Version& cuda, const std::string& alternative,
                 std::vector<Finding>& findings) {
  if (!has_driver(m.query)) {
    return;
  }
  const compat::DriverVerdict v =
      compat::judge_driver(matrix, m.query.driver, m.query.driver_cuda, cuda);
  const std::string driver = m.query.driver_text.value_or("(version unknown)");
  const std::string driver_cuda = v.driver_cuda ? v.driver_cuda->str() : "an unknown version";
  if (v.fit == compat::DriverFit::too_old) {
    findings.push_back(make_finding(codes::k_fw_driver_too_old, std::nullopt, who,
                                    cuda.truncated(2).str(), compat::needed_driver_text(v, cuda),
                                    driver, driver_cuda, alternative,
                                    compat::unconfirmed_note(v.unconfirmed)));
  } else if (v.fit == compat::DriverFit::minor_version) {
    findings.push_back(make_finding(
        codes::k_fw_minor_version_compat, std::nullopt, who, cuda.truncated(2).str(), driver,
        driver_cuda,
        v.native_min_driver.empty() ? compat::needed_driver_text(v, cuda) : v.native_min_driver));
  }
}

std::string arch_names(const std::vector<Version>& archs, const std::optional<Version>& ptx) {
  std::vector<std::string> names;
  for (const Version& cc : archs) {
    names.push_back(sm_name(cc));
  }
  std::string text = names.empty() ? "no GPU kernels" : fmt::format("{}", fmt::join(names, " "));
  if (ptx) {
    text += fmt::format(" + PTX {}", sm_name(*ptx));
  }
  return text;
}

/// Each GPU against a list of real architectures and an optional PTX one.
void arch_rule(const Machine& m, const std::string& who, const std::vector<Version>& archs,
               const std::optional<Version>& ptx, const std::string& source,
               const std::string& remedy, std::vector<Finding>& findings) {
  for (const compat::MachineGpu& gpu : m.facts.gpus) {
    if (!gpu.cc || compat::covered_by_sass(archs, *gpu.cc)) {
      continue;
    }
    if (ptx && *ptx <= *gpu.cc) {
      findings.push_back(make_finding(codes::k_fw_gpu_ptx_only, gpu.index, who, gpu.name,
                                      sm_name(*gpu.cc), sm_name(*ptx)));
      continue;
    }
    findings.push_back(make_finding(codes::k_fw_gpu_not_covered, gpu.index, who, gpu.name,
                                    sm_name(*gpu.cc), arch_names(archs, ptx), source, remedy));
  }
}

/// "sm_86"/"compute_90" lists (TF build info, torch.cuda.get_arch_list()) as real archs + PTX.
void split_arch_list(const std::vector<std::string>& list, std::vector<Version>& archs,
                     std::optional<Version>& ptx) {
  for (const std::string& entry : list) {
    const std::optional<Version> cc = parse_cc(entry);
    if (!cc) {
      continue;
    }
    if (entry.starts_with("compute_")) {
      if (!ptx || *ptx < *cc) {
        ptx = cc;
      }
    } else {
      archs.push_back(*cc);
    }
  }
}

const compat::PytorchWheel* find_wheel(const compat::Matrix& matrix, const Version& release,
                                       const std::string& tag) {
  for (const compat::PytorchWheel& wheel : matrix.pytorch) {
    if (wheel.version == release.truncated(2) && wheel.wheel == tag) {
      return &wheel;
    }
  }
  return nullptr;
}

std::string pytorch_alternative(const compat::Matrix& matrix, const Machine& m,
                                const std::optional<Version>& release) {
  if (const compat::PytorchWheel* best = best_pytorch_wheel(matrix, m.query, release)) {
    return pytorch_command(*best);
  }
  return "no PyTorch wheel in the compatibility matrix fits this driver and these GPUs";
}

/// torchvision's variant tag (+cu128, +cpu) against torch's; untagged (PyPI) ones are not judged.
void torchvision_rule(const PythonEnvironment& env, const std::string& who,
                      const std::string& torch_tag, std::vector<Finding>& findings) {
  for (const PythonDistribution& dist : env.distributions) {
    if (dist.name != "torchvision") {
      continue;
    }
    const std::string tag = local_tag(dist.version);
    if (tag.empty() || tag == torch_tag) {
      return;
    }
    const std::string release = dist.version.substr(0, dist.version.find('+'));
    findings.push_back(make_finding(
        codes::k_fw_torchvision_mismatch, std::nullopt, who, release, tag, torch_tag,
        fmt::format("pip install torchvision=={} --index-url https://download.pytorch.org/whl/{}",
                    release, torch_tag)));
    return;
  }
}

void pytorch_rules(const SystemSnapshot& snapshot, const compat::Matrix& matrix, const Machine& m,
                   const PythonEnvironment& env, const FrameworkInstall& fw,
                   std::vector<Finding>& findings) {
  const std::string who = subject(env, fw);
  const std::optional<Version> release = release_of(fw.version);
  if (!fw.cuda) {
    if (!m.facts.gpus.empty()) {
      findings.push_back(make_finding(codes::k_fw_cpu_only_build, std::nullopt, who,
                                      gpus_text(m.facts.gpus),
                                      pytorch_alternative(matrix, m, release)));
    }
    torchvision_rule(env, who, "cpu", findings);
    return;
  }
  const std::optional<Version> cuda = Version::parse(*fw.cuda);
  if (!cuda) {
    return;
  }
  std::string tag = local_tag(fw.version);
  if (!tag.starts_with("cu")) { // PyPI's default wheels carry no local tag
    tag = fmt::format("cu{}{}", cuda->major_number(), cuda->minor_number());
  }
  const compat::PytorchWheel* wheel = release ? find_wheel(matrix, *release, tag) : nullptr;
  driver_rule(matrix, m, who, *cuda, pytorch_alternative(matrix, m, release), findings);

  // Architectures: what the framework said under --import, else the matrix for this wheel.
  std::vector<Version> archs;
  std::optional<Version> ptx;
  std::string source;
  for (const FrameworkImport& result : env.imports) {
    if (result.framework == fw.name && !result.arch_list.empty()) {
      split_arch_list(result.arch_list, archs, ptx);
      source = "torch.cuda.get_arch_list()";
    }
  }
  if (source.empty() && wheel != nullptr && wheel->archs) {
    archs = *wheel->archs;
    ptx = wheel->ptx;
    source = fmt::format("the matrix data for PyTorch {} {}", wheel->version.str(), wheel->wheel);
  }
  if (!source.empty()) {
    const compat::PytorchWheel* best = best_pytorch_wheel(matrix, m.query, release);
    const std::string remedy =
        best != nullptr
            ? fmt::format("Install a build with kernels for every GPU here: {}",
                          pytorch_command(*best))
            : "No PyTorch wheel in the compatibility matrix covers this GPU with this driver: "
              "build PyTorch from source with TORCH_CUDA_ARCH_LIST naming it.";
    arch_rule(m, who, archs, ptx, source, remedy, findings);
  } else if (!m.facts.gpus.empty()) {
    findings.push_back(make_finding(
        codes::k_fw_build_unknown, std::nullopt, who,
        wheel != nullptr
            ? fmt::format("the architecture list of PyTorch {} {}", wheel->version.str(),
                          wheel->wheel)
            : fmt::format("PyTorch {} {}", release ? release->truncated(2).str() : "?", tag),
        matrix.matrix_version));
  }

  torchvision_rule(env, who, tag, findings);

  // cuDNN: the copy that loads against the one the release bundles.
  const ResolvedLibrary* cudnn = resolved(fw, "cudnn");
  const std::optional<Version> loaded =
      cudnn != nullptr ? release_of(cudnn->version) : std::nullopt;
  const std::optional<Version> bundled = wheel != nullptr ? release_of(wheel->cudnn) : std::nullopt;
  if (loaded && bundled && loaded->parts().size() > 1) {
    const std::string spec = fmt::format("=={}", wheel->cudnn);
    if (loaded->major_number() != bundled->major_number()) {
      findings.push_back(
          make_finding(codes::k_fw_cudnn_mismatch, std::nullopt, who, cudnn->version, cudnn->path,
                       fmt::format("{}.x (it bundles {})", bundled->major_number(), wheel->cudnn),
                       cudnn_remedy(fw, *cudnn, spec)));
    } else if (*loaded < bundled->truncated(loaded->parts().size())) {
      findings.push_back(make_finding(codes::k_fw_cudnn_older, std::nullopt, who, cudnn->version,
                                      cudnn->path, wheel->cudnn, cudnn_remedy(fw, *cudnn, spec)));
    }
  }
  (void)snapshot;
}

/// The newest TensorFlow in the matrix whose CUDA this driver runs (and whose GPUs it serves).
std::optional<std::string> tensorflow_alternative(const compat::Matrix& matrix, const Machine& m) {
  const compat::WhatRuns what = compat::what_runs(matrix, m.query);
  if (!what.tensorflow) {
    return std::nullopt;
  }
  std::string version = what.tensorflow->name.substr(what.tensorflow->name.find(' ') + 1);
  return fmt::format("pip install \"tensorflow[and-cuda]=={}\"", version);
}

const compat::TensorflowBuild* find_tensorflow(const compat::Matrix& matrix,
                                               const std::optional<Version>& release) {
  if (!release) {
    return nullptr;
  }
  for (const compat::TensorflowBuild& build : matrix.tensorflow) {
    const std::optional<Version> v = release_of(build.version);
    if (v && v->truncated(2) == release->truncated(2)) {
      return &build;
    }
  }
  return nullptr;
}

void tensorflow_rules(const compat::Matrix& matrix, const Machine& m, const PythonEnvironment& env,
                      const FrameworkInstall& fw, std::vector<Finding>& findings) {
  const std::string who = subject(env, fw);
  const std::optional<Version> release = release_of(fw.version);
  const compat::TensorflowBuild* build = find_tensorflow(matrix, release);
  const std::string alternative = tensorflow_alternative(matrix, m).value_or(
      "no TensorFlow in the compatibility matrix fits this driver and these GPUs");
  if (!fw.cuda) {
    if (!m.facts.gpus.empty()) {
      findings.push_back(
          make_finding(codes::k_fw_cpu_only_build, std::nullopt, who, gpus_text(m.facts.gpus),
                       fw.distribution == "tensorflow-cpu"
                           ? fmt::format("pip uninstall tensorflow-cpu; {}", alternative)
                           : alternative));
    }
    return;
  }
  if (build == nullptr) {
    findings.push_back(make_finding(codes::k_fw_build_unknown, std::nullopt, who,
                                    fmt::format("TensorFlow {}", fw.version),
                                    matrix.matrix_version));
  }
  const std::optional<Version> cuda = Version::parse(*fw.cuda);
  if (cuda) {
    driver_rule(matrix, m, who, *cuda, alternative, findings);
  }
  std::vector<Version> archs;
  std::optional<Version> ptx;
  split_arch_list(fw.archs, archs, ptx);
  if (!archs.empty() || ptx) {
    arch_rule(m, who, archs, ptx, "its build info (cuda_compute_capabilities)",
              "Move the work to a GPU this build supports, or build TensorFlow from source for "
              "this GPU's compute capability.",
              findings);
  } else if (matrix.tensorflow_gpu_cc_min) {
    for (const compat::MachineGpu& gpu : m.facts.gpus) {
      if (gpu.cc && *gpu.cc < *matrix.tensorflow_gpu_cc_min) {
        findings.push_back(make_finding(
            codes::k_fw_gpu_not_covered, gpu.index, who, gpu.name, sm_name(*gpu.cc),
            fmt::format("compute capability >= {}", matrix.tensorflow_gpu_cc_min->str()),
            "tensorflow.org's GPU list", "Move the work to a GPU TensorFlow supports."));
      }
    }
  }
  // cuDNN: the tested configuration's (matrix), else the major its build info names.
  const ResolvedLibrary* cudnn = resolved(fw, "cudnn");
  const std::optional<Version> loaded =
      cudnn != nullptr ? release_of(cudnn->version) : std::nullopt;
  std::optional<Version> expected = build != nullptr ? release_of(build->cudnn) : std::nullopt;
  if (!expected && fw.cudnn) {
    expected = release_of(*fw.cudnn);
  }
  if (loaded && expected && loaded->parts().size() > 1) {
    const std::string spec = fmt::format(">={},<{}", expected->str(), expected->major_number() + 1);
    if (loaded->major_number() != expected->major_number()) {
      findings.push_back(
          make_finding(codes::k_fw_cudnn_mismatch, std::nullopt, who, cudnn->version, cudnn->path,
                       fmt::format("{}.x >= {}", expected->major_number(), expected->str()),
                       cudnn_remedy(fw, *cudnn, spec)));
    } else if (*loaded < *expected) {
      findings.push_back(make_finding(codes::k_fw_cudnn_older, std::nullopt, who, cudnn->version,
                                      cudnn->path, expected->str(),
                                      cudnn_remedy(fw, *cudnn, spec)));
    }
  }
}

void jax_rules(const compat::Matrix& matrix, const Machine& m, const PythonEnvironment& env,
               const FrameworkInstall& fw, std::vector<Finding>& findings) {
  const std::string who = subject(env, fw);
  const compat::WhatRuns what = compat::what_runs(matrix, m.query);
  const std::string alternative =
      what.jax ? fmt::format("pip install -U \"{}\"", what.jax->name)
               : "no JAX CUDA wheel in the compatibility matrix fits this driver and these GPUs";
  if (!fw.cuda) {
    if (!m.facts.gpus.empty()) {
      findings.push_back(make_finding(codes::k_fw_cpu_only_build, std::nullopt, who,
                                      gpus_text(m.facts.gpus), alternative));
    }
    return;
  }
  const std::string extra = fmt::format("cuda{}", *fw.cuda);
  if (fw.distribution == "jaxlib") {
    for (const std::string& plugin : fw.plugins) {
      const std::string version = plugin.substr(plugin.find(' ') + 1);
      if (version != fw.version) {
        findings.push_back(make_finding(codes::k_fw_jax_plugin_mismatch, std::nullopt, who, plugin,
                                        fw.version, extra));
      }
    }
  }
  const compat::JaxWheel* wheel = nullptr;
  for (const compat::JaxWheel& candidate : matrix.jax) {
    if (candidate.wheel == fmt::format("jax[{}]", extra)) {
      wheel = &candidate;
    }
  }
  if (wheel == nullptr) {
    findings.push_back(make_finding(codes::k_fw_build_unknown, std::nullopt, who,
                                    fmt::format("jax[{}]", extra), matrix.matrix_version));
    return;
  }
  if (m.query.driver && *m.query.driver < wheel->linux_min_driver.value) {
    const compat::DriverVerdict v =
        compat::judge_driver(matrix, m.query.driver, m.query.driver_cuda, wheel->cuda_min);
    findings.push_back(
        make_finding(codes::k_fw_driver_too_old, std::nullopt, who, wheel->built_with_cuda.str(),
                     wheel->linux_min_driver.text, *m.query.driver_text,
                     v.driver_cuda ? v.driver_cuda->str() : "an unknown version", alternative, ""));
  }
  for (const compat::MachineGpu& gpu : m.facts.gpus) {
    if (gpu.cc && *gpu.cc < wheel->cc_min) {
      std::string remedy = "No JAX CUDA wheel in the compatibility matrix supports this GPU.";
      for (const compat::JaxWheel& other : matrix.jax) {
        if (*gpu.cc >= other.cc_min && other.wheel != wheel->wheel) {
          remedy = fmt::format("Install the JAX wheel that supports it: pip install -U \"{}\"",
                               other.wheel);
          break;
        }
      }
      findings.push_back(make_finding(codes::k_fw_gpu_not_covered, gpu.index, who, gpu.name,
                                      sm_name(*gpu.cc),
                                      fmt::format("sm_{}{} and newer", wheel->cc_min.major_number(),
                                                  wheel->cc_min.minor_number()),
                                      fmt::format("the matrix data for {}", wheel->wheel), remedy));
    }
  }
  const ResolvedLibrary* cudnn = resolved(fw, "cudnn");
  const std::optional<Version> loaded =
      cudnn != nullptr ? release_of(cudnn->version) : std::nullopt;
  const std::optional<Version> low = release_of(wheel->cudnn_min);
  const std::optional<Version> high = release_of(wheel->cudnn_below);
  if (loaded && low && high && loaded->parts().size() > 1 && (*loaded < *low || *loaded >= *high)) {
    findings.push_back(make_finding(
        codes::k_fw_cudnn_mismatch, std::nullopt, who, cudnn->version, cudnn->path,
        fmt::format(">= {} and < {}", wheel->cudnn_min, wheel->cudnn_below),
        cudnn_remedy(fw, *cudnn, fmt::format(">={},<{}", wheel->cudnn_min, wheel->cudnn_below))));
  }
}

/// The pip wheel that carries a CUDA library of `family` for CUDA `major` ("" when none does).
std::string wheel_of(std::string_view family, int major) {
  static const std::pair<std::string_view, std::string_view> k_wheels[] = {
      {"cudart", "nvidia-cuda-runtime"}, {"cublas", "nvidia-cublas"},
      {"cublasLt", "nvidia-cublas"},     {"cudnn", "nvidia-cudnn"},
      {"cufft", "nvidia-cufft"},         {"curand", "nvidia-curand"},
      {"cusparse", "nvidia-cusparse"},   {"cusolver", "nvidia-cusolver"},
      {"nvrtc", "nvidia-cuda-nvrtc"},    {"nvJitLink", "nvidia-nvjitlink"},
      {"nccl", "nvidia-nccl"},           {"nvinfer", "tensorrt"}};
  for (const auto& [name, wheel] : k_wheels) {
    if (family == name ||
        (family.starts_with(name) && family.size() > name.size() && family[name.size()] == '_')) {
      return fmt::format("{}-cu{}{}", wheel, major, wheel == "tensorrt" ? "-libs" : "");
    }
  }
  return "";
}

int soname_major(std::string_view soname) {
  const size_t so = soname.find(".so.");
  if (so == std::string_view::npos) {
    return 0;
  }
  const std::optional<Version> v = release_of(soname.substr(so + 4));
  return v ? v->major_number() : 0;
}

/// "CUDA 12 and cuDNN 9": the majors an ONNX Runtime, TensorRT or CuPy build needs.
std::string needs_text(const FrameworkInstall& fw) {
  std::vector<std::string> parts;
  if (fw.cuda) {
    const std::optional<Version> cuda = Version::parse(*fw.cuda);
    parts.push_back(fmt::format("CUDA {}", cuda ? std::to_string(cuda->major_number()) : *fw.cuda));
  }
  std::set<std::string> seen;
  for (const ResolvedLibrary& lib : fw.libraries) {
    const int major = soname_major(lib.soname);
    std::string part;
    if (lib.family == "cudnn" && major > 0) {
      part = fmt::format("cuDNN {}", major);
    } else if (lib.family == "nvinfer" && major > 0) {
      part = fmt::format("TensorRT {}", major);
    }
    if (!part.empty() && seen.insert(part).second) {
      parts.push_back(part);
    }
  }
  if (parts.empty()) {
    return "its GPU libraries";
  }
  std::string text = parts.front();
  for (size_t i = 1; i < parts.size(); ++i) {
    text += (i + 1 == parts.size() ? " and " : ", ") + parts[i];
  }
  return text;
}

/// The CUDA major of `fw`'s build, else 12 (the wheels' default today).
int cuda_major(const FrameworkInstall& fw) {
  const std::optional<Version> cuda = fw.cuda ? Version::parse(*fw.cuda) : std::nullopt;
  return cuda ? cuda->major_number() : 12;
}

/// "pip install nvidia-cublas-cu12 nvidia-cudnn-cu12" for the libraries in `libs`.
std::string wheels_command(const std::vector<const ResolvedLibrary*>& libs, int major) {
  std::vector<std::string> wheels;
  for (const ResolvedLibrary* lib : libs) {
    const std::string wheel = wheel_of(lib->family, major);
    if (!wheel.empty() && std::find(wheels.begin(), wheels.end(), wheel) == wheels.end()) {
      wheels.push_back(wheel);
    }
  }
  return wheels.empty() ? "" : fmt::format("pip install {}", fmt::join(wheels, " "));
}

/// How the environment's own copies of the libraries can be made to load, per framework.
std::string off_path_remedy(const FrameworkInstall& fw, const std::string& dirs) {
  if (fw.name == "onnxruntime") {
    const std::optional<Version> release = release_of(fw.version);
    const bool preload_dlls = release && *release >= Version({1, 19});
    return fmt::format("{}import torch before onnxruntime (torch preloads the same nvidia-* "
                       "wheels), or add {} to LD_LIBRARY_PATH.",
                       preload_dlls ? "Call onnxruntime.preload_dlls() before creating the "
                                      "InferenceSession (onnxruntime-gpu >= 1.19), or "
                                    : "Upgrade to onnxruntime-gpu >= 1.19 and call "
                                      "onnxruntime.preload_dlls() before creating the "
                                      "InferenceSession, or ",
                       dirs);
  }
  if (fw.name == "cupy") {
    return fmt::format("Upgrade to CuPy >= 14, which loads the environment's nvidia-* wheels, or "
                       "add {} to LD_LIBRARY_PATH.",
                       dirs);
  }
  return fmt::format("Add {} to LD_LIBRARY_PATH, or import torch before tensorrt (torch preloads "
                     "the same nvidia-* wheels).",
                     dirs);
}

/// What to install when the libraries are nowhere, per framework.
std::string missing_remedy(const FrameworkInstall& fw,
                           const std::vector<const ResolvedLibrary*>& missing) {
  const int major = cuda_major(fw);
  const std::string wheels = wheels_command(missing, major);
  if (fw.name == "onnxruntime") {
    return fmt::format("Install them: {} and call onnxruntime.preload_dlls() before creating the "
                       "InferenceSession (onnxruntime-gpu >= 1.19), or install the CUDA {} "
                       "toolkit and cuDNN system-wide where the loader looks; or install an "
                       "onnxruntime-gpu built for the CUDA this machine has (on PyPI, 1.19 and "
                       "later are built for CUDA 12 and cuDNN 9).",
                       wheels.empty() ? "the CUDA " + std::to_string(major) + " libraries" : wheels,
                       major);
  }
  if (fw.name == "cupy") {
    return fmt::format("Install the CUDA {0} libraries where the loader looks (the CUDA {0} "
                       "toolkit, its lib64 in /etc/ld.so.conf.d or LD_LIBRARY_PATH), or with "
                       "CuPy >= 14: pip install \"{1}[ctk]\"; or install the CuPy wheel for the "
                       "CUDA this machine has.",
                       major, fw.distribution);
  }
  return fmt::format("Install them: {} and add their lib directories to LD_LIBRARY_PATH, or "
                     "install the CUDA {} toolkit and cuDNN system-wide where the loader looks; "
                     "or install the TensorRT wheel for the CUDA this machine has.",
                     wheels.empty() ? "the CUDA " + std::to_string(major) + " libraries" : wheels,
                     major);
}

/// ONNX Runtime, TensorRT, CuPy: the driver against the build's CUDA, then every library it needs
/// that the loader does not find, split into those this environment has elsewhere and those it
/// has nowhere.
void gpu_library_rules(const compat::Matrix& matrix, const Machine& m, const PythonEnvironment& env,
                       const FrameworkInstall& fw, std::vector<Finding>& findings) {
  if (!fw.cuda) {
    return; // CPU-only (onnxruntime) or unknown: nothing it needs from CUDA is known
  }
  const std::string who = subject(env, fw);
  if (const std::optional<Version> cuda = Version::parse(*fw.cuda); cuda && has_driver(m.query)) {
    // The driver's own CUDA (from the driver version where NVML did not say it) names the build
    // to install instead.
    const std::optional<Version> driver_cuda =
        compat::judge_driver(matrix, m.query.driver, m.query.driver_cuda, *cuda).driver_cuda;
    const std::string alternative =
        driver_cuda ? fmt::format("{} built for CUDA {}",
                                  fw.distribution.substr(0, fw.distribution.find("-cu")),
                                  driver_cuda->major_number())
                    : std::string("a build for the CUDA this driver supports");
    driver_rule(matrix, m, who, *cuda, alternative, findings);
  }
  std::vector<const ResolvedLibrary*> off_path;
  std::vector<const ResolvedLibrary*> missing;
  for (const ResolvedLibrary& lib : fw.libraries) {
    if (lib.path.empty()) {
      (lib.elsewhere.empty() ? missing : off_path).push_back(&lib);
    }
  }
  const std::string searched =
      fw.runpath.empty() ? std::string("LD_LIBRARY_PATH, loader cache, /lib, /usr/lib")
                         : fmt::format("LD_LIBRARY_PATH, {}, loader cache, /lib, /usr/lib",
                                       fmt::join(fw.runpath, ":"));
  auto sonames = [](const std::vector<const ResolvedLibrary*>& libs) {
    std::vector<std::string> names;
    for (const ResolvedLibrary* lib : libs) {
      names.push_back(lib->soname);
    }
    return fmt::format("{}", fmt::join(names, ", "));
  };
  if (!missing.empty()) {
    findings.push_back(make_finding(codes::k_fw_gpu_libraries_missing, std::nullopt, who,
                                    needs_text(fw), sonames(missing), searched,
                                    missing_remedy(fw, missing)));
  }
  if (!off_path.empty()) {
    std::vector<std::string> copies;
    std::vector<std::string> dirs;
    for (const ResolvedLibrary* lib : off_path) {
      copies.push_back(lib->elsewhere.front());
      const std::string dir = directory_of(lib->elsewhere.front());
      if (std::find(dirs.begin(), dirs.end(), dir) == dirs.end()) {
        dirs.push_back(dir);
      }
    }
    findings.push_back(make_finding(codes::k_fw_gpu_libraries_off_path, std::nullopt, who,
                                    needs_text(fw), sonames(off_path),
                                    fmt::format("{}", fmt::join(copies, ", ")), searched,
                                    off_path_remedy(fw, fmt::format("{}", fmt::join(dirs, ":")))));
  }
}

/// ONNX Runtime, TensorRT and CuPy: their missing libraries are judged together.
bool gpu_library_framework(const FrameworkInstall& fw) {
  return fw.name == "onnxruntime" || fw.name == "tensorrt" || fw.name == "cupy";
}

std::string library_label(std::string_view family) {
  if (family == "cudnn") {
    return "cuDNN";
  }
  if (family == "cublas") {
    return "cuBLAS";
  }
  if (family == "cudart") {
    return "CUDA runtime";
  }
  if (family == "nccl") {
    return "NCCL";
  }
  return std::string(family);
}

/// The command that reinstalls the framework with its own CUDA libraries.
std::string reinstall_command(const compat::Matrix& matrix, const FrameworkInstall& fw) {
  if (fw.name == "pytorch") {
    std::string tag = local_tag(fw.version);
    if (!tag.starts_with("cu") && fw.cuda) {
      if (const std::optional<Version> cuda = Version::parse(*fw.cuda)) {
        tag = fmt::format("cu{}{}", cuda->major_number(), cuda->minor_number());
      }
    }
    const std::optional<Version> release = release_of(fw.version);
    return fmt::format("pip install --force-reinstall torch=={} --index-url "
                       "https://download.pytorch.org/whl/{}",
                       release ? release->str() : fw.version, tag);
  }
  if (fw.name == "tensorflow") {
    return fmt::format("pip install --force-reinstall \"tensorflow[and-cuda]=={}\"", fw.version);
  }
  (void)matrix;
  return fmt::format("pip install --force-reinstall \"jax[cuda{}]=={}\"", fw.cuda.value_or("12"),
                     fw.version);
}

} // namespace

std::string env_label(const PythonEnvironment& env) {
  return env.prefix.empty() ? env.interpreter : env.prefix;
}

std::string framework_label(std::string_view name) {
  if (name == "pytorch") {
    return "PyTorch";
  }
  if (name == "tensorflow") {
    return "TensorFlow";
  }
  if (name == "jax") {
    return "JAX";
  }
  if (name == "onnxruntime") {
    return "ONNX Runtime";
  }
  if (name == "tensorrt") {
    return "TensorRT";
  }
  if (name == "cupy") {
    return "CuPy";
  }
  return std::string(name);
}

std::string subject(const PythonEnvironment& env, const FrameworkInstall& fw) {
  return fmt::format("{} {} in {}", framework_label(fw.name),
                     fw.version.empty() ? "(version unknown)" : fw.version, env_label(env));
}

std::string pytorch_command(const compat::PytorchWheel& wheel) {
  return fmt::format("pip install torch=={}.* --index-url https://download.pytorch.org/whl/{}",
                     wheel.version.str(), wheel.wheel);
}

const compat::PytorchWheel* best_pytorch_wheel(const compat::Matrix& matrix,
                                               const compat::MachineQuery& query,
                                               const std::optional<Version>& release) {
  const compat::PytorchWheel* best = nullptr;
  const compat::PytorchWheel* best_same_release = nullptr;
  auto newer = [](const compat::PytorchWheel* a, const compat::PytorchWheel* b) {
    return b == nullptr || (a->version != b->version ? a->version > b->version : a->cuda > b->cuda);
  };
  for (const compat::PytorchWheel& wheel : matrix.pytorch) {
    const compat::WheelVerdict v = compat::fit_pytorch_wheel(matrix, wheel, query);
    if (v.fit != compat::WheelFit::fits && v.fit != compat::WheelFit::fits_ptx_jit) {
      continue;
    }
    if (newer(&wheel, best)) {
      best = &wheel;
    }
    if (release && wheel.version == release->truncated(2) && newer(&wheel, best_same_release)) {
      best_same_release = &wheel;
    }
  }
  return best_same_release != nullptr ? best_same_release : best;
}

std::vector<Finding> framework_findings(const SystemSnapshot& snapshot,
                                        const compat::Matrix& matrix, const PythonEnvironment& env,
                                        const FrameworkInstall& fw) {
  std::vector<Finding> findings;
  const Machine m = machine_of(snapshot, matrix);
  if (fw.name == "pytorch") {
    pytorch_rules(snapshot, matrix, m, env, fw, findings);
  } else if (fw.name == "tensorflow") {
    tensorflow_rules(matrix, m, env, fw, findings);
  } else if (fw.name == "jax") {
    jax_rules(matrix, m, env, fw, findings);
  } else if (fw.name == "onnxruntime" || fw.name == "tensorrt" || fw.name == "cupy") {
    gpu_library_rules(matrix, m, env, fw, findings);
  }
  return findings;
}

std::vector<Finding> library_findings(const SystemSnapshot& snapshot, const compat::Matrix& matrix,
                                      const PythonEnvironment& env, const FrameworkInstall& fw) {
  std::vector<Finding> findings;
  const std::string who = subject(env, fw);
  for (const ResolvedLibrary& lib : fw.libraries) {
    const std::string label = library_label(lib.family);
    if (lib.path.empty() && !gpu_library_framework(fw)) {
      findings.push_back(make_finding(
          codes::k_fw_library_missing, std::nullopt, who, lib.soname, label,
          fw.runpath.empty() ? std::string("LD_LIBRARY_PATH, loader cache, /lib, /usr/lib")
                             : fmt::format("LD_LIBRARY_PATH, {}, loader cache, /lib, /usr/lib",
                                           fmt::join(fw.runpath, ":")),
          fmt::format("Reinstall it with its CUDA libraries: {}", reinstall_command(matrix, fw))));
      continue;
    }
    if (lib.path.empty()) {
      continue; // fw.gpu_libraries_missing / fw.gpu_libraries_off_path, from framework_findings
    }
    if (lib.via == "LD_LIBRARY_PATH") {
      if (!lib.own_path.empty() && lib.own_path != lib.path) {
        findings.push_back(
            make_finding(codes::k_fw_library_shadowed, std::nullopt, who, label,
                         lib.version.empty() ? "(version unknown)" : lib.version, lib.path,
                         lib.own_version.empty() ? "(version unknown)" : lib.own_version,
                         lib.own_path, directory_of(lib.path)));
      }
      continue;
    }
    // Other copies on the system (not in a Python environment) that this framework does not load.
    const LibraryFamily* family = snapshot.library(lib.family);
    if (family == nullptr || (lib.via != "RUNPATH" && lib.via != "RPATH" && lib.via != "preload")) {
      continue;
    }
    std::set<std::string> seen{lib.real_path};
    std::vector<std::string> others;
    for (const LibraryCopy& copy : family->copies) {
      const std::string real = copy.real_path.empty() ? copy.path : copy.real_path;
      if (copy.origin == "pip" || !seen.insert(real).second) {
        continue;
      }
      const std::string version = copy.reported_version.value_or(copy.version);
      others.push_back(fmt::format("{} {} at {}", label,
                                   version.empty() ? "(version unknown)" : version, copy.path));
    }
    if (!others.empty()) {
      findings.push_back(make_finding(codes::k_fw_system_copy_unused, std::nullopt, who, label,
                                      lib.version.empty() ? "(version unknown)" : lib.version,
                                      lib.path, fmt::format("{}", fmt::join(others, "; "))));
    }
  }
  return findings;
}

bool cpu_only_build(const PythonEnvironment& env, std::string_view framework) {
  return std::any_of(
      env.frameworks.begin(), env.frameworks.end(),
      [framework](const FrameworkInstall& fw) { return fw.name == framework && !fw.cuda; });
}

std::vector<Finding> import_findings(const SystemSnapshot& snapshot, const PythonEnvironment& env,
                                     const FrameworkImport& result) {
  std::vector<Finding> findings;
  const std::string who =
      fmt::format("{}{} in {}", framework_label(result.framework),
                  result.version.empty() ? "" : " " + result.version, env_label(env));
  if (result.failure) {
    const ChildFailure& f = *result.failure;
    if (f.kind == ChildFailureKind::cancelled) {
      return findings; // the user stopped the run: the snapshot's probe issues say so
    }
    if (f.kind == ChildFailureKind::timeout) {
      findings.push_back(make_finding(codes::k_fw_import_hung, std::nullopt, who,
                                      fmt::format("{:g}", f.timeout_s)));
    } else {
      std::string detail = f.detail.empty() ? std::string(to_string(f.kind)) : f.detail;
      const std::string& tail = f.stderr_tail;
      if (!tail.empty()) {
        std::string last = tail;
        while (!last.empty() && last.back() == '\n') {
          last.pop_back();
        }
        last = last.substr(last.rfind('\n') == std::string::npos ? 0 : last.rfind('\n') + 1);
        detail += fmt::format("; last output: {}", last);
      }
      findings.push_back(make_finding(codes::k_fw_import_crashed, std::nullopt, who, detail));
    }
    return findings;
  }
  if (!result.error.empty()) {
    findings.push_back(make_finding(result.gpu_available.value_or(false)
                                        ? codes::k_fw_import_op_failed
                                        : codes::k_fw_import_failed,
                                    std::nullopt, who, result.error));
    return findings;
  }
  const bool machine_has_gpu = !snapshot.gpus.empty();
  // A CPU-only build sees no GPU by design: the layout's judges say so; the import adds no
  // failure.
  if (machine_has_gpu && result.gpu_available == false && !cpu_only_build(env, result.framework)) {
    findings.push_back(
        make_finding(codes::k_fw_import_no_gpu, std::nullopt, who,
                     fmt::format("device count {}", result.device_count.value_or(0))));
  } else if (result.op_ok == false) {
    findings.push_back(make_finding(codes::k_fw_import_op_failed, std::nullopt, who,
                                    "the result of 64 additions was wrong"));
  }
  return findings;
}

} // namespace gpucheck::compat::fw
