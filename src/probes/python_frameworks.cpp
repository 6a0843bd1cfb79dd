// PyTorch, TensorFlow, JAX, ONNX Runtime, TensorRT and CuPy in one Python environment, from files
// only, and the CUDA libraries each would load.
//
// ONNX Runtime's CUDA provider (onnxruntime/capi/libonnxruntime_providers_cuda.so) and TensorRT's
// libnvinfer.so.N are read for their DT_NEEDED and RUNPATH; each CUDA, cuDNN and TensorRT library
// they need is resolved as the loader would, and a library it does not find is looked for in the
// environment's nvidia-* wheels (found there: the loader does not search them unless something
// preloads them). CuPy loads its libraries by SONAME: the set follows its wheel's CUDA major.
//
// Build facts: torch/version.py (cuda, git_version), TensorFlow's
// tensorflow/python/platform/build_info.py (cuda_version, cudnn_version, is_cuda_build,
// cuda_compute_capabilities), the JAX CUDA plugin distributions (jax-cuda12-plugin, ...).
// Library resolution follows the loader: LD_LIBRARY_PATH first, then the DT_RUNPATH of the
// framework's CUDA object (torch/lib/libtorch_cuda.so, libtensorflow_framework.so.2, the JAX PJRT
// plugin), then the loader cache and the default directories. When that object has no readable
// RUNPATH, the wheel layout is assumed: site-packages/nvidia/*/lib (both nvidia/<lib>/lib and the
// CUDA 13 nvidia/cu13/lib), which is also where torch's own preload looks.
// An object with DT_RPATH and no DT_RUNPATH (older conda builds) has it searched before
// LD_LIBRARY_PATH, as the loader does.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "probes/elf_soname.hpp"
#include "probes/library_names.hpp"
#include "probes/paths.hpp"
#include "probes/python_envs.hpp"

