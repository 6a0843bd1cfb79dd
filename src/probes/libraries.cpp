// discover_libraries: every copy on disk of libcuda, NVML, cudart, cuDNN, cuBLAS and NCCL, where
// it came from, and which one the dynamic loader would pick. Facts only; checks judge them.
//
// Where it looks (methods.md §7.4), in this order, each directory listed once (no recursion):
//   LD_LIBRARY_PATH entries ("LD_LIBRARY_PATH"), the loader cache ("ldconfig"),
//   /usr/local/cuda{,-*}, $CUDA_HOME, $CUDA_PATH: lib64, lib, targets/*/lib, compat
//   ("cuda_toolkit"), distribution directories ("system"), $CONDA_PREFIX/lib ("conda"), and
//   nvidia/*/lib under the site-packages/dist-packages of $VIRTUAL_ENV, $CONDA_PREFIX, ~/.local,
//   /usr/lib, /usr/local/lib, pyenv versions and virtual environments whose bin/ is on PATH
//   ("pip").
// The loader cache comes from read_loader_cache (ldconfig_cache.hpp); the Python directories from
// python_lib_dirs (python_envs.hpp), which the framework probe shares.
#include <map>
#include <set>

#include "probes/collect.hpp"
#include "probes/elf_soname.hpp"
#include "probes/ldconfig_cache.hpp"
#include "probes/library_names.hpp"
#include "probes/paths.hpp"
#include "probes/python_envs.hpp"
#include "probes/run_capture.hpp"
#include "probes/toolkit_version.hpp"

namespace gpucheck::probes {

namespace {

std::vector<std::string> split_any(std::string_view text, std::string_view separators) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (;;) {
    const size_t end = text.find_first_of(separators, start);
    parts.emplace_back(text.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos) {
      return parts;
    }
    start = end + 1;
  }
}

struct Found {
  LibraryCopy copy;
  std::string soname; ///< from the ELF header, else guessed from the file name
};

class Discovery {
public:
  Discovery(const Sysroot& root, const Environment& env) : m_root(root), m_env(env) {}

  std::vector<LibraryFamily> run() {
    m_loader_cache = read_loader_cache(m_root);
    for (const std::string& dir : ld_library_path()) {
      scan_dir(dir, "LD_LIBRARY_PATH");
    }
    for (const LdconfigEntry& entry : m_loader_cache) {
      for (const LibraryFamilySpec& spec : library_family_specs()) {
        if (is_family_file(entry.name, spec.stem)) {
          add(spec, entry.path, "ldconfig");
        }
      }
    }
    for (const std::string& dir : toolkit_dirs()) {
      scan_dir(dir, "cuda_toolkit");
    }
    for (const char* dir :
         {"/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib/aarch64-linux-gnu",
          "/usr/local/nvidia/lib64", "/usr/local/nvidia/lib", "/usr/lib/wsl/lib"}) {
      scan_dir(dir, "system");
    }
    if (const std::optional<std::string> conda = m_env.get("CONDA_PREFIX");
        conda && conda->starts_with('/')) {
      scan_dir(join_path(*conda, "lib"), "conda");
    }
    for (const std::string& dir : wheel_dirs()) {
      scan_dir(dir, "pip");
    }
    return families();
  }

private:
  std::vector<std::string> ld_library_path() const {
    std::vector<std::string> dirs;
    if (const std::optional<std::string> value = m_env.get("LD_LIBRARY_PATH")) {
      // glibc splits on ':' and ';'. Empty and relative entries name the working directory,
      // which a probe cannot place inside a sysroot: they are left to the checks (the raw
      // variable is in the environment facts).
      for (const std::string& dir : split_any(*value, ":;")) {
        if (dir.starts_with('/')) {
          dirs.push_back(normalize_path(dir));
        }
      }
    }
    return dirs;
  }

  std::vector<std::string> toolkit_dirs() const {
    std::vector<std::string> roots;
    for (const std::string& name : list_resolved(m_root, "/usr/local")) {
      if (name == "cuda" || name.starts_with("cuda-")) {
        roots.push_back(join_path("/usr/local", name));
      }
    }
    for (const char* var : {"CUDA_HOME", "CUDA_PATH"}) {
      if (const std::optional<std::string> home = m_env.get(var); home && home->starts_with('/')) {
        roots.push_back(normalize_path(*home));
      }
    }
    std::vector<std::string> dirs;
    for (const std::string& root : roots) {
      dirs.push_back(join_path(root, "lib64"));
      dirs.push_back(join_path(root, "lib"));
      for (const std::string& target : list_resolved(m_root, join_path(root, "targets"))) {
        dirs.push_back(join_path(join_path(join_path(root, "targets"), target), "lib"));
      }
      dirs.push_back(join_path(root, "compat"));
    }
    return dirs;
  }

  std::vector<std::string> wheel_dirs() const {
    const std::vector<std::string> python_dirs = python_lib_dirs(m_root, m_env);
    std::vector<std::string> dirs;
    for (const std::string& python : python_dirs) {
      for (const char* site : {"site-packages", "dist-packages"}) {
        const std::string nvidia = join_path(join_path(python, site), "nvidia");
        // nvidia/cudnn/lib, nvidia/cublas/lib, ... (CUDA 12 wheels) and nvidia/cu13/lib.
        for (const std::string& wheel : list_resolved(m_root, nvidia)) {
          dirs.push_back(join_path(join_path(nvidia, wheel), "lib"));
        }
      }
    }
    return dirs;
  }

