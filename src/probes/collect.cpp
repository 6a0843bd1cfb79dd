#include "probes/collect.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <set>

#include "gpucheck/model/json_io.hpp"
#include "gpucheck/model/json_numbers.hpp"
#include "probes/kernel_log.hpp"
#include "probes/path_trust.hpp"
#include "probes/paths.hpp"
#include "probes/python_envs.hpp"
#include "process/child_process.hpp"
#include "process/trace.hpp"

namespace gpucheck::probes {

namespace {
/// The cuDNN probe children need no GPU, but cuDNN's *VersionCheck calls build a CUDA context
/// when they can (a full context's memory, beside the GPU checks' own): with no GPU visible
/// they answer the same and touch no device (docs/performance.md).
void hide_gpus(process::ChildRequest& request) {
  request.env.emplace_back("CUDA_VISIBLE_DEVICES", "");
}

std::string utc_now() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&now, &tm);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buffer;
}

/// Decode a child's payload (or one key of it) into T; a malformed payload becomes a ProbeIssue.
template <typename T>
bool decode(const process::ChildOutcome& outcome, const char* probe, const char* key, T& into,
            std::vector<ProbeIssue>& issues) {
  if (!outcome.ok()) {
    return false;
  }
  try {
    const nlohmann::json& body = key != nullptr ? outcome.payload->at(key) : *outcome.payload;
    // A number out of its field's range is undefined behaviour or wraps (found by
    // fuzz_child_output: 4.4e28 read into an int): checked as a snapshot's are.
    Expected<T> read = read_model_numbers_checked<T>(body);
    if (!read) {
      issues.push_back(
          {probe, fmt::format("child result could not be read: {}", read.error().message)});
      return false;
    }
    into = std::move(read).value();
    return true;
  } catch (const std::exception& e) {
    issues.push_back({probe, fmt::format("child result could not be read: {}", e.what())});
    return false;
  }
}

LibraryFamily& family_of(std::vector<LibraryFamily>& families, const std::string& name) {
  for (LibraryFamily& family : families) {
    if (family.family == name) {
      return family;
    }
  }
  families.push_back(LibraryFamily{.family = name});
  return families.back();
}

/// What each library family's child loads by bare name, newest SONAME first.
struct LibraryProbe {
  const char* family;
  std::vector<std::string> names;
  bool heavy; ///< skipped by --quick
};

const std::vector<LibraryProbe>& library_probes() {
  static const std::vector<LibraryProbe> k_probes{
      {"cudart",
       {"libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0", "libcudart.so"},
       false},
      {"cublas", {"libcublas.so.13", "libcublas.so.12", "libcublas.so.11", "libcublas.so"}, true},
      {"nccl", {"libnccl.so.2", "libnccl.so"}, true},
  };
  return k_probes;
}

/// As root, the PATH an interpreter gets holds only folders nobody but root can write: a shim's
/// `#!/usr/bin/env bash` must not find another user's bash, nor the interpreter another user's
/// programs. (The rest of its environment is cut to an allow-list by the python child itself.)
void restrict_path(process::ChildRequest& request) {
  if (!root_policy_applies()) {
    return;
  }
  const char* value = std::getenv("PATH");
  const std::string kept = filter_search_path("PATH", value != nullptr ? value : "").kept;
  request.env.emplace_back("PATH", kept.empty() ? "/usr/sbin:/usr/bin:/sbin:/bin" : kept);
}