namespace gpucheck::probes {

namespace {

const PythonDistribution* find_dist(const PythonEnvironment& env, std::string_view name) {
  for (const PythonDistribution& dist : env.distributions) {
    if (dist.name == name) {
      return &dist;
    }
  }
  return nullptr;
}

/// The site-packages directory that holds `package` (first in import order), else "".
std::string site_of(const Sysroot& root, const PythonEnvironment& env, std::string_view package) {
  for (const std::string& site : env.site_packages) {
    if (root.is_directory(join_path(site, package))) {
      return site;
    }
  }
  return "";
}

/// A Python literal on the right of an assignment: 'text', "text", None, True, False, [...].
std::string literal_text(std::string_view value) {
  while (!value.empty() && (value.back() == ' ' || value.back() == '\r' || value.back() == ',')) {
    value.remove_suffix(1);
  }
  while (!value.empty() && value.front() == ' ') {
    value.remove_prefix(1);
  }
  if (value.size() >= 2 && (value.front() == '\'' || value.front() == '"') &&
      value.back() == value.front()) {
    return std::string(value.substr(1, value.size() - 2));
  }
  return std::string(value);
}

/// Quoted keys with a value anywhere in the text: dict entries `'name': value` (on one line or
/// many, as TensorFlow's generated build_info.py has them) and `d['name'] = value`.
void quoted_key_values(const std::string& text,
                       std::vector<std::pair<std::string, std::string>>& out) {
  size_t i = 0;
  while (i < text.size()) {
    const char quote = text[i];
    if (quote != '\'' && quote != '"') {
      ++i;
      continue;
    }
    const size_t close = text.find(quote, i + 1);
    if (close == std::string::npos) {
      return;
    }
    size_t k = close + 1;
    while (k < text.size() && text[k] == ' ') {
      ++k;
    }
    if (k < text.size() && text[k] == ']') { // d['name'] = value
      ++k;
      while (k < text.size() && text[k] == ' ') {
        ++k;
      }
      if (k + 1 >= text.size() || text[k] != '=' || text[k + 1] == '=') {
        i = close + 1;
        continue;
      }
    } else if (k >= text.size() || text[k] != ':') {
      i = close + 1;
      continue;
    }
    const std::string key = text.substr(i + 1, close - i - 1);
    size_t v = k + 1;
    while (v < text.size() && text[v] == ' ') {
      ++v;
    }
    size_t end = v;
    if (v < text.size() && (text[v] == '\'' || text[v] == '"')) {
      end = text.find(text[v], v + 1);
      end = end == std::string::npos ? text.size() : end + 1;
    } else if (v < text.size() && text[v] == '[') {
      end = text.find(']', v);
      end = end == std::string::npos ? text.size() : end + 1;
    } else {
      end = std::min(text.find_first_of(",})\n", v), text.size());
    }
    out.emplace_back(key, literal_text(std::string_view(text).substr(v, end - v)));
    i = end;
  }
}

/// Assignments in a small generated Python file: `name = value` and `name: T = value` at the
/// start of a line (torch/version.py), and the quoted keys of quoted_key_values.
std::vector<std::pair<std::string, std::string>> python_assignments(const std::string& text) {
  std::vector<std::pair<std::string, std::string>> out;
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = std::min(text.find('\n', start), text.size());
    const std::string_view line(text.data() + start, end - start);
    start = end + 1;
    if (line.empty() ||
        (std::isalpha(static_cast<unsigned char>(line.front())) == 0 && line.front() != '_')) {
      continue;
    }
    const size_t eq = line.find('=');
    if (eq == std::string_view::npos || (eq + 1 < line.size() && line[eq + 1] == '=')) {
      continue;
    }
    std::string_view lhs = line.substr(0, eq);
    lhs = lhs.substr(0, lhs.find(':'));
    while (!lhs.empty() && lhs.back() == ' ') {
      lhs.remove_suffix(1);
    }
    if (lhs.find_first_of("[( ") == std::string_view::npos) {
      out.emplace_back(std::string(lhs), literal_text(line.substr(eq + 1)));
    }
  }
  quoted_key_values(text, out);
  return out;
}

std::optional<std::string> value_of(const std::vector<std::pair<std::string, std::string>>& kv,
                                    std::string_view key) {
  for (const auto& [k, v] : kv) {
    if (k == key) {
      return v;
    }
  }
  return std::nullopt;
}

/// "['sm_60', 'compute_90']" -> {"sm_60", "compute_90"}.
std::vector<std::string> literal_list(const std::string& value) {
  std::vector<std::string> out;
  std::string current;
  bool quoted = false;
  for (const char c : value) {
    if (c == '\'' || c == '"') {
      if (quoted && !current.empty()) {
        out.push_back(current);
      }
      current.clear();
      quoted = !quoted;
    } else if (quoted) {
      current.push_back(c);
    }
  }
  return out;
}

/// The local version tag: "2.11.0+cu130" -> "cu130"; "" when none.
std::string local_tag(const std::string& version) {
  const size_t plus = version.find('+');
  return plus == std::string::npos ? "" : version.substr(plus + 1);
}

/// "cu130" -> "13.0", "cu118" -> "11.8"; nullopt for anything else.
std::optional<std::string> cuda_from_tag(const std::string& tag) {
  if (tag.size() < 5 || !tag.starts_with("cu") ||
      !std::all_of(tag.begin() + 2, tag.end(),
                   [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; })) {
    return std::nullopt;
  }
  const std::string digits = tag.substr(2);
  return digits.substr(0, digits.size() - 1) + "." + digits.substr(digits.size() - 1);
}

/// The number `text` starts with, 0 when none; a number too large for a version part (a
/// version.py with cuda='99999999999' overflowed here) is 0 as well.
int leading_int(std::string_view text) {
  constexpr int k_max = 1000000;
  int value = 0;
  for (const char c : text) {
    if (std::isdigit(static_cast<unsigned char>(c)) == 0) {
      break;
    }
    value = value * 10 + (c - '0');
    if (value > k_max) {
      return 0;
    }
  }
  return value;
}

const LibraryFamilySpec* spec_of(std::string_view family) {
  for (const LibraryFamilySpec& spec : library_family_specs()) {
    if (spec.family == family) {
      return &spec;
    }
  }
  return nullptr;
}

/// Every site-packages/nvidia/*/lib directory of the environment, in import order.
std::vector<std::string> wheel_lib_dirs(const Sysroot& root, const PythonEnvironment& env) {
  std::vector<std::string> dirs;
  for (const std::string& site : env.site_packages) {
    const std::string nvidia = join_path(site, "nvidia");
    for (const std::string& wheel : list_resolved(root, nvidia)) {
      const std::string lib = join_path(join_path(nvidia, wheel), "lib");
      if (root.is_directory(lib)) {
        dirs.push_back(lib);
      }
    }
  }
  return dirs;
}

/// A DT_RUNPATH / DT_RPATH value's absolute directories, $ORIGIN replaced by `origin`.
std::vector<std::string> expand_runpath(const std::string& raw, const std::string& origin) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= raw.size()) {
    const size_t end = std::min(raw.find(':', start), raw.size());
    std::string entry = raw.substr(start, end - start);
    start = end + 1;
    for (const char* token : {"${ORIGIN}", "$ORIGIN"}) {
      // Search on after the replacement: an origin that itself holds "$ORIGIN" (a venv
      // path may) expanded without end.
      for (size_t at = entry.find(token); at != std::string::npos;
           at = entry.find(token, at + origin.size())) {
        entry.replace(at, std::string_view(token).size(), origin);
      }
    }
    if (entry.starts_with('/')) {
      out.push_back(normalize_path(entry));
    }
  }
  return out;
}

