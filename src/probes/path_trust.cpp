#include "probes/path_trust.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

namespace gpucheck::probes {

namespace {

/// The reason an entry (lstat'ed) makes the path untrusted, or nullopt.
std::optional<std::string> entry_problem(const std::string& shown, const struct stat& info,
                                         uid_t uid) {
  if (info.st_uid != 0 && info.st_uid != uid) {
    return fmt::format("'{}' is owned by uid {}", shown, info.st_uid);
  }
  if (S_ISLNK(info.st_mode)) {
    return std::nullopt; // a link cannot be changed in place; its directory and target count
  }
  const bool sticky_dir = S_ISDIR(info.st_mode) && (info.st_mode & S_ISVTX) != 0;
  if ((info.st_mode & S_IWOTH) != 0 && !sticky_dir) {
    return fmt::format("'{}' is writable by every user (mode {:04o})", shown, info.st_mode & 07777);
  }
  if ((info.st_mode & S_IWGRP) != 0 && info.st_gid != 0 && !sticky_dir) {
    return fmt::format("'{}' is writable by group {} (mode {:04o})", shown, info.st_gid,
                       info.st_mode & 07777);
  }
  return std::nullopt;
}

/// Check every component of the absolute host path `host` ("/", "/a", "/a/b", ...), not
/// following links; `strip` is the sysroot prefix left out of the names shown.
std::optional<std::string> chain_problem(std::string_view host, size_t strip, uid_t uid) {
  size_t end = 0;
  while (true) {
    end = host.find('/', end + 1);
    const std::string_view prefix_view = end == std::string_view::npos ? host : host.substr(0, end);
    const std::string prefix = prefix_view.empty() ? std::string("/") : std::string(prefix_view);
    std::string shown = "/";
    if (prefix_view.size() > strip) {
      shown.assign(prefix_view.begin() + static_cast<std::ptrdiff_t>(strip), prefix_view.end());
    }
    struct stat info {};
    if (::lstat(prefix.c_str(), &info) != 0) {
      return fmt::format("'{}' cannot be examined ({})", shown, std::strerror(errno));
    }
    if (std::optional<std::string> problem = entry_problem(shown, info, uid)) {
      return problem;
    }
    if (end == std::string_view::npos) {
      return std::nullopt;
    }
  }
}

} // namespace

bool root_policy_applies() {
  if (::geteuid() == 0) {
    return true;
  }
  const char* hook = std::getenv("GPUCHECK_TEST_TREAT_AS_ROOT");
  return hook != nullptr && std::string_view(hook) == "1";
}

std::optional<std::string> untrusted_reason(const Sysroot& root, const std::string& path,
                                            uid_t uid) {
  if (!path.starts_with('/')) {
    return fmt::format("'{}' is not an absolute path", path);
  }
  const std::string host = root.path(path);
  const size_t strip = root.root() == "/" ? 0 : root.root().size();
  // The path as found: a directory on the way that another user may write could swap in a link.
  if (std::optional<std::string> problem = chain_problem(host, strip, uid)) {
    return problem;
  }
  // The path with its links resolved: what would really run. (realpath follows at most the
  // kernel's link limit; a loop is an error, not a hang.)
  // In a tree, links resolve inside it (an absolute link names the tree's file).
  if (root.root() != "/") {
    const std::optional<std::string> resolved = root.host_resolved(path);
    if (!resolved) {
      return fmt::format("'{}' cannot be resolved inside '{}'", path, root.root());
    }
    return chain_problem(*resolved, strip, uid);
  }
  char resolved[PATH_MAX];
  if (::realpath(host.c_str(), resolved) == nullptr) {
    return fmt::format("'{}' cannot be resolved ({})", path, std::strerror(errno));
  }
  return chain_problem(std::string_view(resolved), 0, uid);
}

bool may_run_as_root(const Sysroot& root, const std::string& path, std::string_view what,
                     std::vector<ProbeIssue>& notes) {
  if (!root_policy_applies()) {
    return true;
  }
  const std::optional<std::string> problem = untrusted_reason(root, path, ::geteuid());
  if (!problem) {
    return true;
  }
  ProbeIssue note{std::string(k_root_safety_probe),
                  fmt::format("did not {} '{}' as root: {}; another user could have put code there",
                              what, path, *problem)};
  // Once per path and purpose: an interpreter asked about by two steps is named once.
  if (std::find(notes.begin(), notes.end(), note) == notes.end()) {
    notes.push_back(std::move(note));
  }
  return false;
}

} // namespace gpucheck::probes
