#include "probes/paths.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>

#include <vector>

namespace gpucheck::probes {

namespace {

std::vector<std::string> split_components(std::string_view path) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= path.size()) {
    const size_t end = path.find('/', start);
    const std::string_view part =
        path.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    if (!part.empty() && part != ".") {
      if (part == "..") {
        if (!parts.empty()) {
          parts.pop_back();
        }
      } else {
        parts.emplace_back(part);
      }
    }
    if (end == std::string_view::npos) {
      break;
    }
    start = end + 1;
  }
  return parts;
}

std::string join_components(const std::vector<std::string>& parts, size_t count) {
  std::string out;
  for (size_t i = 0; i < count && i < parts.size(); ++i) {
    out += '/';
    out += parts[i];
  }
  return out.empty() ? "/" : out;
}

} // namespace

std::string join_path(std::string_view dir, std::string_view name) {
  std::string out(dir);
  while (out.size() > 1 && out.back() == '/') {
    out.pop_back();
  }
  while (!name.empty() && name.front() == '/') {
    name.remove_prefix(1);
  }
  if (out.empty() || out.back() != '/') {
    out += '/';
  }
  out += name;
  return out;
}

std::string parent_path(std::string_view path) {
  const std::string norm = normalize_path(path);
  const size_t slash = norm.rfind('/');
  return slash == 0 || slash == std::string::npos ? "/" : norm.substr(0, slash);
}

std::string base_name(std::string_view path) {
  while (path.size() > 1 && path.back() == '/') {
    path.remove_suffix(1);
  }
  const size_t slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

std::string normalize_path(std::string_view path) {
  const std::vector<std::string> parts = split_components(path);
  return join_components(parts, parts.size());
}

std::optional<std::string> resolve_path(const Sysroot& root, std::string_view absolute) {
  return root.resolve(absolute);
}

std::vector<std::string> path_components(std::string_view path) {
  return split_components(path);
}

std::string join_components(const std::vector<std::string>& parts) {
  return join_components(parts, parts.size());
}

std::string host_path(const Sysroot& root, std::string_view absolute) {
  if (root.root() == "/") {
    return std::string(absolute);
  }
  const std::string norm = normalize_path(absolute);
  if (norm == "/") {
    return root.path("/");
  }
  const std::string parent = parent_path(norm);
  const std::string resolved_parent = resolve_path(root, parent).value_or(parent);
  return root.path(join_path(resolved_parent, base_name(norm)));
}

std::vector<std::string> list_resolved(const Sysroot& root, std::string_view absolute) {
  const std::optional<std::string> real = resolve_path(root, absolute);
  return real ? root.list(*real) : std::vector<std::string>{};
}

std::optional<std::string> read_resolved(const Sysroot& root, std::string_view absolute) {
  const std::optional<std::string> real = resolve_path(root, absolute);
  return real ? root.read(*real) : std::nullopt;
}

std::optional<std::string> read_attribute(const Sysroot& root, std::string_view absolute) {
  const std::optional<std::string> real = resolve_path(root, absolute);
  return real ? root.read_line(*real) : std::nullopt;
}

PathStat stat_path(const Sysroot& root, std::string_view absolute) {
  PathStat out;
  const std::string host = host_path(root, absolute);
  struct stat lst {};
  if (::lstat(host.c_str(), &lst) == 0 && S_ISLNK(lst.st_mode)) {
    out.is_symlink = true;
  }
  // The target as the tree resolves it: an absolute link names the tree's file, not the host's.
  const std::optional<std::string> target = root.host_resolved(absolute);
  struct stat st {};
  if (!target || ::stat(target->c_str(), &st) != 0) {
    return out;
  }
  out.exists = true;
  out.is_directory = S_ISDIR(st.st_mode);
  out.is_regular = S_ISREG(st.st_mode);
  out.mode = static_cast<uint32_t>(st.st_mode & 07777);
  out.size_bytes = static_cast<uint64_t>(st.st_size);
  return out;
}

bool can_access(const Sysroot& root, std::string_view absolute, int mode) {
  const std::optional<std::string> real = root.host_resolved(absolute);
  return real && ::access(real->c_str(), mode) == 0;
}

} // namespace gpucheck::probes