/// As root, an interpreter the user did not name (--python) runs only from a trusted path: a
/// venv in a user's home would run that user's code (and its .pth files) as root.
bool may_run_interpreter(const Sysroot& root, const std::string& interpreter,
                         const std::vector<std::string>& found_by, std::vector<ProbeIssue>& notes) {
  if (std::find(found_by.begin(), found_by.end(), "--python") != found_by.end()) {
    return true;
  }
  // As root, a version manager's shim not resolved from its files (a script in a shims/ folder)
  // would run whatever its first line names, found through PATH: its environment is read from
  // its files only.
  const std::string folder = interpreter.substr(0, interpreter.rfind('/') + 1);
  if (root_policy_applies() && folder.ends_with("/shims/") && is_script(root, interpreter)) {
    ProbeIssue note{std::string(k_root_safety_probe),
                    fmt::format("did not run '{}' as root: a version manager's shim whose "
                                "interpreter could not be read from its files (a version of "
                                "\"system\", or one not installed); its environment is read from "
                                "its files",
                                interpreter)};
    if (std::find(notes.begin(), notes.end(), note) == notes.end()) {
      notes.push_back(std::move(note));
    }
    return false;
  }
  return may_run_as_root(root, interpreter, "run the Python interpreter", notes);
}

/// --import: each framework of each environment imported in its own child interpreter, all at
/// once, each with its own deadline.
void import_frameworks(const Sysroot& root, const ProbeOptions& options,
                       std::vector<PythonEnvironment>& environments,
                       std::vector<ProbeIssue>& notes) {
  process::ChildGroup children;
  std::vector<std::pair<PythonEnvironment*, std::string>> started;
  for (PythonEnvironment& python : environments) {
    if (!stat_path(root, python.interpreter).is_regular || python.frameworks.empty() ||
        !may_run_interpreter(root, python.interpreter, python.found_by, notes)) {
      continue;
    }
    for (const FrameworkInstall& framework : python.frameworks) {
      process::ChildRequest request;
      request.mode = "python";
      request.args = {root.path(python.interpreter), "import-" + framework.name};
      request.timeout = options.import_timeout;
      // Quieter logs, and JAX must not grab most of the GPU memory for one tiny operation.
      request.env = {{"TF_CPP_MIN_LOG_LEVEL", "2"}, {"XLA_PYTHON_CLIENT_PREALLOCATE", "false"}};
      restrict_path(request);
      children.start(std::move(request));
      started.emplace_back(&python, framework.name);
    }
  }
  const std::vector<process::ChildOutcome> outcomes = children.wait_all();
  for (size_t i = 0; i < started.size(); ++i) {
    const process::ChildOutcome& outcome = outcomes[i];
    FrameworkImport result = parse_import_result(
        started[i].second, outcome.ok() ? outcome.payload.get() : nullptr, outcome.failure);
    if (result.failure && result.failure->stderr_tail.empty()) {
      result.failure->stderr_tail = outcome.stderr_tail;
    }
    started[i].first->imports.push_back(std::move(result));
  }
}

constexpr size_t k_not_started = static_cast<size_t>(-1);

/// The probe children of one run: started at once, running while the parent reads its own
/// facts, their outcomes taken together.
class ProbeChildren {
public:
  explicit ProbeChildren(const ProbeOptions& options) : m_options(options) {}

  /// Start a child mode; its index in the outcomes.
  size_t start(std::string mode, std::vector<std::string> args,
               std::optional<std::chrono::milliseconds> timeout = std::nullopt,
               void (*adjust)(process::ChildRequest&) = nullptr) {
    m_names.push_back(args.empty() || args.front().starts_with('-') ? mode
                                                                    : mode + " " + args.front());
    process::ChildRequest request;
    request.mode = std::move(mode);
    request.args = std::move(args);
    request.timeout = timeout.value_or(m_options.child_timeout);
    // Done once its result is in: the kernel frees a driver child's state after that, and the
    // probes need not wait for it.
    request.conclude_at_result = true;
    if (request.mode == "cudnn") {
      hide_gpus(request);
    }
    if (adjust != nullptr) {
      adjust(request);
    }
    return m_group.start(std::move(request));
  }
  std::vector<process::ChildOutcome> wait_all(process::ChildListener* listener = nullptr) {
    return m_group.wait_all(listener);
  }
  /// A finished child's outcome (ChildGroup::outcome), on wait_all()'s thread.
  [[nodiscard]] std::optional<process::ChildOutcome> outcome(size_t child) const {
    return m_group.outcome(child);
  }
  [[nodiscard]] size_t size() const { return m_group.size(); }
  /// "nvml", "library cublas", ... by start index.
  [[nodiscard]] const std::vector<std::string>& names() const { return m_names; }

private:
  const ProbeOptions& m_options;
  process::ChildGroup m_group;
  std::vector<std::string> m_names;
};