class FrameworkReader {
public:
  FrameworkReader(const Sysroot& root, const PythonEnvironment& env,
                  const std::optional<std::string>& ld_library_path,
                  const std::vector<LdconfigEntry>& loader_cache)
      : m_root(root), m_env(env), m_ld_library_path(split_library_path(ld_library_path)),
        m_loader_cache(loader_cache) {}

  std::vector<FrameworkInstall> run() {
    std::vector<FrameworkInstall> out;
    if (std::optional<FrameworkInstall> torch = pytorch()) {
      out.push_back(std::move(*torch));
    }
    if (std::optional<FrameworkInstall> tf = tensorflow()) {
      out.push_back(std::move(*tf));
    }
    if (std::optional<FrameworkInstall> jax = jax_install()) {
      out.push_back(std::move(*jax));
    }
    for (FrameworkInstall& framework : out) {
      if (framework.cuda) {
        resolve(framework);
      }
    }
    if (std::optional<FrameworkInstall> ort = onnxruntime()) {
      out.push_back(std::move(*ort));
    }
    if (std::optional<FrameworkInstall> trt = tensorrt()) {
      out.push_back(std::move(*trt));
    }
    if (std::optional<FrameworkInstall> cupy = cupy_install()) {
      out.push_back(std::move(*cupy));
    }
    return out;
  }

private:
  std::optional<FrameworkInstall> pytorch() const {
    const PythonDistribution* dist = find_dist(m_env, "torch");
    const std::string site = site_of(m_root, m_env, "torch");
    if (dist == nullptr && site.empty()) {
      return std::nullopt;
    }
    FrameworkInstall fw;
    fw.name = "pytorch";
    fw.distribution = "torch";
    fw.version = dist != nullptr ? dist->version : "";
    fw.package_dir = join_path(site.empty() ? m_env.site_packages.front() : site, "torch");
    const std::optional<std::string> version_py =
        read_resolved(m_root, join_path(fw.package_dir, "version.py"));
    if (version_py) {
      const auto kv = python_assignments(*version_py);
      // PyPI's wheels carry no local tag in their metadata ("2.11.0"); version.py has the
      // build's own ("2.11.0+cu130"): keep that when it is the same release.
      const std::string built = value_of(kv, "__version__").value_or("");
      if (fw.version.empty() || built.starts_with(fw.version + "+")) {
        fw.version = built.empty() ? fw.version : built;
      }
      if (const std::optional<std::string> cuda = value_of(kv, "cuda"); cuda && *cuda != "None") {
        fw.cuda = cuda;
      }
      fw.git_version = value_of(kv, "git_version");
    } else {
      fw.cuda = cuda_from_tag(local_tag(fw.version)); // no build file: the wheel tag says it
    }
    for (const char* object : {"lib/libtorch_cuda.so", "lib/libtorch_global_deps.so"}) {
      if (stat_path(m_root, join_path(fw.package_dir, object)).is_regular) {
        fw.loader_object = join_path(fw.package_dir, object);
        break;
      }
    }
    return fw;
  }

