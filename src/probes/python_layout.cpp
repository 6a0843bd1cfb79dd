// Python environments: which interpreters to look at, and one environment per prefix from their
// files or their answers (see python_envs.hpp; the files are read in python_files.cpp).
#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>

#include "gpucheck/model/snapshot_limits.hpp"
#include "probes/paths.hpp"
#include "probes/python_envs.hpp"

namespace gpucheck::probes {

namespace {

std::vector<std::string> path_entries(const Environment& env) {
  std::vector<std::string> dirs;
  const std::optional<std::string> path = env.get("PATH");
  if (!path) {
    return dirs;
  }
  size_t start = 0;
  while (start <= path->size()) {
    const size_t end = std::min(path->find(':', start), path->size());
    const std::string entry = path->substr(start, end - start);
    start = end + 1;
    if (entry.starts_with('/')) {
      dirs.push_back(normalize_path(entry));
    }
  }
  return dirs;
}

void add_candidate(std::vector<PythonCandidate>& out, const std::string& interpreter,
                   const std::string& how) {
  const std::string path = normalize_path(interpreter);
  for (PythonCandidate& candidate : out) {
    if (candidate.interpreter == path) {
      if (std::find(candidate.found_by.begin(), candidate.found_by.end(), how) ==
          candidate.found_by.end()) {
        candidate.found_by.push_back(how);
      }
      return;
    }
  }
  out.push_back({path, {how}});
}

/// python3* entries of `dir` (e.g. /usr/lib -> /usr/lib/python3, /usr/lib/python3.11).
void add_python_dirs(const Sysroot& root, const std::string& dir, std::vector<std::string>& out) {
  for (const std::string& name : list_resolved(root, dir)) {
    if (name.starts_with("python3")) {
      out.push_back(join_path(dir, name));
    }
  }
}

} // namespace

bool is_script(const Sysroot& root, const std::string& path) {
  const std::optional<std::string> text = root.read(path);
  return text && text->starts_with("#!");
}

std::optional<std::string> resolve_shim(const Sysroot& root, const Environment& env,
                                        const std::string& shim) {
  const std::string name = shim.substr(shim.rfind('/') + 1);
  const std::string shims = shim.substr(0, shim.rfind('/'));
  if (!shims.ends_with("/shims")) {
    return std::nullopt;
  }
  const std::string manager_root = shims.substr(0, shims.size() - 6); // the folder above shims/
  const std::optional<std::string> text = root.read(shim);
  if (!text) {
    return std::nullopt;
  }
  // The first word of a version list ("3.11.9:3.10.14", "python 3.11.9 3.10.14").
  const auto first_word = [](std::string_view line) {
    const size_t start = line.find_first_not_of(" \t");
    if (start == std::string_view::npos) {
      return std::string();
    }
    const size_t end = line.find_first_of(" \t:\r", start);
    return std::string(line.substr(start, end == std::string_view::npos ? end : end - start));
  };
  // A version names a folder: nothing that could climb out of it.
  const auto plain = [](const std::string& version) {
    return !version.empty() && version != "system" && version.find('/') == std::string::npos &&
           version != "." && version != "..";
  };
  std::optional<std::string> interpreter;
  if (text->find("pyenv") != std::string::npos && text->find(" exec ") != std::string::npos) {
    std::string version = first_word(env.get("PYENV_VERSION").value_or(""));
    if (version.empty()) {
      version = first_word(root.read_line(join_path(manager_root, "version")).value_or(""));
    }
    if (plain(version)) {
      interpreter =
          join_path(join_path(join_path(manager_root, "versions"), version), "bin/" + name);
    }
  } else if (text->find("asdf") != std::string::npos && text->find(" exec ") != std::string::npos) {
    const std::optional<std::string> home = env.get("HOME");
    const std::optional<std::string> versions = home && home->starts_with('/')
                                                    ? root.read(join_path(*home, ".tool-versions"))
                                                    : std::nullopt;
    std::string version;
    for (size_t at = 0; versions && at < versions->size();) {
      const size_t end = std::min(versions->find('\n', at), versions->size());
      const std::string_view line = std::string_view(*versions).substr(at, end - at);
      if (line.starts_with("python ") || line.starts_with("python\t")) {
        version = first_word(line.substr(6));
        break;
      }
      at = end + 1;
    }
    if (plain(version)) {
      interpreter = join_path(manager_root, "installs/python/" + version + "/bin/" + name);
    }
  }
  if (interpreter && stat_path(root, *interpreter).is_regular) {
    return interpreter;
  }
  return std::nullopt;
}

std::vector<PythonCandidate> find_python_candidates(const Sysroot& root, const Environment& env,
                                                    const std::vector<std::string>& extra) {
  std::vector<PythonCandidate> out;
  for (const char* name : {"python3", "python"}) {
    for (const std::string& dir : path_entries(env)) {
      const std::string candidate = join_path(dir, name);
      if (stat_path(root, candidate).is_regular) {
        // A version manager's shim stands for the interpreter it would pick: that one is the
        // candidate (the shim itself, a script, would be run by whatever PATH finds first).
        if (const std::optional<std::string> real =
                is_script(root, candidate) ? resolve_shim(root, env, candidate) : std::nullopt) {
          add_candidate(out, *real, "PATH (shim " + candidate + ")");
        } else {
          add_candidate(out, candidate, "PATH");
        }
        break;
      }
    }
  }
  for (const char* var : {"VIRTUAL_ENV", "CONDA_PREFIX"}) {
    const std::optional<std::string> prefix = env.get(var);
    if (!prefix || !prefix->starts_with('/')) {
      continue;
    }
    for (const char* name : {"bin/python", "bin/python3"}) {
      const std::string candidate = join_path(*prefix, name);
      if (stat_path(root, candidate).is_regular) {
        add_candidate(out, candidate, var);
        break;
      }
    }
  }
  for (const std::string& path : extra) {
    add_candidate(out, path, "--python");
  }
  return out;
}

std::optional<InterpreterAnswer> parse_interpreter_answer(const nlohmann::json& payload) {
  if (!payload.is_object() || !payload.contains("prefix") || !payload["prefix"].is_string()) {
    return std::nullopt;
  }
  InterpreterAnswer answer;
  answer.prefix = normalize_path(payload["prefix"].get<std::string>());
  // An interpreter that answers with wrong types is a bad answer, not an exception (one made
  // the run exit 3).
  const auto text = [&payload](const char* key, const std::string& fallback) {
    const auto it = payload.find(key);
    return it != payload.end() && it->is_string() ? it->get<std::string>() : fallback;
  };
  answer.base_prefix = text("base_prefix", answer.prefix);
  answer.version = text("version", std::string{});
  if (const auto it = payload.find("site_packages"); it != payload.end() && it->is_array()) {
    for (const nlohmann::json& entry : *it) {
      if (entry.is_string() && entry.get<std::string>().starts_with('/')) {
        answer.site_packages.push_back(normalize_path(entry.get<std::string>()));
      }
    }
  }
  return answer;
}

std::vector<std::string> python_lib_dirs(const Sysroot& root, const Environment& env) {
  std::vector<std::string> python_dirs;
  for (const char* var : {"VIRTUAL_ENV", "CONDA_PREFIX"}) {
    if (const std::optional<std::string> prefix = env.get(var);
        prefix && prefix->starts_with('/')) {
      add_python_dirs(root, join_path(*prefix, "lib"), python_dirs);
    }
  }
  // Environments whose interpreter is on PATH without being activated (a container's
  // PATH=/opt/venv/bin:..., conda's base): a bin/ beside pyvenv.cfg or conda-meta/.
  for (const std::string& entry : path_entries(env)) {
    if (!entry.ends_with("/bin")) {
      continue;
    }
    const std::string prefix = entry.substr(0, entry.size() - 4);
    if (root.exists(join_path(prefix, "pyvenv.cfg")) ||
        root.exists(join_path(prefix, "conda-meta"))) {
      add_python_dirs(root, join_path(prefix, "lib"), python_dirs);
    }
  }
  std::vector<std::string> pyenv_roots;
  if (const std::optional<std::string> home = env.get("HOME"); home && home->starts_with('/')) {
    add_python_dirs(root, join_path(*home, ".local/lib"), python_dirs);
    pyenv_roots.push_back(join_path(*home, ".pyenv"));
  }
  if (const std::optional<std::string> pyenv = env.get("PYENV_ROOT");
      pyenv && pyenv->starts_with('/')) {
    pyenv_roots.push_back(*pyenv);
  }
  pyenv_roots.emplace_back("/root/.pyenv");
  add_python_dirs(root, "/usr/lib", python_dirs);
  add_python_dirs(root, "/usr/local/lib", python_dirs);
  for (const std::string& pyenv : pyenv_roots) {
    const std::string versions = join_path(pyenv, "versions");
    for (const std::string& version : list_resolved(root, versions)) {
      add_python_dirs(root, join_path(join_path(versions, version), "lib"), python_dirs);
    }
  }
  return python_dirs;
}

std::vector<std::string> split_library_path(const std::optional<std::string>& value) {
  std::vector<std::string> dirs;
  if (!value) {
    return dirs;
  }
  // glibc splits on ':' and ';'. Empty and relative entries name the working directory, which a
  // probe cannot place inside a sysroot.
  size_t start = 0;
  while (start <= value->size()) {
    const size_t end = std::min(value->find_first_of(":;", start), value->size());
    const std::string entry = value->substr(start, end - start);
    start = end + 1;
    if (entry.starts_with('/')) {
      dirs.push_back(normalize_path(entry));
    }
  }
  return dirs;
}

std::vector<PythonEnvironment>
build_python_environments(const Sysroot& root, const Environment& env,
                          const std::vector<PythonCandidate>& candidates,
                          const std::vector<std::optional<InterpreterAnswer>>& answers,
                          const std::vector<std::optional<ChildFailure>>& failures) {
  std::vector<PythonEnvironment> out;
  for (size_t i = 0; i < candidates.size(); ++i) {
    PythonEnvironment python = read_python_layout(root, env, candidates[i]).environment;
    const std::optional<InterpreterAnswer>* answer = i < answers.size() ? &answers[i] : nullptr;
    if (answer != nullptr && answer->has_value()) {
      const InterpreterAnswer& said = **answer;
      python.source = "interpreter";
      python.prefix = said.prefix;
      python.base_prefix = said.base_prefix;
      if (!said.version.empty()) {
        python.version = said.version;
      }
      if (said.prefix != said.base_prefix && python.kind == "system") {
        python.kind = "venv";
      }
      python.site_packages.clear();
      for (const std::string& dir : said.site_packages) {
        if (root.is_directory(dir) &&
            std::find(python.site_packages.begin(), python.site_packages.end(), dir) ==
                python.site_packages.end()) {
          python.site_packages.push_back(dir);
        }
      }
    } else if (i < failures.size()) {
      python.query_failure = failures[i];
    }
    // Two interpreters of one environment (python and python3, PATH and $VIRTUAL_ENV) are one.
    auto same = std::find_if(out.begin(), out.end(), [&](const PythonEnvironment& seen) {
      return seen.prefix == python.prefix && stat_path(root, python.interpreter).exists &&
             stat_path(root, seen.interpreter).exists;
    });
    if (same != out.end()) {
      for (const std::string& how : python.found_by) {
        if (std::find(same->found_by.begin(), same->found_by.end(), how) == same->found_by.end()) {
          same->found_by.push_back(how);
        }
      }
      continue;
    }
    out.push_back(std::move(python));
  }
  const std::vector<LdconfigEntry> loader_cache =
      out.empty() ? std::vector<LdconfigEntry>{} : read_loader_cache(root);
  for (PythonEnvironment& python : out) {
    python.distributions = read_distributions(root, python.site_packages);
    python.frameworks = find_frameworks(root, python, env.get("LD_LIBRARY_PATH"), loader_cache);
  }
  return out;
}

FrameworkImport parse_import_result(const std::string& framework, const nlohmann::json* payload,
                                    const std::optional<ChildFailure>& failure) {
  FrameworkImport result;
  result.framework = framework;
  if (payload == nullptr || !payload->is_object()) {
    result.failure =
        failure ? failure
                : std::optional<ChildFailure>(ChildFailure{.kind = ChildFailureKind::bad_output,
                                                           .detail = "no result from the script"});
    return result;
  }
  const nlohmann::json& p = *payload;
  auto text = [&](const char* key) {
    const auto it = p.find(key);
    return it != p.end() && it->is_string() ? it->get<std::string>() : std::string{};
  };
  auto strings = [&](const char* key) {
    std::vector<std::string> out;
    if (const auto it = p.find(key); it != p.end() && it->is_array()) {
      for (const nlohmann::json& entry : *it) {
        if (entry.is_string()) {
          out.push_back(entry.get<std::string>());
        }
      }
    }
    return out;
  };
  result.error = text("error");
  result.version = text("version");
  if (const auto it = p.find("gpu_available"); it != p.end() && it->is_boolean()) {
    result.gpu_available = it->get<bool>();
  }
  if (const auto it = p.find("device_count"); it != p.end() && it->is_number_integer()) {
    result.device_count = it->get<int>();
  }
  if (const auto it = p.find("op_ok"); it != p.end() && it->is_boolean()) {
    result.op_ok = it->get<bool>();
  }
  if (const auto it = p.find("cudnn_version"); it != p.end() && !it->is_null()) {
    result.cudnn_version = it->is_string() ? it->get<std::string>() : it->dump();
  }
  if (const auto it = p.find("seconds"); it != p.end() && it->is_number()) {
    result.seconds = snapshot_float(it->get<double>()).value_or(0.0);
  }
  result.arch_list = strings("arch_list");
  result.mapped_libraries = strings("mapped_libraries");
  return result;
}

} // namespace gpucheck::probes
