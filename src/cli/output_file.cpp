#include "cli/output_file.hpp"

#include <fcntl.h>
#include <pwd.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <array>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <map>
#include <random>
#include <utility>
#include <variant>
#include <vector>

namespace gpucheck::cli {

namespace {

/// A temporary name keeps at most this much of the target's name, so that it stays below
/// NAME_MAX (255) with its prefix and random suffix.
constexpr size_t k_max_name_in_temporary = 200;

std::string directory_of(const std::string& path) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  return parent.empty() ? "." : parent.string();
}

/// The descriptor that /dev/stdout, /dev/stderr, /dev/fd/N and /proc/self/fd/N name: written in
/// directly, whatever it is (`--output json:/dev/stdout > file` appends to the shell's file).
std::optional<int> standard_stream_fd(std::string_view path) {
  if (path == "/dev/stdout") {
    return STDOUT_FILENO;
  }
  if (path == "/dev/stderr") {
    return STDERR_FILENO;
  }
  for (std::string_view prefix :
       {std::string_view("/dev/fd/"), std::string_view("/proc/self/fd/")}) {
    if (path.starts_with(prefix)) {
      const std::string_view digits = path.substr(prefix.size());
      int fd = -1;
      const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), fd);
      if (ec == std::errc() && end == digits.data() + digits.size() && fd >= 0) {
        return fd;
      }
    }
  }
  return std::nullopt;
}

