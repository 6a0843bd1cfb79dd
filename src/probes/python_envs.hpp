#pragma once
/// Python environments and the deep-learning frameworks in them (issue 5), read without importing
/// anything: interpreters found on PATH, $VIRTUAL_ENV, $CONDA_PREFIX and --python; their
/// site-packages (asked of the interpreter in a child, else derived from the layout); the
/// distributions there (dist-info / egg-info metadata); PyTorch, TensorFlow and JAX builds; and
/// the CUDA libraries each framework would load (LD_LIBRARY_PATH, its RUNPATH, the loader cache).

#include <nlohmann/json_fwd.hpp>

#include <optional>
#include <string>
#include <vector>

#include "gpucheck/model/snapshot.hpp"
#include "probes/ldconfig_cache.hpp"
#include "probes/sysroot.hpp"

namespace gpucheck::probes {

/// An interpreter to look at, and every way it was found.
struct PythonCandidate {
  std::string interpreter;           ///< system path as found, e.g. "/opt/venv/bin/python3"
  std::vector<std::string> found_by; ///< "PATH", "VIRTUAL_ENV", "CONDA_PREFIX", "--python"

  bool operator==(const PythonCandidate&) const = default;
};

/// python3 and python on PATH (the first of each), $VIRTUAL_ENV/bin/python,
/// $CONDA_PREFIX/bin/python, and each of `extra` (--python, kept even when it does not exist, so
/// that a typo is reported). The same path found twice is one candidate.
std::vector<PythonCandidate> find_python_candidates(const Sysroot& root, const Environment& env,
                                                    const std::vector<std::string>& extra);

/// What an interpreter said about itself (the "python" child's query script).
struct InterpreterAnswer {
  std::string version; ///< "3.12.3"
  std::string prefix;  ///< sys.prefix
  std::string base_prefix;
  std::vector<std::string> site_packages; ///< sys.path entries that are site-/dist-packages
};

/// Read the query script's JSON; nullopt when it lacks the prefix or is malformed.
std::optional<InterpreterAnswer> parse_interpreter_answer(const nlohmann::json& payload);

/// An interpreter's environment derived from the files alone: prefix (bin/..), kind (pyvenv.cfg:
/// venv, conda-meta/: conda, else system), version (pyvenv.cfg, else lib/python3.N) and the
/// site-packages / dist-packages directories under the prefix that exist.
PythonEnvironment environment_from_layout(const Sysroot& root, const PythonCandidate& candidate);

/// The lib/python3* directories of every environment the library discovery scans for nvidia
/// wheels: $VIRTUAL_ENV, $CONDA_PREFIX, venvs and conda environments whose bin/ is on PATH,
/// ~/.local, pyenv versions, /usr/lib and /usr/local/lib.
std::vector<std::string> python_lib_dirs(const Sysroot& root, const Environment& env);

/// The distributions in `site_packages` that matter here (frameworks, JAX plugins and every
/// nvidia-* wheel), from their metadata; nvidia wheels list their shared libraries (RECORD).
std::vector<PythonDistribution> read_distributions(const Sysroot& root,
                                                   const std::vector<std::string>& site_packages);

/// Normalised project name: lower case, runs of '_', '.', '-' become one '-'.
std::string normalize_dist_name(std::string_view name);

/// The frameworks of an environment whose site-packages and distributions are filled, each with
/// the CUDA libraries it resolves. `ld_library_path` is the raw variable (may be absent).
std::vector<FrameworkInstall> find_frameworks(const Sysroot& root, const PythonEnvironment& env,
                                              const std::optional<std::string>& ld_library_path,
                                              const std::vector<LdconfigEntry>& loader_cache);

/// Where the loader finds `soname` for an object whose RUNPATH is `runpath` (directories, $ORIGIN
/// already expanded): LD_LIBRARY_PATH, then RUNPATH, then the cache, then /lib and /usr/lib.
/// `runpath_via` names the RUNPATH step ("RUNPATH", or "preload" for an assumed wheel layout);
/// "RPATH" (a DT_RPATH without DT_RUNPATH) is searched before LD_LIBRARY_PATH instead.
/// version/own_* are left for the caller.
ResolvedLibrary resolve_soname(const Sysroot& root, const std::string& soname,
                               const std::vector<std::string>& ld_library_path,
                               const std::vector<std::string>& runpath,
                               const std::string& runpath_via,
                               const std::vector<LdconfigEntry>& loader_cache);

/// Absolute entries of a LD_LIBRARY_PATH value, split on ':' and ';', normalised.
std::vector<std::string> split_library_path(const std::optional<std::string>& value);

/// One environment per distinct prefix: candidates with their answers (nullopt: did not answer;
/// then `failures` may say why) become environments, those resolving to the same prefix merge
/// their found_by. Distributions and frameworks are filled.
std::vector<PythonEnvironment>
build_python_environments(const Sysroot& root, const Environment& env,
                          const std::vector<PythonCandidate>& candidates,
                          const std::vector<std::optional<InterpreterAnswer>>& answers,
                          const std::vector<std::optional<ChildFailure>>& failures);

/// The import result of the "python" child's import script for `framework`; a failure when the
/// child did not deliver one.
FrameworkImport parse_import_result(const std::string& framework, const nlohmann::json* payload,
                                    const std::optional<ChildFailure>& failure);

} // namespace gpucheck::probes
