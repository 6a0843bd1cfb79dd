#pragma once
/// Writing one output file (--output, --bundle, snapshot -o) safely, also as root
/// (docs/security.md, "Output files"): the path is walked one folder at a time without
/// following a link another user owns (a link of root's or the runner's is followed); a regular
/// file (or a new name) is replaced atomically through a temporary file of a random name created
/// with O_EXCL in the same folder; a character device or a FIFO of root's or the runner's
/// (/dev/null, a named pipe, /dev/stdout) is written into directly, a FIFO opened when the path
/// is checked, before the probes; anything else (another user's link, device or FIFO, a link to
/// a file, a dangling link, a block device, a socket, a directory) is refused and never
/// replaced.

#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>

namespace gpucheck::cli {

/// What a path names now, for writing.
enum class OutputFileKind {
  replace, ///< a regular file or no file yet: written through a temporary file and rename
  stream,  ///< a character device or a FIFO (also through a link, e.g. /dev/stdout): written in
  refused, ///< something gpucheck will not write or replace
};

/// Why a write failed. `refused`: the path was not acceptable or could not be created (a usage
/// problem, exit 2); otherwise the data could not be written (disk full, I/O error: exit 3).
struct WriteError {
  std::string message; ///< "cannot write 'PATH': REASON"
  bool refused = false;
};

/// How `path` would be written, and when refused, why (`reason`, without the path).
struct OutputFileClass {
  OutputFileKind kind = OutputFileKind::refused;
  std::string reason;
};

/// Classify `path` without writing anything: its directory must exist and be writable for a new
/// or regular file; a character device or FIFO must exist (and a FIFO have a reader when it is
/// opened later); everything else is refused with a reason.
/// `as`: the user whose links, devices and FIFOs count as the runner's (tests; the effective uid
/// when unset).
OutputFileClass classify_output_path(const std::string& path, std::optional<uid_t> as = {});

/// nullopt when `path` can be written now (classify_output_path), else "cannot write 'PATH':
/// REASON".
std::optional<std::string> output_path_problem(const std::string& path);

/// Write `data` to `path` as classify_output_path says: a regular file is replaced atomically
/// (temporary file created O_CREAT|O_EXCL with a random name and mode 0666 less the umask in the
/// target's directory, written, fsync'd, renamed over the target; removed on any failure, the
/// old file left as it was); a device or FIFO is opened without O_CREAT and written in. Every
/// short write, ENOSPC (/dev/full), EIO or failed fsync/close is reported. nullopt on success.
std::optional<WriteError> write_output_file(const std::string& path, std::string_view data,
                                            std::optional<uid_t> as = {});

} // namespace gpucheck::cli
