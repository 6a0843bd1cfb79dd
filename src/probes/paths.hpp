#pragma once
/// Path helpers over a Sysroot: symlink resolution that stays inside the root, file modes and
/// access checks. Paths in and out are system paths ("/usr/lib/x.so"), never host paths.

#include <optional>
#include <string>
#include <string_view>
#include <sys/types.h>
#include <vector>

#include "probes/sysroot.hpp"

namespace gpucheck::probes {

/// "a" + "b" -> "a/b" (one slash between them).
std::string join_path(std::string_view dir, std::string_view name);

/// The directory part of a path: "/a/b/c" -> "/a/b", "/a" -> "/".
std::string parent_path(std::string_view path);

/// The last component: "/a/b/c.so" -> "c.so".
std::string base_name(std::string_view path);

/// The components of a path, lexically normalised ("." dropped, ".." removing the one before,
/// never climbing above "/"): "/a/./b/../c" -> {"a", "c"}.
std::vector<std::string> path_components(std::string_view path);

/// "/" + the components joined by "/" ("/" for none).
std::string join_components(const std::vector<std::string>& parts);

/// Lexically normalised absolute path: "//a/./b/../c/" -> "/a/c".
std::string normalize_path(std::string_view path);

/// Sysroot::resolve: every symlink followed, absolute link targets taken relative to the sysroot.
std::optional<std::string> resolve_path(const Sysroot& root, std::string_view absolute);

/// The host path for `absolute` with its directory part resolved inside the sysroot (the last
/// component is kept, so lstat still sees a final symlink). On the real root: `absolute`.
std::string host_path(const Sysroot& root, std::string_view absolute);

/// Sysroot::list of the directory `absolute` after resolving it inside the sysroot.
std::vector<std::string> list_resolved(const Sysroot& root, std::string_view absolute);

/// Sysroot::read of the file `absolute` after resolving it inside the sysroot.
std::optional<std::string> read_resolved(const Sysroot& root, std::string_view absolute);

/// First line (trimmed) of a small file such as a sysfs attribute (Sysroot::read_line);
/// nullopt when the file cannot be read.
std::optional<std::string> read_attribute(const Sysroot& root, std::string_view absolute);

/// lstat/stat results for a system path.
struct PathStat {
  bool exists = false;
  bool is_symlink = false; ///< the path itself is a symlink (lstat)
  bool is_directory = false;
  bool is_regular = false;
  uint32_t mode = 0;       ///< st_mode & 07777 of the target
  uint64_t size_bytes = 0; ///< of the target
};

/// stat() of the target (and lstat() for is_symlink); exists == false when absent or dangling.
PathStat stat_path(const Sysroot& root, std::string_view absolute);

/// access(2) on the host path for this process's real user: R_OK, W_OK, X_OK as `mode`.
bool can_access(const Sysroot& root, std::string_view absolute, int mode);

} // namespace gpucheck::probes
