// A Python environment read from its files alone (see python_envs.hpp, read_python_layout): the
// prefix, kind, version and base prefix as CPython's startup computes them, and the site-packages
// directories as site.py puts them on sys.path (with Debian's patch where the base installation
// carries it). No interpreter runs here.
#include <algorithm>
#include <cctype>
#include <set>

#include "gpucheck/model/text.hpp"
#include "probes/paths.hpp"
#include "probes/python_envs.hpp"

namespace gpucheck::probes {

namespace {

/// "key = value" of a pyvenv.cfg; keys compare without case, as site.py reads them.
std::optional<std::string> cfg_value(const std::string& text, std::string_view key) {
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = std::min(text.find('\n', start), text.size());
    const std::string_view line(text.data() + start, end - start);
    start = end + 1;
    const size_t eq = line.find('=');
    if (eq != std::string_view::npos && lower(trim(line.substr(0, eq))) == key) {
      return std::string(trim(line.substr(eq + 1)));
    }
  }
  return std::nullopt;
}

/// "3.12.3.final.0" (virtualenv's version_info) -> "3.12.3".
std::string short_python_version(std::string version) {
  size_t dots = 0;
  for (size_t i = 0; i < version.size(); ++i) {
    if (version[i] == '.' && ++dots == 3) {
      return version.substr(0, i);
    }
  }
  return version;
}

bool all_digits(std::string_view s) {
  return !s.empty() &&
         std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
}

/// "3.12.3" or "3.12" -> "3.12"; "" for anything else.
std::string minor_version(std::string_view version) {
  const size_t first = version.find('.');
  if (first == std::string_view::npos || !all_digits(version.substr(0, first))) {
    return {};
  }
  const size_t second = std::min(version.find('.', first + 1), version.size());
  const std::string_view minor = version.substr(first + 1, second - first - 1);
  return all_digits(minor) ? std::string(version.substr(0, second)) : std::string{};
}

/// "python3.12" -> "3.12"; "" for "python3", "python3.12-config" and other names.
/// Whether a file name is a CPython interpreter's: python, python3, python3.12, python3.13t.
bool interpreter_name(std::string_view name) {
  return name.starts_with("python") &&
         name.find_first_not_of("0123456789.dmt", std::string_view("python").size()) ==
             std::string_view::npos;
}

std::string version_of_name(std::string_view name) {
  if (!name.starts_with("python")) {
    return {};
  }
  name.remove_prefix(6);
  const std::string minor = minor_version(name);
  return minor.size() == name.size() ? minor : std::string{};
}

/// The versions whose standard library lies under `prefix` (lib/python3.N/os.py): CPython's
/// landmark for an installation's prefix.
std::vector<std::string> stdlib_versions(const Sysroot& root, const std::string& prefix) {
  std::vector<std::string> versions;
  const std::string lib = join_path(prefix, "lib");
  for (const std::string& name : list_resolved(root, lib)) {
    const std::string version = version_of_name(name);
    if (!version.empty() && stat_path(root, join_path(join_path(lib, name), "os.py")).is_regular) {
      versions.push_back(version);
    }
  }
  return versions;
}

/// The prefix of the installation whose interpreter lives in `dir` (already resolved): `dir`
/// itself or its parent, whichever holds a standard library (of `version` when it is known).
std::optional<std::string> find_install_prefix(const Sysroot& root, const std::string& dir,
                                               const std::string& version) {
  for (const std::string& prefix : {dir, parent_path(dir)}) {
    const std::vector<std::string> versions = stdlib_versions(root, prefix);
    if (version.empty() ? !versions.empty()
                        : std::find(versions.begin(), versions.end(), version) != versions.end()) {
      return prefix;
    }
  }
  return std::nullopt;
}

/// Python's version in a conda environment: conda-meta/python-<version>-<build>.json.
std::string conda_python_version(const Sysroot& root, const std::string& prefix) {
  for (const std::string& name : list_resolved(root, join_path(prefix, "conda-meta"))) {
    // python-3.11.7-h955ad1f_0.json, not python-dateutil-... or python_abi-...
    if (name.starts_with("python-") && name.size() > 7 &&
        std::isdigit(static_cast<unsigned char>(name[7])) != 0 && name.ends_with(".json")) {
      const size_t dash = name.find('-', 7);
      if (dash != std::string::npos) {
        return name.substr(7, dash - 7);
      }
    }
  }
  return {};
}

/// PY_VERSION from include/python3.N/patchlevel.h ("3.11.2"), when the headers are installed.
std::string patchlevel_version(const Sysroot& root, const std::string& prefix,
                               const std::string& minor) {
  const std::optional<std::string> header =
      read_resolved(root, join_path(prefix, "include/python" + minor + "/patchlevel.h"));
  if (!header) {
    return {};
  }
  const size_t define = header->find("#define PY_VERSION ");
  const size_t open = define == std::string::npos ? define : header->find('"', define);
  const size_t close = open == std::string::npos ? open : header->find('"', open + 1);
  if (close == std::string::npos) {
    return {};
  }
  std::string version = header->substr(open + 1, close - open - 1);
  return minor_version(version) == minor ? version : std::string{};
}

/// Site directories in sys.path order: existing ones only, a directory reached twice (a venv's
/// lib64 -> lib) kept once.
class SiteDirs {
public:
  explicit SiteDirs(const Sysroot& root) : m_root(root) {}