  std::optional<FrameworkInstall> tensorflow() const {
    const PythonDistribution* dist = nullptr;
    for (const char* name :
         {"tensorflow", "tensorflow-gpu", "tf-nightly", "intel-tensorflow", "tensorflow-cpu"}) {
      if ((dist = find_dist(m_env, name)) != nullptr) {
        break;
      }
    }
    if (dist == nullptr) {
      return std::nullopt;
    }
    FrameworkInstall fw;
    fw.name = "tensorflow";
    fw.distribution = dist->name;
    fw.version = dist->version;
    const std::string site = site_of(m_root, m_env, "tensorflow");
    fw.package_dir = join_path(site.empty() ? m_env.site_packages.front() : site, "tensorflow");
    const std::optional<std::string> build_info =
        read_resolved(m_root, join_path(fw.package_dir, "python/platform/build_info.py"));
    if (build_info) {
      const auto kv = python_assignments(*build_info);
      const bool cuda_build = value_of(kv, "is_cuda_build").value_or("False") == "True";
      if (cuda_build && dist->name != "tensorflow-cpu") {
        fw.cuda = value_of(kv, "cuda_version");
        fw.cudnn = value_of(kv, "cudnn_version");
        if (const std::optional<std::string> caps = value_of(kv, "cuda_compute_capabilities")) {
          fw.archs = literal_list(*caps);
        }
      }
    }
    for (const char* object : {"libtensorflow_framework.so.2", "libtensorflow_cc.so.2",
                               "python/_pywrap_tensorflow_internal.so"}) {
      if (stat_path(m_root, join_path(fw.package_dir, object)).is_regular) {
        fw.loader_object = join_path(fw.package_dir, object);
        break;
      }
    }
    return fw;
  }

  std::optional<FrameworkInstall> jax_install() const {
    const PythonDistribution* jaxlib = find_dist(m_env, "jaxlib");
    const PythonDistribution* jax = find_dist(m_env, "jax");
    if (jaxlib == nullptr && jax == nullptr) {
      return std::nullopt;
    }
    FrameworkInstall fw;
    fw.name = "jax";
    fw.distribution = jaxlib != nullptr ? "jaxlib" : "jax";
    fw.version = jaxlib != nullptr ? jaxlib->version : jax->version;
    const std::string site = site_of(m_root, m_env, "jaxlib");
    fw.package_dir = join_path(site.empty() ? m_env.site_packages.front() : site, "jaxlib");
    int cuda_major = 0;
    for (const PythonDistribution& dist : m_env.distributions) {
      if (!dist.name.starts_with("jax-cuda")) {
        continue;
      }
      fw.plugins.push_back(fmt::format("{} {}", dist.name, dist.version));
      cuda_major = std::max(cuda_major, leading_int(std::string_view(dist.name).substr(8)));
    }
    if (cuda_major > 0) {
      fw.cuda = std::to_string(cuda_major); // the plugin's CUDA major: jax[cudaNN]
      for (const std::string& site_dir : m_env.site_packages) {
        const std::string plugin = join_path(
            site_dir, fmt::format("jax_plugins/xla_cuda{}/xla_cuda_plugin.so", cuda_major));
        if (stat_path(m_root, plugin).is_regular) {
          fw.loader_object = plugin;
          break;
        }
      }
    }
    return fw;
  }

  /// onnxruntime-gpu (or a CPU-only onnxruntime): its build info, and the CUDA and cuDNN
  /// libraries its CUDA provider needs (DT_NEEDED), resolved as the loader resolves them when
  /// onnxruntime dlopens the provider.
  std::optional<FrameworkInstall> onnxruntime() const {
    const PythonDistribution* dist = find_dist(m_env, "onnxruntime-gpu");
    if (dist == nullptr) {
      dist = find_dist(m_env, "onnxruntime");
    }
    if (dist == nullptr) {
      return std::nullopt;
    }
    FrameworkInstall fw;
    fw.name = "onnxruntime";
    fw.distribution = dist->name;
    fw.version = dist->version;
    const std::string site = site_of(m_root, m_env, "onnxruntime");
    fw.package_dir = join_path(site.empty() ? m_env.site_packages.front() : site, "onnxruntime");
    if (dist->name != "onnxruntime-gpu") {
      return fw; // the CPU package: no CUDA provider, nothing to load
    }
    if (const std::optional<std::string> info =
            read_resolved(m_root, join_path(fw.package_dir, "capi/build_and_package_info.py"))) {
      const auto kv = python_assignments(*info);
      if (const std::optional<std::string> cuda = value_of(kv, "cuda_version");
          cuda && leading_int(*cuda) > 0) {
        fw.cuda = cuda;
      }
      if (const std::optional<std::string> cudnn = value_of(kv, "cudnn_version");
          cudnn && leading_int(*cudnn) > 0) {
        fw.cudnn = cudnn;
      }
    }
    for (const char* provider :
         {"libonnxruntime_providers_cuda.so", "libonnxruntime_providers_tensorrt.so"}) {
      if (stat_path(m_root, join_path(fw.package_dir, fmt::format("capi/{}", provider)))
              .is_regular) {
        fw.plugins.emplace_back(provider);
      }
    }
    const std::string provider = join_path(fw.package_dir, "capi/libonnxruntime_providers_cuda.so");
    if (stat_path(m_root, provider).is_regular) {
      fw.loader_object = provider;
    }
    std::vector<std::string> defaults;
    if (fw.cuda) { // no readable provider: what every CUDA provider build needs
      const int major = leading_int(*fw.cuda);
      defaults = {cudart_soname(major), fmt::format("libcublasLt.so.{}", major),
                  fmt::format("libcublas.so.{}", major)};
      if (fw.cudnn) {
        defaults.push_back(fmt::format("libcudnn.so.{}", leading_int(*fw.cudnn)));
      }
    }
    resolve_needed(fw, defaults, {});
    return fw;
  }