/// Where each probe's outcome is (k_not_started: not run).
struct StartedProbes {
  size_t nvml = k_not_started;
  size_t cuda = k_not_started;
  std::vector<size_t> libraries; ///< by library_probes() index
  std::vector<size_t> pythons;   ///< by interpreter candidate
  size_t cudnn = k_not_started;
  std::vector<std::pair<size_t, std::string>> cudnn_copies; ///< child, the copy's real path
  std::string cudnn_selected; ///< the copy the loader selects, when there are several
};

/// A cuDNN copy probed on its own, shallow.
process::ChildRequest cudnn_copy_request(const Sysroot& root, const std::string& path) {
  process::ChildRequest request;
  request.mode = "cudnn";
  request.args = {"--shallow", root.path(path)};
  hide_gpus(request);
  return request;
}

/// NVML, the CUDA driver and each library family (in --quick, not the heavy ones).
void start_driver_probes(ProbeChildren& children, const ProbeOptions& options,
                         StartedProbes& started) {
  started.nvml = children.start("nvml", {});
  started.cuda = children.start("cuda", {});
  for (const LibraryProbe& probe : library_probes()) {
    if (options.quick && probe.heavy) {
      started.libraries.push_back(k_not_started);
      continue;
    }
    std::vector<std::string> args{probe.family};
    args.insert(args.end(), probe.names.begin(), probe.names.end());
    started.libraries.push_back(children.start("library", std::move(args)));
  }
}

/// Python environments are read from their files; an interpreter is asked for its version and
/// site-packages (short deadline) only when its files cannot say.
void start_python_children(ProbeChildren& children, const Sysroot& root, const Environment& env,
                           const ProbeOptions& options, const std::vector<PythonCandidate>& pythons,
                           bool run_python, std::vector<ProbeIssue>& issues,
                           StartedProbes& started) {
  for (const PythonCandidate& python : pythons) {
    const bool runnable = run_python && stat_path(root, python.interpreter).is_regular &&
                          !read_python_layout(root, env, python).complete &&
                          may_run_interpreter(root, python.interpreter, python.found_by, issues);
    started.pythons.push_back(
        runnable ? children.start("python", {root.path(python.interpreter), "query"},
                                  options.python_query_timeout, &restrict_path)
                 : k_not_started);
  }
}

/// What the parent reads itself, while the children run.
void read_local_facts(const Sysroot& root, const Environment& env, SystemSnapshot& snapshot) {
  snapshot.libraries = discover_libraries(root, env);
  snapshot.host = probe_host(root);
  snapshot.environment = probe_environment(root, env);
  snapshot.kernel_module = probe_kernel_module(root);
  std::vector<std::string> nvidia_devices;
  for (const PciDevice& device : snapshot.kernel_module.pci_devices) {
    nvidia_devices.push_back(device.bdf);
  }
  snapshot.kernel_log = read_kernel_log(root, nvidia_devices);
  snapshot.fabric_manager_running = fabric_manager_running(root);
  snapshot.toolkit = probe_toolkit(root, env, &snapshot.probe_issues);
}