  void add(const std::string& dir) {
    const std::optional<std::string> real = resolve_path(m_root, dir);
    if (real && m_root.is_directory(*real) && m_seen.insert(*real).second) {
      m_dirs.push_back(dir);
    }
  }

  /// site.getsitepackages() for one prefix. Debian's patched site.py puts dist-packages there
  /// (and site-packages only inside a venv); upstream's puts lib/python3.N/site-packages (and
  /// the lib64 one where platlibdir is lib64).
  void add_prefix(const std::string& prefix, const std::string& minor, bool debian, bool in_venv) {
    const std::string python = "python" + minor;
    if (!debian) {
      add(join_path(prefix, "lib/" + python + "/site-packages"));
      add(join_path(prefix, "lib64/" + python + "/site-packages"));
      return;
    }
    if (in_venv) {
      add(join_path(prefix, "lib/" + python + "/site-packages"));
    }
    add(join_path(prefix, "local/lib/" + python + "/dist-packages"));
    add(join_path(prefix, "lib/python3/dist-packages"));
    add(join_path(prefix, "lib64/" + python + "/dist-packages"));
    add(join_path(prefix, "lib/" + python + "/dist-packages"));
  }

  [[nodiscard]] std::vector<std::string> take() { return std::move(m_dirs); }

private:
  const Sysroot& m_root;
  std::set<std::string> m_seen;
  std::vector<std::string> m_dirs;
};

/// Debian's python3 packages patch site.py; their installation has lib/python3/dist-packages.
bool is_debian_install(const Sysroot& root, const std::string& prefix) {
  return root.is_directory(join_path(prefix, "lib/python3/dist-packages"));
}

/// The user site-packages, ~/.local/lib/python3.N/site-packages (or under $PYTHONUSERBASE).
std::optional<std::string> user_site(const Environment& env, const std::string& minor) {
  std::string base;
  if (const std::optional<std::string> user_base = env.get("PYTHONUSERBASE");
      user_base && !user_base->empty()) {
    base = *user_base;
  } else if (const std::optional<std::string> home = env.get("HOME");
             home && home->starts_with('/')) {
    base = join_path(*home, ".local");
  }
  if (!base.starts_with('/')) {
    return std::nullopt;
  }
  return join_path(base, "lib/python" + minor + "/site-packages");
}

/// What reading the prefix taught beyond the environment's own fields.
struct PrefixReading {
  std::string minor;         ///< "3.12": which lib/python3.N; "" when unknown
  bool system_site = true;   ///< pyvenv.cfg's include-system-site-packages
  bool prefix_found = false; ///< pyvenv.cfg, or a standard library, located the prefix
};

/// A venv's prefix, version and base from its pyvenv.cfg. `name_version` is the real
/// interpreter's name's version ("3.12" for python3.12), the last resort.
PrefixReading read_venv(const Sysroot& root, const std::string& cfg, const std::string& exe_dir,
                        const std::string& name_version, PythonEnvironment& python) {
  PrefixReading reading;
  python.kind = "venv";
  python.prefix = parent_path(exe_dir);
  reading.prefix_found = true;
  python.version = short_python_version(
      cfg_value(cfg, "version").value_or(cfg_value(cfg, "version_info").value_or("")));
  reading.minor = minor_version(python.version);
  if (reading.minor.empty()) {
    // No version in pyvenv.cfg: the venv's own lib/python3.N, else the interpreter's name.
    std::vector<std::string> own;
    for (const std::string& name : list_resolved(root, join_path(python.prefix, "lib"))) {
      if (const std::string version = version_of_name(name); !version.empty()) {
        own.push_back(version);
      }
    }
    reading.minor = own.size() == 1 ? own.front() : name_version;
    python.version = reading.minor;
  }
  reading.system_site =
      lower(cfg_value(cfg, "include-system-site-packages").value_or("true")) == "true";
  // home is the base interpreter's directory; its installation is there or one level up.
  const std::optional<std::string> home = cfg_value(cfg, "home");
  if (home && home->starts_with('/')) {
    const std::optional<std::string> base_real =
        reading.minor.empty() ? std::nullopt
                              : resolve_path(root, join_path(*home, "python" + reading.minor));
    const std::string base_dir =
        base_real ? parent_path(*base_real) : resolve_path(root, *home).value_or(*home);
    python.base_prefix = find_install_prefix(root, base_dir, reading.minor)
                             .value_or(parent_path(normalize_path(*home)));
  }
  return reading;
}

/// An installation's prefix (outside a venv), kind and version. CPython follows the
/// interpreter's symlinks and looks for its standard library beside the real file or one level
/// up (/usr/bin/python3.12 -> /usr).
PrefixReading read_installation(const Sysroot& root, const std::string& real_interpreter,
                                const std::string& name_version, PythonEnvironment& python) {
  PrefixReading reading;
  const std::string real_dir = parent_path(real_interpreter);
  if (const std::optional<std::string> prefix = find_install_prefix(root, real_dir, "")) {
    python.prefix = *prefix;
    reading.prefix_found = true;
  } else {
    python.prefix = base_name(real_dir) == "bin" ? parent_path(real_dir) : real_dir;
  }
  python.base_prefix = python.prefix;
  if (root.is_directory(join_path(python.prefix, "conda-meta"))) {
    python.kind = "conda";
    python.version = conda_python_version(root, python.prefix);
    reading.minor = minor_version(python.version);
  }
  if (reading.minor.empty()) {
    // The standard library's directory; the interpreter's name picks one of several.
    const std::vector<std::string> stdlib = stdlib_versions(root, python.prefix);
    const bool named_one = std::find(stdlib.begin(), stdlib.end(), name_version) != stdlib.end();
    if (!name_version.empty() && (stdlib.empty() || named_one)) {
      reading.minor = name_version;
    } else if (stdlib.size() == 1) {
      reading.minor = stdlib.front();
    }
    python.version = reading.minor;
  }
  return reading;
}

/// sys.path's site directories in site.py's order: PYTHONPATH's (ahead of everything), the
/// venv's own, the user site, then the installation's (a venv's base only when
/// include-system-site-packages is true).
std::vector<std::string> site_directories(const Sysroot& root, const Environment& env,
                                          const PythonEnvironment& python,
                                          const PrefixReading& reading) {
  SiteDirs dirs(root);
  if (const std::optional<std::string> pythonpath = env.get("PYTHONPATH")) {
    size_t start = 0;
    while (start <= pythonpath->size()) {
      const size_t end = std::min(pythonpath->find(':', start), pythonpath->size());
      const std::string entry = pythonpath->substr(start, end - start);
      start = end + 1;
      const std::string dir = entry.starts_with('/') ? normalize_path(entry) : std::string{};
      if (dir.ends_with("/site-packages") || dir.ends_with("/dist-packages")) {
        dirs.add(dir);
      }
    }
  }
  const bool in_venv = python.kind == "venv";
  const std::string& base = in_venv ? python.base_prefix : python.prefix;
  const bool debian = !base.empty() && is_debian_install(root, base);
  if (in_venv) {
    dirs.add_prefix(python.prefix, reading.minor, debian, true);
  }
  const std::optional<std::string> no_user_site = env.get("PYTHONNOUSERSITE");
  if (reading.system_site && (!no_user_site || no_user_site->empty())) {
    if (const std::optional<std::string> user = user_site(env, reading.minor)) {
      dirs.add(*user);
    }
  }
  if (!base.empty() && (!in_venv || reading.system_site)) {
    dirs.add_prefix(base, reading.minor, debian, in_venv);
  }
  return dirs.take();
}

} // namespace