  /// A TensorRT wheel (tensorrt, tensorrt-cu12, tensorrt-cu12-libs, tensorrt-libs): its
  /// libnvinfer.so.N (tensorrt_libs/, or tensorrt/ in the TensorRT 8 wheels) and the CUDA and
  /// cuDNN libraries that needs.
  std::optional<FrameworkInstall> tensorrt() const {
    const PythonDistribution* dist = nullptr;
    for (const PythonDistribution& candidate : m_env.distributions) {
      // The Python bindings' distribution first (tensorrt-cu12-bindings, tensorrt-cu12), else
      // the libraries' (tensorrt-cu12-libs).
      if (tensorrt_dist(candidate.name) && (dist == nullptr || dist->name.ends_with("-libs"))) {
        dist = &candidate;
      }
    }
    if (dist == nullptr) {
      return std::nullopt;
    }
    FrameworkInstall fw;
    fw.name = "tensorrt";
    fw.distribution = dist->name;
    fw.version = dist->version;
    std::string libnvinfer;
    for (const std::string& site : m_env.site_packages) {
      for (const char* dir : {"tensorrt_libs", "tensorrt"}) {
        const std::string package = join_path(site, dir);
        for (const std::string& name : list_resolved(m_root, package)) {
          if (libnvinfer.empty() && name.starts_with("libnvinfer.so.") &&
              stat_path(m_root, join_path(package, name)).is_regular) {
            libnvinfer = join_path(package, name);
            fw.package_dir = package;
          }
        }
      }
    }
    if (fw.package_dir.empty()) {
      const std::string site = site_of(m_root, m_env, "tensorrt");
      fw.package_dir = join_path(site.empty() ? m_env.site_packages.front() : site, "tensorrt");
    }
    // The wheel name's CUDA major: tensorrt-cu12, tensorrt-cu12-libs.
    for (const PythonDistribution& candidate : m_env.distributions) {
      const size_t cu = candidate.name.find("-cu");
      if (tensorrt_dist(candidate.name) && cu != std::string::npos &&
          leading_int(std::string_view(candidate.name).substr(cu + 3)) > 0) {
        fw.cuda = std::to_string(leading_int(std::string_view(candidate.name).substr(cu + 3)));
      }
    }
    fw.loader_object = libnvinfer;
    resolve_needed(fw, {}, {});
    return fw;
  }

  /// A CuPy wheel (cupy-cuda12x, cupy-cuda11x, cupy-cuda113): the CUDA major of its name and the
  /// libraries CuPy loads by SONAME at run time (CUDA runtime, NVRTC, cuBLAS; cuDNN is optional
  /// and not asked for). CuPy 14 and later also look in the environment's nvidia-* wheels
  /// (cupy-cudaNNx[ctk]), so those count as found for it.
  std::optional<FrameworkInstall> cupy_install() const {
    const PythonDistribution* dist = nullptr;
    for (const PythonDistribution& candidate : m_env.distributions) {
      if (candidate.name.starts_with("cupy-cuda") && dist == nullptr) {
        dist = &candidate;
      }
    }
    if (dist == nullptr) {
      return std::nullopt;
    }
    FrameworkInstall fw;
    fw.name = "cupy";
    fw.distribution = dist->name;
    fw.version = dist->version;
    const std::string site = site_of(m_root, m_env, "cupy");
    fw.package_dir = join_path(site.empty() ? m_env.site_packages.front() : site, "cupy");
    // cupy-cuda12x -> 12; cupy-cuda113 -> 11.3; cupy-cuda102 -> 10.2.
    const std::string_view rest = std::string_view(dist->name).substr(9); // after "cupy-cuda"
    size_t n = 0;
    while (n < rest.size() && std::isdigit(static_cast<unsigned char>(rest[n])) != 0) {
      ++n;
    }
    const std::string digits(rest.substr(0, n));
    if (digits.size() == 2 && rest.substr(n) == "x") {
      fw.cuda = digits;
    } else if (digits.size() == 3 && rest.size() == n) {
      fw.cuda = fmt::format("{}.{}", digits.substr(0, 2), digits.substr(2));
    }
    if (!fw.cuda) {
      return fw;
    }
    const int major = leading_int(*fw.cuda);
    const std::string nvrtc =
        major == 11 ? std::string("libnvrtc.so.11.2") : fmt::format("libnvrtc.so.{}", major);
    std::vector<std::string> preload;
    if (leading_int(fw.version) >= 14) {
      preload = wheel_lib_dirs(m_root, m_env);
    }
    resolve_needed(fw, {cudart_soname(major), nvrtc, fmt::format("libcublas.so.{}", major)},
                   preload);
    return fw;
  }