/// The main cuDNN child and, with several copies, each other copy on its own (copies cannot
/// share a process, they have one SONAME), shallow: the shim says version and CUDA, and loading
/// every sub-library of each copy is most of a second of CPU per copy, on the critical path.
/// The copy the loader selects is the one the main child loads: its facts come from there.
void start_cudnn_probes(ProbeChildren& children, const Sysroot& root, const ProbeOptions& options,
                        SystemSnapshot& snapshot, StartedProbes& started) {
  started.cudnn = children.start("cudnn", options.quick ? std::vector<std::string>{"--shallow"}
                                                        : std::vector<std::string>{});
  const LibraryFamily* cudnn = snapshot.library("cudnn");
  if (cudnn == nullptr) {
    return;
  }
  std::set<std::string> real_paths;
  for (const LibraryCopy& copy : cudnn->copies) {
    real_paths.insert(copy.real_path);
    if (copy.selected) {
      started.cudnn_selected = copy.real_path;
    }
  }
  if (real_paths.size() <= 1) {
    started.cudnn_selected.clear();
    return;
  }
  for (const std::string& path : real_paths) {
    // As root, a copy in a place another user can write (~/.local) is not loaded: its
    // constructor would run as root. Its file name still gives its version.
    if (path != started.cudnn_selected &&
        may_run_as_root(root, path, "load the cuDNN copy", snapshot.probe_issues)) {
      process::ChildRequest request = cudnn_copy_request(root, path);
      started.cudnn_copies.emplace_back(children.start(request.mode, request.args), path);
    }
  }
}

/// NVML, the CUDA driver, the GPUs both see, and every library family's load.
void read_driver_outcomes(const std::vector<process::ChildOutcome>& outcomes,
                          const StartedProbes& started, SystemSnapshot& snapshot) {
  std::vector<ProbeIssue>& issues = snapshot.probe_issues;
  const process::ChildOutcome& nvml = outcomes[started.nvml];
  std::vector<GpuInfo> nvml_gpus;
  if (decode(nvml, "nvml", "nvml", snapshot.nvml, issues)) {
    decode(nvml, "nvml", "gpus", nvml_gpus, issues);
    if (nvml.payload->contains("gpu_paths")) {
      decode(nvml, "nvml", "gpu_paths", snapshot.gpu_paths, issues);
    }
  } else {
    snapshot.nvml.failure = nvml.failure;
  }
  if (!decode(outcomes[started.cuda], "cuda", nullptr, snapshot.cuda, issues)) {
    snapshot.cuda.failure = outcomes[started.cuda].failure;
  }
  snapshot.gpus = merge_gpus(std::move(nvml_gpus), snapshot.cuda);
  // The driver libraries report no version of their own beyond the CUDA API level; their file
  // names carry the driver version (libcuda.so.580.159.04), NVML states it.
  LibraryLoad& cuda_load = family_of(snapshot.libraries, "cuda").load;
  cuda_load = snapshot.cuda.library;
  if (cuda_load.loaded && cuda_load.version.empty()) {
    const std::string& file = cuda_load.real_path;
    const size_t so = file.rfind(".so.");
    if (so != std::string::npos && file.find('/', so) == std::string::npos) {
      cuda_load.version = file.substr(so + 4);
    }
  }
  LibraryLoad& nvml_load = family_of(snapshot.libraries, "nvml").load;
  nvml_load = snapshot.nvml.library;
  if (nvml_load.loaded && nvml_load.version.empty() && snapshot.nvml.driver_version) {
    nvml_load.version = *snapshot.nvml.driver_version;
  }
  for (size_t i = 0; i < library_probes().size(); ++i) {
    const char* name = library_probes()[i].family;
    LibraryFamily& family = family_of(snapshot.libraries, name);
    if (started.libraries[i] == k_not_started) {
      continue; // --quick: not loaded; its copies on disk are listed
    }
    if (!decode(outcomes[started.libraries[i]], name, nullptr, family.load, issues)) {
      family.failure = outcomes[started.libraries[i]].failure;
    }
  }
}