PythonLayout read_python_layout(const Sysroot& root, const Environment& env,
                                const PythonCandidate& candidate) {
  PythonLayout layout;
  PythonEnvironment& python = layout.environment;
  python.interpreter = candidate.interpreter;
  python.found_by = candidate.found_by;
  python.source = "layout";
  python.kind = "system";
  const std::string exe_dir = parent_path(candidate.interpreter);
  python.prefix = base_name(exe_dir) == "bin" ? parent_path(exe_dir) : exe_dir;
  // Symlinks followed inside the sysroot (a venv's bin/python3 -> /usr/bin/python3.12).
  const std::optional<std::string> real = resolve_path(root, candidate.interpreter);
  if (!real) {
    return layout; // nothing to read: a missing --python is reported as such
  }

  // A venv is recognised by pyvenv.cfg beside the interpreter as found or one level up (site.py),
  // before any symlink is followed: its bin/python3 usually links to the base interpreter.
  std::optional<std::string> cfg = read_resolved(root, join_path(exe_dir, "pyvenv.cfg"));
  if (!cfg) {
    cfg = read_resolved(root, join_path(parent_path(exe_dir), "pyvenv.cfg"));
  }
  if (!interpreter_name(base_name(candidate.interpreter)) && !interpreter_name(base_name(*real))) {
    // A --python named like no interpreter (a script, a data file): the files near it say
    // nothing about what it is; it is asked, with the probes' deadline.
    return layout;
  }
  const std::string name_version = version_of_name(base_name(*real));
  const PrefixReading reading = cfg ? read_venv(root, *cfg, exe_dir, name_version, python)
                                    : read_installation(root, *real, name_version, python);
  if (reading.minor.empty()) {
    return layout; // which lib/python3.N the interpreter reads is unknown: ask it
  }
  if (python.version == reading.minor) {
    // Only the minor version so far: the installed headers name the release.
    for (const std::string& prefix : {python.prefix, python.base_prefix}) {
      if (const std::string full = patchlevel_version(root, prefix, reading.minor); !full.empty()) {
        python.version = full;
        break;
      }
    }
  }
  python.site_packages = site_directories(root, env, python, reading);
  layout.complete = reading.prefix_found;
  return layout;
}

} // namespace gpucheck::probes