  /// TensorRT's own wheels: tensorrt, tensorrt-cu12, tensorrt-cu12-libs, tensorrt-cu12-bindings,
  /// tensorrt-libs, tensorrt-bindings (not tensorrt-llm and other projects named after it).
  static bool tensorrt_dist(std::string_view name) {
    return name == "tensorrt" || name.starts_with("tensorrt-cu") || name == "tensorrt-libs" ||
           name == "tensorrt-bindings";
  }

  static std::string cudart_soname(int major) {
    return major <= 11 ? std::string("libcudart.so.11.0") : fmt::format("libcudart.so.{}", major);
  }

  /// Whether a DT_NEEDED entry is a CUDA toolkit, cuDNN or TensorRT library (not the driver's
  /// libcuda.so.1, not the C library, not the framework's own).
  static bool gpu_library(std::string_view soname) {
    if (soname.starts_with("libcuda.so") || soname.starts_with("libcudadebugger")) {
      return false;
    }
    for (const char* prefix : {"libcu", "libnvinfer", "libnvonnxparser", "libnvrtc", "libnvJitLink",
                               "libnccl", "libnvToolsExt"}) {
      if (soname.starts_with(prefix)) {
        return true;
      }
    }
    return false;
  }

  /// "libcublasLt.so.12" -> "cublasLt"; the families of library_names keep their own name.
  static std::string family_of(std::string_view soname) {
    std::string_view stem = soname.substr(0, soname.find(".so"));
    if (stem.starts_with("lib")) {
      stem.remove_prefix(3);
    }
    return std::string(stem);
  }

  /// The major a SONAME carries: "libcudart.so.11.0" -> 11; 0 when none.
  static int soname_major(std::string_view soname) {
    const size_t so = soname.find(".so.");
    return so == std::string_view::npos ? 0 : leading_int(soname.substr(so + 4));
  }

  /// Resolve the GPU libraries that `fw.loader_object` needs (DT_NEEDED), or `defaults` when it
  /// has no readable dynamic section, as the loader does for that object: LD_LIBRARY_PATH, its
  /// RUNPATH, the cache, the default directories; `preload` directories are searched after its
  /// RUNPATH (a framework that loads from them itself). Fills the CUDA, cuDNN majors that the
  /// build info did not give, and for each library not found, the copies of it elsewhere in the
  /// environment.
  void resolve_needed(FrameworkInstall& fw, const std::vector<std::string>& defaults,
                      const std::vector<std::string>& preload) const {
    std::optional<ElfDynamic> elf;
    if (!fw.loader_object.empty()) {
      if (const std::optional<std::string> object = m_root.host_resolved(fw.loader_object)) {
        elf = read_elf_dynamic(*object);
      }
    }
    std::vector<std::string> needed;
    std::string via = "RUNPATH";
    if (elf) {
      for (const std::string& name : elf->needed) {
        if (gpu_library(name)) {
          needed.push_back(name);
        }
      }
      const std::optional<std::string> raw = elf->runpath ? elf->runpath : elf->rpath;
      fw.runpath_source = "elf";
      via = elf->runpath || !elf->rpath ? "RUNPATH" : "RPATH";
      if (raw) {
        fw.runpath = expand_runpath(*raw, parent_path(fw.loader_object));
      }
    } else {
      needed = defaults;
    }
    if (!preload.empty() && fw.runpath.empty()) {
      fw.runpath_source = "wheel_layout";
      via = "preload";
      fw.runpath = preload;
    }
    for (const std::string& soname : needed) {
      const std::string family = family_of(soname);
      const int major = soname_major(soname);
      if (!fw.cuda && major >= 10 && (family == "cudart" || family.starts_with("cublas"))) {
        fw.cuda = std::to_string(major);
      }
      if (!fw.cudnn && family == "cudnn" && major > 0) {
        fw.cudnn = std::to_string(major);
      }
      ResolvedLibrary lib =
          resolve_soname(m_root, soname, m_ld_library_path, fw.runpath, via, m_loader_cache);
      lib.family = family;
      if (!lib.path.empty()) {
        lib.version = spec_of(family) != nullptr
                          ? file_version(family, lib.path, lib.real_path)
                          : version_from_file_name(base_name(lib.real_path),
                                                   soname.substr(0, soname.find(".so") + 3));
      } else {
        lib.elsewhere = copies_elsewhere(soname);
      }
      fw.libraries.push_back(std::move(lib));
    }
  }

