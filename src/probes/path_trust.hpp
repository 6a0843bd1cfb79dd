#pragma once
/// What gpucheck may run or load when it runs as root (docs/security.md, "Nothing from
/// user-writable places as root"): a program or library is trusted only when the file and every
/// directory above it (as found and after resolving links) can be changed by nobody but root and
/// the running user. Anything else another user could have planted, and root would run it.

#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpucheck/model/snapshot.hpp"
#include "probes/sysroot.hpp"

namespace gpucheck::probes {

/// The ProbeIssue "probe" under which refusals are listed: a stable name (docs/security.md).
inline constexpr std::string_view k_root_safety_probe = "root_safety";

/// Whether the root policy applies: the effective uid is 0, or the test hook
/// GPUCHECK_TEST_TREAT_AS_ROOT=1 is set (it can only make gpucheck run less).
bool root_policy_applies();

/// nullopt when `path` (a system path under `root`) may be run or loaded by user `uid`; else why
/// not, e.g. "directory '/home/bob' is owned by uid 1000" or "'/opt/x/bin/nvcc' is writable by
/// others (mode 0777)". Checked on the path as found (each directory, links not followed) and on
/// the path with every link resolved (each directory and the file). The owner must be root or
/// `uid`; group or others may not write, except a group-writable entry whose group is root's and
/// a directory with the sticky bit (like /tmp: others cannot replace what they do not own). A
/// path that cannot be examined is untrusted.
std::optional<std::string> untrusted_reason(const Sysroot& root, const std::string& path,
                                            uid_t uid);

/// The root policy for one program or library: true when it may run (policy off, or trusted);
/// false after adding a ProbeIssue {root_safety, "did not WHAT 'PATH' as root: REASON"} to
/// `notes`.
bool may_run_as_root(const Sysroot& root, const std::string& path, std::string_view what,
                     std::vector<ProbeIssue>& notes);

/// A search path (LD_LIBRARY_PATH, PATH) named `variable` under the root policy: the value with
/// every entry left out that another user could write (or that cannot be examined), and every
/// empty or relative entry (those are read from the working directory); one root_safety note per
/// entry left out. With the policy off `kept` is the value and there are no notes.
/// `contents`: a folder is also left out when a file in it (or in its folders below, such as
/// glibc-hwcaps/x86-64-v3), or the target of a link in it, is one another user could write: the
/// loader takes libraries and their dependencies from there, whoever owns the folder.
struct SearchPathFilter {
  std::string kept;
  std::vector<ProbeIssue> notes;
};
SearchPathFilter filter_search_path(std::string_view variable, const std::string& value,
                                    bool contents = false);

} // namespace gpucheck::probes