/// The main cuDNN child's load and facts, and each copy's version and CUDA.
void read_cudnn_outcomes(const std::vector<process::ChildOutcome>& outcomes,
                         const StartedProbes& started, const Sysroot& root,
                         const ProbeOptions& options, SystemSnapshot& snapshot) {
  std::vector<ProbeIssue>& issues = snapshot.probe_issues;
  LibraryFamily& cudnn = family_of(snapshot.libraries, "cudnn");
  if (decode(outcomes[started.cudnn], "cudnn", "load", cudnn.load, issues)) {
    CudnnDetails details;
    if (decode(outcomes[started.cudnn], "cudnn", "cudnn", details, issues)) {
      cudnn.cudnn = std::move(details);
    }
  } else {
    cudnn.failure = outcomes[started.cudnn].failure;
  }
  const auto record_copy = [&](const process::ChildOutcome& outcome, const std::string& path) {
    LibraryLoad load;
    CudnnDetails details;
    const bool ok = decode(outcome, "cudnn", "load", load, issues) &&
                    decode(outcome, "cudnn", "cudnn", details, issues);
    for (LibraryCopy& copy : cudnn.copies) {
      if (copy.real_path != path) {
        continue;
      }
      if (ok && load.loaded) {
        copy.reported_version = load.version;
        copy.cudart_version = details.cudart_version;
      } else if (!ok && outcome.failure) {
        issues.push_back({"cudnn", fmt::format("probing the cuDNN copy {} failed: {}", path,
                                               outcome.failure->detail)});
      }
    }
  };
  for (const auto& [index, path] : started.cudnn_copies) {
    record_copy(outcomes[index], path);
  }
  const std::string& selected = started.cudnn_selected;
  if (selected.empty()) {
    return;
  }
  if (cudnn.load.loaded && cudnn.load.real_path == root.path(selected)) {
    for (LibraryCopy& copy : cudnn.copies) {
      if (copy.real_path == selected) {
        copy.reported_version = cudnn.load.version;
        copy.cudart_version = cudnn.cudnn ? cudnn.cudnn->cudart_version : std::nullopt;
      }
    }
  } else if (may_run_as_root(root, selected, "load the cuDNN copy", snapshot.probe_issues)) {
    // The main child loaded another copy after all: the selected one on its own.
    process::ChildRequest request = cudnn_copy_request(root, selected);
    request.timeout = options.child_timeout;
    record_copy(process::run_child(request), selected);
  }
}

/// The interpreters' answers, where one was asked, and the environments built from them.
void read_python_outcomes(const std::vector<process::ChildOutcome>& outcomes,
                          const StartedProbes& started, const Sysroot& root, const Environment& env,
                          const std::vector<PythonCandidate>& pythons, SystemSnapshot& snapshot) {
  std::vector<std::optional<InterpreterAnswer>> answers;
  std::vector<std::optional<ChildFailure>> answer_failures;
  for (const size_t index : started.pythons) {
    answers.emplace_back();
    answer_failures.emplace_back();
    if (index == k_not_started) {
      continue;
    }
    if (outcomes[index].ok()) {
      answers.back() = parse_interpreter_answer(*outcomes[index].payload);
    }
    if (!answers.back()) {
      answer_failures.back() = outcomes[index].failure.value_or(ChildFailure{
          .kind = ChildFailureKind::bad_output, .detail = "the interpreter gave no usable answer"});
    }
  }
  snapshot.python_environments =
      build_python_environments(root, env, pythons, answers, answer_failures);
}