  void scan_dir(const std::string& dir, const char* origin) {
    // The same directory reached twice (cuda -> cuda-13.0, lib64 -> lib) is listed once.
    const std::optional<std::string> real_dir = resolve_path(m_root, dir);
    if (!real_dir || !m_scanned_dirs.insert(*real_dir).second) {
      return;
    }
    for (const std::string& name : m_root.list(*real_dir)) {
      for (const LibraryFamilySpec& spec : library_family_specs()) {
        if (is_family_file(name, spec.stem)) {
          add(spec, join_path(dir, name), origin);
        }
      }
    }
  }

  void add(const LibraryFamilySpec& spec, const std::string& path, const char* origin) {
    const std::optional<std::string> real = resolve_path(m_root, path);
    if (!real || !stat_path(m_root, *real).is_regular) {
      return;
    }
    std::vector<Found>& found = m_found[std::string(spec.family)];
    const std::string name = base_name(path);
    for (Found& existing : found) {
      if (existing.copy.real_path == *real) {
        // Same file again: prefer the entry the loader opens (named like the SONAME) when both
        // sit in the same directory; origin stays the first one.
        if (name == existing.soname && base_name(existing.copy.path) != existing.soname &&
            parent_path(existing.copy.path) == parent_path(path)) {
          existing.copy.path = path;
        }
        return;
      }
    }
    Found entry;
    entry.copy.path = path;
    entry.copy.real_path = *real;
    entry.copy.origin = origin;
    const std::string real_name = base_name(*real);
    entry.soname = read_elf_soname(m_root.path(*real)).value_or(guess_soname(spec, real_name));
    entry.copy.version = copy_version(spec, *real);
    found.push_back(std::move(entry));
  }

  /// Version from the real file name, made precise by the wheel metadata next to it when the
  /// file name carries only the major (wheel-installed libcudnn.so.9 -> "9.19.0").
  std::string copy_version(const LibraryFamilySpec& spec, const std::string& real) const {
    const std::string from_name = version_from_file_name(base_name(real), spec.stem);
    if (spec.dist_base.empty() || from_name.find('.') != std::string::npos) {
      return from_name;
    }
    const std::string dir = parent_path(real);
    std::vector<std::string> metadata_dirs = {join_path(parent_path(dir), "dist-info")};
    if (base_name(parent_path(parent_path(dir))) == "nvidia") {
      metadata_dirs.push_back(parent_path(parent_path(parent_path(dir)))); // site-packages
    }
    for (const std::string& metadata : metadata_dirs) {
      const std::optional<std::string> wheel =
          find_dist_info_version(m_root, metadata, spec.dist_base, base_name(real));
      if (wheel &&
          (from_name.empty() || *wheel == from_name || wheel->starts_with(from_name + "."))) {
        return trim_version(*wheel, spec.dist_version_parts);
      }
    }
    return from_name;
  }

  /// The real file the loader opens for `soname`: LD_LIBRARY_PATH, then the cache, then the
  /// default directories. (The caller's DT_RPATH/DT_RUNPATH are not modelled: gpucheck has none.)
  std::optional<std::string> loader_choice(const std::string& soname) const {
    auto regular = [&](const std::string& path) -> std::optional<std::string> {
      std::optional<std::string> real = resolve_path(m_root, path);
      if (real && stat_path(m_root, *real).is_regular) {
        return real;
      }
      return std::nullopt;
    };
    for (const std::string& dir : ld_library_path()) {
      if (std::optional<std::string> real = regular(join_path(dir, soname))) {
        return real;
      }
    }
    for (const LdconfigEntry& entry : m_loader_cache) {
      if (entry.name == soname) {
        if (std::optional<std::string> real = regular(entry.path)) {
          return real;
        }
      }
    }
    for (const char* dir : {"/lib", "/usr/lib"}) {
      if (std::optional<std::string> real = regular(join_path(dir, soname))) {
        return real;
      }
    }
    return std::nullopt;
  }

  std::vector<LibraryFamily> families() {
    std::vector<LibraryFamily> out;
    for (const LibraryFamilySpec& spec : library_family_specs()) {
      LibraryFamily family;
      family.family = std::string(spec.family);
      std::vector<Found>& found = m_found[family.family];
      std::map<std::string, std::optional<std::string>> choice; // soname -> winning real path
      for (Found& entry : found) {
        if (entry.soname.empty()) {
          family.copies.push_back(std::move(entry.copy));
          continue;
        }
        auto it = choice.find(entry.soname);
        if (it == choice.end()) {
          it = choice.emplace(entry.soname, loader_choice(entry.soname)).first;
        }
        entry.copy.selected = it->second && *it->second == entry.copy.real_path;
        entry.copy.shadowed = it->second && !entry.copy.selected;
        family.copies.push_back(std::move(entry.copy));
      }
      out.push_back(std::move(family));
    }
    return out;
  }

  const Sysroot& m_root;
  const Environment& m_env;
  std::vector<LdconfigEntry> m_loader_cache;
  std::set<std::string> m_scanned_dirs;
  std::map<std::string, std::vector<Found>> m_found; // family -> copies in discovery order
};

} // namespace

std::vector<LibraryFamily> discover_libraries(const Sysroot& root, const Environment& env) {
  return Discovery(root, env).run();
}

} // namespace gpucheck::probes
