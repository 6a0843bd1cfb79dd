#pragma once
/// Python environments and the deep-learning frameworks in them, read without importing
/// anything: interpreters found on PATH, $VIRTUAL_ENV, $CONDA_PREFIX and --python; their
/// site-packages (read from the files, the interpreter asked in a child only when they cannot
/// say); the distributions there (dist-info / egg-info metadata); PyTorch, TensorFlow, JAX, ONNX
/// Runtime, TensorRT and CuPy builds; and the CUDA libraries each framework would load
/// (LD_LIBRARY_PATH, its RUNPATH, the loader cache).

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
/// that a typo is reported). The same path found twice is one candidate. A pyenv or asdf shim
/// on PATH is resolved from its own files to the interpreter it would run (resolve_shim()); it
/// is never run itself.
std::vector<PythonCandidate> find_python_candidates(const Sysroot& root, const Environment& env,
                                                    const std::vector<std::string>& extra);

/// Whether the file starts with "#!": a script (a shim, a wrapper), not an interpreter. As root,
/// gpucheck never runs a shim it could not resolve: it would run whatever its first line names,
/// found through PATH.
bool is_script(const Sysroot& root, const std::string& path);

/// The interpreter a pyenv or asdf shim at `shim` (".../shims/python3") would run, read from the
/// files the version managers read, without running anything: pyenv's from `PYENV_VERSION` or
/// `$PYENV_ROOT/version`, asdf's from `$HOME/.tool-versions`; nullopt when the version is
/// "system", unknown, or its interpreter is not there.
std::optional<std::string> resolve_shim(const Sysroot& root, const Environment& env,
                                        const std::string& shim);

/// What an interpreter said about itself (the "python" child's query script).
struct InterpreterAnswer {
  std::string version; ///< "3.12.3"
  std::string prefix;  ///< sys.prefix
  std::string base_prefix;
  std::vector<std::string> site_packages; ///< sys.path entries that are site-/dist-packages
};

/// Read the query script's JSON; nullopt when it lacks the prefix or is malformed.
std::optional<InterpreterAnswer> parse_interpreter_answer(const nlohmann::json& payload);

/// An environment as its files describe it (read_python_layout).
struct PythonLayout {
  PythonEnvironment environment; ///< source "layout"; distributions and frameworks not read yet
  /// The files located the installation (pyvenv.cfg, or a standard library beside the real
  /// interpreter or one level up) and named its Python version: nothing is left to ask the
  /// interpreter. When false, the interpreter is asked where it may be run.
  bool complete = false;
};

/// An interpreter's environment read from its files alone, as CPython's startup and site.py
/// compute it, without running anything:
/// - kind and prefix: a venv when pyvenv.cfg lies beside the interpreter as found or one level
///   up (its prefix is the parent of the interpreter's directory, even when bin/python3 links to
///   the base interpreter); otherwise the real interpreter's symlinks are followed and the prefix
///   is the directory, or its parent, that holds lib/python3.N/os.py; conda when that prefix has
///   conda-meta/, else system;
/// - version: pyvenv.cfg's version / version_info, conda-meta/python-<version>-*.json, else the
///   lib/python3.N directory (the real interpreter's name python3.N picks one of several),
///   completed by include/python3.N/patchlevel.h when it is installed;
/// - base prefix: the installation of pyvenv.cfg's `home`; the prefix itself outside a venv;
/// - site-packages in sys.path order, existing ones only: PYTHONPATH entries that are site- or
///   dist-packages, the venv's own lib/python3.N/site-packages, the user site-packages
///   (`$PYTHONUSERBASE` or `$HOME/.local`, lib/python3.N/site-packages; not with
///   PYTHONNOUSERSITE, nor in a venv without system site-packages), then the installation's
///   (a venv's base only with include-system-site-packages = true): Debian's
///   local/lib/python3.N/dist-packages, lib/python3/dist-packages and lib/python3.N/dist-packages
///   where the installation has lib/python3/dist-packages, else lib{,64}/python3.N/site-packages.
/// Directories added by .pth files are not followed. A missing interpreter yields only its
/// interpreter path and bin/.. as prefix.
PythonLayout read_python_layout(const Sysroot& root, const Environment& env,
                                const PythonCandidate& candidate);

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
/// the CUDA libraries it resolves (for ONNX Runtime, TensorRT and CuPy, also the copies the loader
/// would not find in the environment: ResolvedLibrary::elsewhere). `ld_library_path` is the raw
/// variable (may be absent).
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

/// One environment per distinct prefix: each candidate's layout (read_python_layout), replaced
/// by its interpreter's answer where there is one (nullopt: not asked or did not answer; then
/// `failures` may say why); those resolving to the same prefix merge their found_by.
/// Distributions and frameworks are filled.
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