  /// Copies of `soname` in this environment where the loader does not look on its own: every
  /// site-packages/nvidia/*/lib and tensorrt_libs.
  std::vector<std::string> copies_elsewhere(const std::string& soname) const {
    std::vector<std::string> dirs = wheel_lib_dirs(m_root, m_env);
    for (const std::string& site : m_env.site_packages) {
      dirs.push_back(join_path(site, "tensorrt_libs"));
    }
    std::vector<std::string> out;
    for (const std::string& dir : dirs) {
      const std::string candidate = join_path(dir, soname);
      const std::optional<std::string> real = resolve_path(m_root, candidate);
      if (real && stat_path(m_root, *real).is_regular) {
        out.push_back(candidate);
      }
    }
    return out;
  }

  /// The SONAMEs a CUDA build of `fw` asks for, one per family.
  std::vector<std::pair<std::string, std::string>>
  wanted(const FrameworkInstall& fw, const std::optional<ElfDynamic>& elf) const {
    const int major = leading_int(*fw.cuda);
    std::vector<std::pair<std::string, std::string>> out{
        {"cudart", major <= 11 ? "libcudart.so.11.0" : fmt::format("libcudart.so.{}", major)},
        {"cublas", fmt::format("libcublas.so.{}", major)},
        {"cudnn", ""},
        {"nccl", "libnccl.so.2"}};
    if (elf) {
      for (const std::string& needed : elf->needed) {
        for (auto& [family, soname] : out) {
          const LibraryFamilySpec* spec = spec_of(family);
          if (spec != nullptr && is_family_file(needed, spec->stem)) {
            soname = needed;
          }
        }
      }
    }
    std::string& cudnn = out[2].second;
    if (cudnn.empty() && fw.cudnn && leading_int(*fw.cudnn) > 0) {
      cudnn = fmt::format("libcudnn.so.{}", leading_int(*fw.cudnn));
    }
    if (cudnn.empty()) {
      for (const PythonDistribution& dist : m_env.distributions) {
        if (dist.name.starts_with("nvidia-cudnn") && leading_int(dist.version) > 0) {
          cudnn = fmt::format("libcudnn.so.{}", leading_int(dist.version));
        }
      }
    }
    if (cudnn.empty()) {
      for (const std::string& dir : wheel_lib_dirs(m_root, m_env)) {
        for (const std::string& name : m_root.list(dir)) {
          if (is_family_file(name, "libcudnn.so") && name != "libcudnn.so") {
            cudnn = guess_soname(*spec_of("cudnn"), name);
          }
        }
      }
    }
    if (cudnn.empty()) {
      out.erase(out.begin() + 2); // no cuDNN major to ask for: nothing to resolve
    }
    return out;
  }

  /// Version of a library file: its real file name, else the wheel that carries it.
  std::string file_version(const std::string& family, const std::string& path,
                           const std::string& real) const {
    const LibraryFamilySpec* spec = spec_of(family);
    const std::string from_name = version_from_file_name(base_name(real), spec->stem);
    if (from_name.find('.') != std::string::npos) {
      return from_name;
    }
    const std::string base = normalize_dist_name(spec->dist_base);
    for (const std::string& site : m_env.site_packages) {
      for (const std::string& file : {path, real}) {
        if (!file.starts_with(site + "/")) {
          continue;
        }
        const std::string relative = file.substr(site.size() + 1);
        for (const PythonDistribution& dist : m_env.distributions) {
          const bool carries = std::find(dist.libraries.begin(), dist.libraries.end(), relative) !=
                               dist.libraries.end();
          // Without a RECORD, the one wheel of the family (nvidia-cudnn-cu12, nvidia-cudnn-cu13,
          // nvidia-cudnn) stands for it.
          const bool family_wheel =
              dist.libraries.empty() && (dist.name == base || dist.name.starts_with(base + "-cu"));
          if (carries || family_wheel) {
            return trim_version(dist.version, spec->dist_version_parts);
          }
        }
      }
    }
    return from_name;
  }

