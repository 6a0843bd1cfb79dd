#include "probes/path_trust.hpp"

#include <dirent.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>

namespace gpucheck::probes {

namespace {

/// The reason an entry (lstat'ed) makes the path untrusted, or nullopt.
/// `has_acl`: the entry has an access control list, whose mask its group bits show (the owning
/// group's rights are then the list's, checked by acl_problem()).
std::optional<std::string> entry_problem(const std::string& shown, const struct stat& info,
                                         uid_t uid, bool has_acl) {
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
  if ((info.st_mode & S_IWGRP) != 0 && info.st_gid != 0 && !sticky_dir && !has_acl) {
    return fmt::format("'{}' is writable by group {} (mode {:04o})", shown, info.st_gid,
                       info.st_mode & 07777);
  }
  return std::nullopt;
}

/// The reason the POSIX access control list of an entry (lstat'ed at host path `host`) lets
/// someone other than root, `uid` and root's group change it, or nullopt. With an ACL the mode's
/// group bits are its mask, not the owning group's rights, so the mode alone hides a named user
/// with write access (`setfacl -m u:mallory:rwx`). The list is read raw from its extended
/// attribute (the kernel's format: a version word, then tag, permissions and id per entry).
std::optional<std::string> acl_problem(const std::string& host, const std::string& shown,
                                       const struct stat& info, uid_t uid, bool& has_acl) {
  has_acl = false;
  if (S_ISLNK(info.st_mode)) {
    return std::nullopt; // as for the mode: a link is not changed in place
  }
  std::array<unsigned char, 8192> raw{};
  const ssize_t n = ::lgetxattr(host.c_str(), "system.posix_acl_access", raw.data(), raw.size());
  has_acl = n > 0 || (n < 0 && errno == ERANGE);
  if (S_ISDIR(info.st_mode) && (info.st_mode & S_ISVTX) != 0) {
    return std::nullopt; // sticky: others cannot replace what they do not own
  }
  if (n < 0) {
    return errno == ERANGE ? std::optional<std::string>(fmt::format(
                                 "'{}' has an access control list too long to examine", shown))
                           : std::nullopt; // none (ENODATA), or none possible here (ENOTSUP)
  }
  const auto word16 = [&raw](size_t at) {
    return static_cast<unsigned>(raw[at] | (raw[at + 1] << 8));
  };
  const auto word32 = [&raw](size_t at) {
    return static_cast<uint32_t>(raw[at]) | (static_cast<uint32_t>(raw[at + 1]) << 8) |
           (static_cast<uint32_t>(raw[at + 2]) << 16) | (static_cast<uint32_t>(raw[at + 3]) << 24);
  };
  const auto size = static_cast<size_t>(n);
  if (size < 4 || (size - 4) % 8 != 0 || word32(0) != 2) {
    return fmt::format("'{}' has an access control list that cannot be read", shown);
  }
  constexpr unsigned k_user = 0x02;
  constexpr unsigned k_group_obj = 0x04;
  constexpr unsigned k_group = 0x08;
  constexpr unsigned k_mask = 0x10;
  constexpr unsigned k_write = 0x02;
  unsigned mask = 07;
  for (size_t at = 4; at < size; at += 8) {
    if (word16(at) == k_mask) {
      mask = word16(at + 2);
    }
  }
  for (size_t at = 4; at < size; at += 8) {
    const unsigned tag = word16(at);
    const bool writes = (word16(at + 2) & mask & k_write) != 0;
    const uint32_t id = word32(at + 4);
    if (!writes) {
      continue;
    }
    if (tag == k_user && id != 0 && id != uid) {
      return fmt::format("'{}' is writable by uid {} through its access control list", shown, id);
    }
    if (tag == k_group && id != 0) {
      return fmt::format("'{}' is writable by group {} through its access control list", shown, id);
    }
    if (tag == k_group_obj && info.st_gid != 0) {
      return fmt::format("'{}' is writable by group {} through its access control list", shown,
                         info.st_gid);
    }
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
    bool has_acl = false;
    if (std::optional<std::string> problem = acl_problem(prefix, shown, info, uid, has_acl)) {
      return problem;
    }
    if (std::optional<std::string> problem = entry_problem(shown, info, uid, has_acl)) {
      return problem;
    }
    if (end == std::string_view::npos) {
      return std::nullopt;
    }
  }
}

/// More entries than any library folder holds: a folder with more is not examined, and left out.
constexpr size_t k_max_folder_entries = 65536;

/// The reason a file, a folder or a link's target inside `folder` (host path, already trusted
/// itself) is one another user could write, down to `depth` folders below (at the top only the
/// folders the loader searches); `budget` counts the entries examined.
/// Whether the loader searches a folder of this name below a search-path entry: glibc-hwcaps
/// (glibc 2.33 and later) and the legacy hardware-capability folders; no other (a folder such as
/// /usr/lib/x86_64-linux-gnu holds thousands of files in folders the loader never searches).
bool searched_below(std::string_view name) {
  static constexpr std::string_view k_searched[] = {"glibc-hwcaps", "tls",      "x86_64",
                                                    "haswell",      "avx512_1", "i686"};
  return std::find(std::begin(k_searched), std::end(k_searched), name) != std::end(k_searched);
}

std::optional<std::string> contents_problem(const std::string& folder, uid_t uid, int depth,
                                            size_t& budget, bool top = true) {
  const std::unique_ptr<DIR, int (*)(DIR*)> dir(::opendir(folder.c_str()), &::closedir);
  if (!dir) {
    return std::nullopt; // unreadable: the loader cannot read it either
  }
  while (const dirent* entry = ::readdir(dir.get())) {
    const std::string_view name = entry->d_name;
    if (name == "." || name == "..") {
      continue;
    }
    if (budget == 0) {
      return fmt::format("'{}' holds more than {} entries to examine", folder,
                         k_max_folder_entries);
    }
    --budget;
    const std::string path = folder + "/" + std::string(name);
    struct stat info {};
    if (::lstat(path.c_str(), &info) != 0) {
      continue;
    }
    bool has_acl = false;
    if (std::optional<std::string> problem = acl_problem(path, path, info, uid, has_acl)) {
      return problem;
    }
    if (std::optional<std::string> problem = entry_problem(path, info, uid, has_acl)) {
      return problem;
    }
    if (S_ISLNK(info.st_mode)) {
      char resolved[PATH_MAX];
      if (::realpath(path.c_str(), resolved) != nullptr) {
        if (std::optional<std::string> problem = chain_problem(resolved, 0, uid)) {
          return problem;
        }
        continue;
      }
      // A link to nothing yet: the folder its target would be made in must be root's too.
      std::error_code error;
      const std::filesystem::path target = std::filesystem::read_symlink(path, error);
      const std::filesystem::path parent =
          (std::filesystem::path(folder) / target).lexically_normal().parent_path();
      if (!error && ::realpath(parent.c_str(), resolved) != nullptr) {
        if (std::optional<std::string> problem = chain_problem(resolved, 0, uid)) {
          return problem;
        }
      }
    } else if (S_ISDIR(info.st_mode) && depth > 0 && (!top || searched_below(name))) {
      if (std::optional<std::string> problem =
              contents_problem(path, uid, depth - 1, budget, false)) {
        return problem;
      }
    }
  }
  return std::nullopt;
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

SearchPathFilter filter_search_path(std::string_view variable, const std::string& value,
                                    bool contents) {
  SearchPathFilter filter;
  if (!root_policy_applies()) {
    filter.kept = value;
    return filter;
  }
  const Sysroot host("/"); // the children search the host's folders, whatever --sysroot
  size_t from = 0;
  while (from <= value.size()) {
    const size_t end = std::min(value.find(':', from), value.size());
    const std::string entry = value.substr(from, end - from);
    from = end + 1;
    std::optional<std::string> problem;
    if (entry.empty() || !entry.starts_with('/')) {
      problem = "it names the working directory";
    } else {
      problem = untrusted_reason(host, entry, ::geteuid());
      char resolved[PATH_MAX];
      if (!problem && contents && ::realpath(entry.c_str(), resolved) != nullptr) {
        size_t budget = k_max_folder_entries;
        // glibc-hwcaps/x86-64-v3 and tls/x86_64 are searched below a folder: two levels.
        problem = contents_problem(resolved, ::geteuid(), 2, budget);
      }
    }
    if (!problem) {
      filter.kept += (filter.kept.empty() ? "" : ":") + entry;
      continue;
    }
    filter.notes.push_back(
        {std::string(k_root_safety_probe),
         fmt::format("left {} entry '{}' out of every child's environment as root: {}; another "
                     "user could put code there that a child would run or load",
                     variable, entry, *problem)});
  }
  return filter;
}

} // namespace gpucheck::probes