/// A file descriptor closed with its holder.
class Fd {
public:
  Fd() = default;
  explicit Fd(int fd) : m_fd(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  Fd(Fd&& other) noexcept : m_fd(std::exchange(other.m_fd, -1)) {}
  Fd& operator=(Fd&& other) noexcept {
    if (this != &other) {
      reset();
      m_fd = std::exchange(other.m_fd, -1);
    }
    return *this;
  }
  ~Fd() { reset(); }
  void reset() {
    if (m_fd >= 0) {
      ::close(m_fd);
    }
    m_fd = -1;
  }
  [[nodiscard]] int get() const { return m_fd; }
  [[nodiscard]] bool valid() const { return m_fd >= 0; }

private:
  int m_fd = -1;
};

/// The folder that holds a path's last component, reached one component at a time without
/// following a link another user owns (openat with O_NOFOLLOW), and that component's name.
struct Located {
  Fd parent;        ///< O_PATH: every *at() call goes through it, so nothing is looked up again
  std::string name; ///< the last component
};

/// "user 65534 (nobody)".
std::string user_label(uid_t uid) {
  const passwd* entry = ::getpwuid(uid);
  return entry != nullptr ? fmt::format("user {} ({})", uid, entry->pw_name)
                          : fmt::format("user {}", uid);
}

/// Whether a link, device or FIFO of `owner` may be used by `runner`: root's and the runner's
/// are; another user's could have been planted to turn the report onto a file or a process of
/// theirs.
bool trusted_owner(uid_t owner, uid_t runner) {
  return owner == 0 || owner == runner;
}

constexpr int k_max_links = 40; // as the kernel's ELOOP

std::vector<std::string> components(std::string_view path) {
  std::vector<std::string> out;
  for (size_t at = 0; at <= path.size();) {
    const size_t slash = std::min(path.find('/', at), path.size());
    const std::string_view part = path.substr(at, slash - at);
    if (!part.empty() && part != ".") {
      out.emplace_back(part);
    }
    at = slash + 1;
  }
  return out;
}

/// Walk to the folder of `path`'s last component. A link on the way is followed only when root
/// or the caller owns it (a link another user planted, say /tmp/reports -> a root-only folder,
/// is refused), and its target is walked the same way; everything else must be a folder.
std::variant<Located, std::string> locate(const std::string& path, uid_t runner) {
  std::vector<std::string> parts = components(path);
  if (parts.empty()) {
    return std::string("it is a directory");
  }
  const std::string name = parts.back();
  parts.pop_back();
  if (name == "..") {
    return std::string("it is a directory");
  }
  std::deque<std::string> todo(parts.begin(), parts.end());
  Fd current(::open(path.starts_with('/') ? "/" : ".", O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!current.valid()) {
    return fmt::format("the working directory cannot be opened ({})", std::strerror(errno));
  }
  std::string walked = path.starts_with('/') ? "" : ".";
  int links = 0;
  while (!todo.empty()) {
    const std::string part = todo.front();
    todo.pop_front();
    const std::string here = walked + "/" + part;
    struct stat info {};
    if (::fstatat(current.get(), part.c_str(), &info, AT_SYMLINK_NOFOLLOW) != 0) {
      return errno == ENOENT ? fmt::format("directory '{}' does not exist", here)
                             : fmt::format("'{}': {}", here, std::strerror(errno));
    }
    if (S_ISLNK(info.st_mode)) {
      // The link itself, held: its owner and its target are read from the same file, so that
      // a link swapped between the two reads is not followed.
      const Fd link(::openat(current.get(), part.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
      if (!link.valid() || ::fstat(link.get(), &info) != 0 || !S_ISLNK(info.st_mode)) {
        return fmt::format("'{}' changed while it was read", here);
      }
      if (!trusted_owner(info.st_uid, runner)) {
        return fmt::format("'{}' on the way is a symbolic link owned by {}: gpucheck follows no "
                           "link another user owns",
                           here, user_label(info.st_uid));
      }
      if (++links > k_max_links) {
        return fmt::format("'{}': too many symbolic links", here);
      }
      std::vector<char> target(4096);
      const ssize_t n = ::readlinkat(link.get(), "", target.data(), target.size());
      if (n < 0 || static_cast<size_t>(n) >= target.size()) {
        return fmt::format("'{}': the link cannot be read", here);
      }
      const std::string_view to(target.data(), static_cast<size_t>(n));
      const std::vector<std::string> more = components(to);
      todo.insert(todo.begin(), more.begin(), more.end());
      if (to.starts_with('/')) {
        current = Fd(::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
        walked.clear(); // later messages name the target's path
      }
      continue;
    }
    if (!S_ISDIR(info.st_mode)) {
      return fmt::format("'{}' is not a directory", here);
    }
    // O_NOFOLLOW: a folder swapped for a link since the fstatat is not followed either.
    Fd next(::openat(current.get(), part.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!next.valid()) {
      return fmt::format("'{}': {}", here, std::strerror(errno));
    }
    current = std::move(next);
    walked = here;
  }
  return Located{std::move(current), name};
}

/// Problems of the folder a new file would be created in; nullopt when it can be.
std::optional<std::string> directory_problem(const std::string& path, const Located& at) {
  if (::faccessat(at.parent.get(), ".", W_OK, 0) != 0) {
    return fmt::format("directory '{}' is not writable ({})", directory_of(path),
                       std::strerror(errno));
  }
  return std::nullopt;
}

/// FIFOs opened for writing while the outputs were checked, before the probes, so that one
/// without a reader is refused at once and the reader is not sent an end of file before the
/// report: the write uses the same descriptor.
std::map<std::string, Fd>& held_fifos() {
  static std::map<std::string, Fd> held;
  return held;
}

std::string_view type_name(mode_t mode) {
  if (S_ISDIR(mode)) {
    return "it is a directory";
  }
  if (S_ISBLK(mode)) {
    return "it is a block device";
  }
  if (S_ISSOCK(mode)) {
    return "it is a socket";
  }
  return "it is not a regular file";
}

/// ENOSPC and its kind are failures of writing (exit 3), not of the path the user named.
bool is_io_error(int error) {
  return error == ENOSPC || error == EDQUOT || error == EIO || error == EFBIG;
}

WriteError write_error(const std::string& path, int error) {
  return WriteError{fmt::format("cannot write '{}': {}", path, std::strerror(error)),
                    !is_io_error(error)};
}

/// Write all of `data` to `fd`; the errno of the first failure, or 0.
int write_all(int fd, std::string_view data) {
  size_t written = 0;
  while (written < data.size()) {
    const ssize_t n = ::write(fd, data.data() + written, data.size() - written);
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      return errno;
    }
    if (n == 0) {
      return EIO;
    }
    written += static_cast<size_t>(n);
  }
  return 0;
}

mode_t new_file_mode() {
  // umask can only be read by setting it: put it straight back.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  return static_cast<mode_t>(0666 & ~mask);
}

std::optional<WriteError> write_stream(const std::string& path, std::string_view data,
                                       uid_t runner) {
  if (const std::optional<int> fd = standard_stream_fd(path)) {
    if (const int error = write_all(*fd, data); error != 0) {
      return WriteError{fmt::format("cannot write '{}': {}", path, std::strerror(error)), false};
    }
    return std::nullopt;
  }
  int fd = -1;
  if (auto held = held_fifos().find(path); held != held_fifos().end()) {
    fd = ::dup(held->second.get());
    held_fifos().erase(held);
  } else {
    // No O_CREAT: nothing is created here. O_NONBLOCK: a FIFO nobody reads fails at once
    // (ENXIO) instead of hanging the run. Through the folder reached by locate(), so that the
    // path is not looked up again.
    std::variant<Located, std::string> where = locate(path, runner);
    if (const auto* reason = std::get_if<std::string>(&where)) {
      return WriteError{fmt::format("cannot write '{}': {}", path, *reason), true};
    }
    const Located& at = std::get<Located>(where);
    fd = ::openat(at.parent.get(), at.name.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
  }
  if (fd < 0) {
    if (errno == ENXIO) {
      return WriteError{fmt::format("cannot write '{}': no process is reading this FIFO", path),
                        true};
    }
    return write_error(path, errno);
  }
  struct stat info {};
  // The path may have changed since it was classified: write only into what was meant, a device
  // or FIFO of root's or the runner's.
  if (::fstat(fd, &info) != 0 || !(S_ISCHR(info.st_mode) || S_ISFIFO(info.st_mode)) ||
      !trusted_owner(info.st_uid, runner)) {
    ::close(fd);
    return WriteError{fmt::format("cannot write '{}': it changed into something that is not a "
                                  "device or a FIFO while gpucheck ran",
                                  path),
                      true};
  }
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) {
    ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  }
  const int error = write_all(fd, data);
  const int close_error = ::close(fd) != 0 ? errno : 0;
  if (error != 0 || close_error != 0) {
    return WriteError{
        fmt::format("cannot write '{}': {}", path, std::strerror(error != 0 ? error : close_error)),
        false};
  }
  return std::nullopt;
}

/// ".NAME.tmp.XXXXXX" with six random letters and digits.
std::string temporary_name(const std::string& name) {
  static constexpr std::string_view k_letters =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  std::array<unsigned char, 6> random{};
  if (::getrandom(random.data(), random.size(), 0) != static_cast<ssize_t>(random.size())) {
    std::random_device device;
    for (unsigned char& c : random) {
      c = static_cast<unsigned char>(device());
    }
  }
  std::string out = "." + name.substr(0, k_max_name_in_temporary) + ".tmp.";
  for (const unsigned char c : random) {
    out += k_letters[c % k_letters.size()];
  }
  return out;
}

std::optional<WriteError> replace_file(const std::string& path, std::string_view data,
                                       uid_t runner) {
  std::variant<Located, std::string> where = locate(path, runner);
  if (const auto* reason = std::get_if<std::string>(&where)) {
    return WriteError{fmt::format("cannot write '{}': {}", path, *reason), true};
  }
  const Located& at = std::get<Located>(where);
  const int dir = at.parent.get();
  // O_CREAT|O_EXCL|O_NOFOLLOW under a random name: a planted file or link of that name is never
  // opened; the mode is 0600 until fchmod below.
  std::string temporary;
  int fd = -1;
  for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
    temporary = temporary_name(at.name);
    fd = ::openat(dir, temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                  0600);
    if (fd < 0 && errno != EEXIST) {
      return write_error(path, errno);
    }
  }
  if (fd < 0) {
    return write_error(path, EEXIST);
  }
  const auto fail = [&](int error, bool opened) {
    if (opened) {
      ::close(fd);
    }
    ::unlinkat(dir, temporary.c_str(), 0);
    return write_error(path, error);
  };
  if (::fchmod(fd, new_file_mode()) != 0) {
    return fail(errno, true);
  }
  if (const int error = write_all(fd, data); error != 0) {
    return fail(error, true);
  }
  if (::fsync(fd) != 0) {
    return fail(errno, true);
  }
  if (::close(fd) != 0) {
    return fail(errno, false);
  }
  // The target may have been replaced since it was classified: rename only over a regular file
  // or nothing. (A rename never follows a link; this keeps links and devices from being replaced.)
  struct stat info {};
  if (::fstatat(dir, at.name.c_str(), &info, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISREG(info.st_mode)) {
    ::unlinkat(dir, temporary.c_str(), 0);
    return WriteError{fmt::format("cannot write '{}': it changed into something that is not a "
                                  "regular file while gpucheck ran; it was left as it is",
                                  path),
                      true};
  }
  if (::renameat(dir, temporary.c_str(), dir, at.name.c_str()) != 0) {
    return fail(errno, false);
  }
  // Make the rename durable too; a directory that cannot be synced is no reason to fail.
  const int dir_fd = ::openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    ::fsync(dir_fd);
    ::close(dir_fd);
  }
  return std::nullopt;
}

} // namespace

OutputFileClass classify_output_path(const std::string& path, std::optional<uid_t> as) {
  const uid_t runner = as.value_or(::geteuid());
  if (const std::optional<int> fd = standard_stream_fd(path)) {
    if (::fcntl(*fd, F_GETFD) < 0) {
      return {OutputFileKind::refused, fmt::format("file descriptor {} is not open", *fd)};
    }
    return {OutputFileKind::stream, ""};
  }
  if (held_fifos().count(path) != 0) {
    return {OutputFileKind::stream, ""};
  }
  std::variant<Located, std::string> where = locate(path, runner);
  if (const auto* reason = std::get_if<std::string>(&where)) {
    return {OutputFileKind::refused, *reason};
  }
  const Located& at = std::get<Located>(where);
  struct stat link_info {};
  if (::fstatat(at.parent.get(), at.name.c_str(), &link_info, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno != ENOENT) {
      return {OutputFileKind::refused, std::strerror(errno)};
    }
    if (std::optional<std::string> problem = directory_problem(path, at)) {
      return {OutputFileKind::refused, *problem};
    }
    return {OutputFileKind::replace, ""};
  }
  if (S_ISREG(link_info.st_mode)) {
    if (std::optional<std::string> problem = directory_problem(path, at)) {
      return {OutputFileKind::refused, *problem};
    }
    return {OutputFileKind::replace, ""};
  }
  struct stat target = link_info;
  if (S_ISLNK(link_info.st_mode)) {
    if (!trusted_owner(link_info.st_uid, runner)) {
      return {OutputFileKind::refused,
              fmt::format("it is a symbolic link owned by {}: gpucheck follows no link another "
                          "user owns",
                          user_label(link_info.st_uid))};
    }
    if (::fstatat(at.parent.get(), at.name.c_str(), &target, 0) != 0) {
      return {OutputFileKind::refused,
              "it is a symbolic link to nothing; gpucheck does not create files through links"};
    }
    if (S_ISDIR(target.st_mode)) {
      return {OutputFileKind::refused, "it is a directory"};
    }
    if (!S_ISCHR(target.st_mode) && !S_ISFIFO(target.st_mode)) {
      return {OutputFileKind::refused,
              "it is a symbolic link; gpucheck neither writes through links to files nor "
              "replaces them (name the file it points to)"};
    }
  }
  if (!S_ISCHR(target.st_mode) && !S_ISFIFO(target.st_mode)) {
    return {OutputFileKind::refused, std::string(type_name(target.st_mode))};
  }
  // A device or FIFO another user owns could be theirs to read the report from.
  if (!trusted_owner(target.st_uid, runner)) {
    return {OutputFileKind::refused,
            fmt::format("it is a {} owned by {}: gpucheck writes into no device or FIFO another "
                        "user owns",
                        S_ISFIFO(target.st_mode) ? "FIFO" : "device", user_label(target.st_uid))};
  }
  if (S_ISFIFO(target.st_mode)) {
    // Opened now and kept for the write: one without a reader is refused before the probes.
    Fd fd(::openat(at.parent.get(), at.name.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC | O_NONBLOCK));
    if (!fd.valid()) {
      return {OutputFileKind::refused, errno == ENXIO ? "no process is reading this FIFO"
                                                      : std::string(std::strerror(errno))};
    }
    held_fifos().emplace(path, std::move(fd));
  }
  return {OutputFileKind::stream, ""};
}

std::optional<std::string> output_path_problem(const std::string& path) {
  const OutputFileClass found = classify_output_path(path);
  if (found.kind == OutputFileKind::refused) {
    return fmt::format("cannot write '{}': {}", path, found.reason);
  }
  return std::nullopt;
}

std::optional<WriteError> write_output_file(const std::string& path, std::string_view data,
                                            std::optional<uid_t> as) {
  const uid_t runner = as.value_or(::geteuid());
  const OutputFileClass found = classify_output_path(path, runner);
  switch (found.kind) {
  case OutputFileKind::refused:
    return WriteError{fmt::format("cannot write '{}': {}", path, found.reason), true};
  case OutputFileKind::stream:
    return write_stream(path, data, runner);
  case OutputFileKind::replace:
    return replace_file(path, data, runner);
  }
  return WriteError{fmt::format("cannot write '{}'", path), true};
}

} // namespace gpucheck::cli