  void resolve(FrameworkInstall& fw) const {
    std::optional<ElfDynamic> elf;
    if (!fw.loader_object.empty()) {
      if (const std::optional<std::string> object = m_root.host_resolved(fw.loader_object)) {
        elf = read_elf_dynamic(*object);
      }
    }
    const std::optional<std::string> raw =
        elf ? (elf->runpath ? elf->runpath : elf->rpath) : std::nullopt;
    std::string via = "RUNPATH";
    if (raw) {
      fw.runpath_source = "elf";
      via = elf->runpath ? "RUNPATH" : "RPATH";
      fw.runpath = expand_runpath(*raw, parent_path(fw.loader_object));
    } else {
      fw.runpath_source = "wheel_layout";
      via = "preload";
      if (!fw.loader_object.empty()) {
        fw.runpath.push_back(parent_path(fw.loader_object));
      }
      for (const std::string& dir : wheel_lib_dirs(m_root, m_env)) {
        fw.runpath.push_back(dir);
      }
    }
    for (const auto& [family, soname] : wanted(fw, elf)) {
      ResolvedLibrary lib =
          resolve_soname(m_root, soname, m_ld_library_path, fw.runpath, via, m_loader_cache);
      lib.family = family;
      if (!lib.path.empty()) {
        lib.version = file_version(family, lib.path, lib.real_path);
      }
      for (const std::string& dir : fw.runpath) {
        const std::string candidate = join_path(dir, soname);
        const std::optional<std::string> real = resolve_path(m_root, candidate);
        if (real && stat_path(m_root, *real).is_regular) {
          lib.own_path = candidate;
          lib.own_version = file_version(family, candidate, *real);
          break;
        }
      }
      fw.libraries.push_back(std::move(lib));
    }
  }

  const Sysroot& m_root;
  const PythonEnvironment& m_env;
  std::vector<std::string> m_ld_library_path;
  const std::vector<LdconfigEntry>& m_loader_cache;
};

} // namespace

ResolvedLibrary resolve_soname(const Sysroot& root, const std::string& soname,
                               const std::vector<std::string>& ld_library_path,
                               const std::vector<std::string>& runpath,
                               const std::string& runpath_via,
                               const std::vector<LdconfigEntry>& loader_cache) {
  ResolvedLibrary lib;
  lib.soname = soname;
  auto take = [&](const std::string& path, const std::string& via) {
    const std::optional<std::string> real = resolve_path(root, path);
    if (!real || !stat_path(root, *real).is_regular) {
      return false;
    }
    lib.path = path;
    lib.real_path = *real;
    lib.via = via;
    return true;
  };
  // DT_RPATH (without DT_RUNPATH) is searched before LD_LIBRARY_PATH, DT_RUNPATH after it.
  const bool rpath = runpath_via == "RPATH";
  for (const std::string& dir : rpath ? runpath : std::vector<std::string>{}) {
    if (take(join_path(dir, soname), runpath_via)) {
      return lib;
    }
  }
  for (const std::string& dir : ld_library_path) {
    if (take(join_path(dir, soname), "LD_LIBRARY_PATH")) {
      return lib;
    }
  }
  for (const std::string& dir : rpath ? std::vector<std::string>{} : runpath) {
    if (take(join_path(dir, soname), runpath_via)) {
      return lib;
    }
  }
  for (const LdconfigEntry& entry : loader_cache) {
    if (entry.name == soname && take(entry.path, "ldconfig")) {
      return lib;
    }
  }
  for (const char* dir : {"/lib", "/usr/lib", "/lib64", "/usr/lib64"}) {
    if (take(join_path(dir, soname), "default")) {
      return lib;
    }
  }
  return lib;
}

std::vector<FrameworkInstall> find_frameworks(const Sysroot& root, const PythonEnvironment& env,
                                              const std::optional<std::string>& ld_library_path,
                                              const std::vector<LdconfigEntry>& loader_cache) {
  if (env.site_packages.empty()) {
    return {};
  }
  return FrameworkReader(root, env, ld_library_path, loader_cache).run();
}

} // namespace gpucheck::probes
