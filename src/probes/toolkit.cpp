// probe_toolkit: where nvcc is, which toolkit it belongs to, and every toolkit under /usr/local,
// read from version files (no exec) where the toolkit has them.
#include <algorithm>
#include <set>

#include "probes/collect.hpp"
#include "probes/path_trust.hpp"
#include "probes/paths.hpp"
#include "probes/run_capture.hpp"
#include "probes/toolkit_version.hpp"

namespace gpucheck::probes {

namespace {

using namespace std::chrono_literals;

constexpr std::chrono::milliseconds k_nvcc_deadline = 3000ms;

std::vector<std::string> split(std::string_view text, char separator) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (;;) {
    const size_t end = text.find(separator, start);
    parts.emplace_back(text.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos) {
      return parts;
    }
    start = end + 1;
  }
}

bool is_executable_file(const Sysroot& root, const std::string& path) {
  const PathStat st = stat_path(root, path);
  return st.exists && st.is_regular && (st.mode & 0111) != 0;
}

/// nvcc the way a shell finds it (PATH, absolute entries only), then under $CUDA_HOME and
/// $CUDA_PATH (where build tools such as torch.utils.cpp_extension look).
std::optional<std::string> find_nvcc(const Sysroot& root, const Environment& env) {
  if (const std::optional<std::string> path = env.get("PATH")) {
    for (const std::string& dir : split(*path, ':')) {
      if (!dir.starts_with('/')) {
        continue;
      }
      const std::string candidate = join_path(dir, "nvcc");
      if (is_executable_file(root, candidate)) {
        return candidate;
      }
    }
  }
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"}) {
    if (const std::optional<std::string> home = env.get(var); home && home->starts_with('/')) {
      const std::string candidate = join_path(join_path(*home, "bin"), "nvcc");
      if (is_executable_file(root, candidate)) {
        return candidate;
      }
    }
  }
  return std::nullopt;
}

/// A directory that holds a toolkit (or its runtime part, as in CUDA base container images).
bool looks_like_toolkit(const Sysroot& root, const std::string& dir) {
  for (const char* marker : {"version.json", "version.txt", "bin/nvcc", "lib64", "targets"}) {
    if (stat_path(root, join_path(dir, marker)).exists) {
      return true;
    }
  }
  return false;
}

} // namespace

ToolkitInfo probe_toolkit(const Sysroot& root, const Environment& env,
                          std::vector<ProbeIssue>* notes) {
  ToolkitInfo info;
  info.cuda_home = env.get("CUDA_HOME");
  info.cuda_path = env.get("CUDA_PATH");

  std::optional<std::string> nvcc_toolkit;
  if ((info.nvcc_path = find_nvcc(root, env))) {
    const std::string real = resolve_path(root, *info.nvcc_path).value_or(*info.nvcc_path);
    nvcc_toolkit = parent_path(parent_path(real)); // <toolkit>/bin/nvcc
    info.nvcc_version = read_toolkit_version(root, *nvcc_toolkit);
    std::vector<ProbeIssue> refused;
    if (!info.nvcc_version && root.root() == "/" &&
        may_run_as_root(root, *info.nvcc_path, "run nvcc", notes != nullptr ? *notes : refused)) {
      // No version file next to it (a distribution's nvcc in /usr/bin): ask nvcc itself.
      if (const std::optional<std::string> out =
              run_capture({real, "--version"}, k_nvcc_deadline)) {
        info.nvcc_version = parse_nvcc_version_output(*out);
      }
    }
  }

  std::vector<std::string> candidates;
  for (const std::string& name : list_resolved(root, "/usr/local")) {
    if (name == "cuda" || name.starts_with("cuda-")) {
      candidates.push_back(join_path("/usr/local", name));
    }
  }
  for (const std::optional<std::string>* var : {&info.cuda_home, &info.cuda_path}) {
    if (*var && (*var)->starts_with('/')) {
      candidates.push_back(normalize_path(**var));
    }
  }
  if (nvcc_toolkit && *nvcc_toolkit != "/usr" && *nvcc_toolkit != "/") {
    candidates.push_back(*nvcc_toolkit);
  }
  std::set<std::string> seen;
  for (const std::string& candidate : candidates) {
    const std::optional<std::string> real = resolve_path(root, candidate);
    if (!real || !root.is_directory(*real) || !seen.insert(*real).second ||
        !looks_like_toolkit(root, *real)) {
      continue;
    }
    info.installs.push_back({*real, read_toolkit_version(root, *real).value_or("")});
  }
  return info;
}

} // namespace gpucheck::probes