/// While wait_all() runs: once every interpreter child has finished, `read` gets their outcomes
/// (the others' left empty), so the Python environments' files are read beside the driver
/// children rather than after the CUDA child's cuInit, which ends the probes (5 ms of a
/// `--quick` run on two H200s: docs/performance.md). Should wait_all() end without having told
/// of every interpreter, done() stays false and the caller reads them after it.
class WhenInterpretersAnswered : public process::ChildListener {
public:
  using Read = std::function<void(const std::vector<process::ChildOutcome>&)>;
  WhenInterpretersAnswered(const ProbeChildren& children, const std::vector<size_t>& interpreters,
                           Read read)
      : m_children(children), m_read(std::move(read)) {
    for (const size_t index : interpreters) {
      if (index != k_not_started) {
        m_pending.insert(index);
      }
    }
  }
  void on_message(size_t /*child*/, std::string_view /*bytes*/) override {}
  void on_finished(size_t child) override {
    m_pending.erase(child);
    on_wake();
  }
  void on_wake() override {
    if (m_done || !m_pending.empty()) {
      return;
    }
    m_done = true;
    std::vector<process::ChildOutcome> outcomes(m_children.size());
    for (size_t i = 0; i < outcomes.size(); ++i) {
      if (std::optional<process::ChildOutcome> outcome = m_children.outcome(i)) {
        outcomes[i] = std::move(*outcome);
      }
    }
    m_read(outcomes);
  }
  /// Whether `read` was called.
  [[nodiscard]] bool done() const { return m_done; }

private:
  const ProbeChildren& m_children;
  Read m_read;
  std::set<size_t> m_pending;
  bool m_done = false;
};

/// Ctrl-C or SIGTERM during the probes: say which probes were cut short.
void note_interruption(const std::vector<process::ChildOutcome>& outcomes,
                       const std::vector<std::string>& names, SystemSnapshot& snapshot) {
  const int signo = process::children_interrupted();
  if (signo == 0) {
    return;
  }
  std::vector<std::string> cut;
  for (size_t i = 0; i < outcomes.size() && i < names.size(); ++i) {
    if (outcomes[i].failure && outcomes[i].failure->kind == ChildFailureKind::cancelled) {
      cut.push_back(names[i] + " probe");
    }
  }
  snapshot.probe_issues.push_back(
      {"interrupted",
       fmt::format("gpucheck received {} during the probes; cut short or not started: {}; the "
                   "facts they would have read are missing",
                   process::signal_name(signo),
                   cut.empty() ? "none" : fmt::format("{}", fmt::join(cut, ", ")))});
}

} // namespace

SystemSnapshot collect_snapshot(const ProbeOptions& options, const Environment& env) {
  const Sysroot root(options.sysroot);
  SystemSnapshot snapshot;
  snapshot.collected_at = utc_now();
  // Children start first and run while the parent reads local facts.
  ProbeChildren children(options);
  StartedProbes started;
  start_driver_probes(children, options, started);
  const std::vector<PythonCandidate> pythons =
      find_python_candidates(root, env, options.python_interpreters);
  const bool run_python = options.run_interpreters.value_or(root.root() == "/");
  start_python_children(children, root, env, options, pythons, run_python, snapshot.probe_issues,
                        started);
  read_local_facts(root, env, snapshot);
  if (options.before_cudnn_children) {
    process::trace("probes: local facts read; the cuDNN children wait for the GPU contexts");
    options.before_cudnn_children();
    process::trace("probes: starting the cuDNN children");
  }
  start_cudnn_probes(children, root, options, snapshot, started);
  process::trace("probes: local facts read; waiting for the probe children");
  const auto read_pythons = [&](const std::vector<process::ChildOutcome>& outcomes) {
    read_python_outcomes(outcomes, started, root, env, pythons, snapshot);
    process::trace("probes: Python environments read");
  };
  WhenInterpretersAnswered interpreters(children, started.pythons, read_pythons);
  const std::vector<process::ChildOutcome> outcomes = children.wait_all(&interpreters);
  read_driver_outcomes(outcomes, started, snapshot);
  read_cudnn_outcomes(outcomes, started, root, options, snapshot);
  if (!interpreters.done()) {
    read_pythons(outcomes);
  }
  if (options.import_frameworks && run_python) {
    import_frameworks(root, options, snapshot.python_environments, snapshot.probe_issues);
  }
  note_interruption(outcomes, children.names(), snapshot);
  process::trace("probes: done");
  return snapshot;
}

} // namespace gpucheck::probes
