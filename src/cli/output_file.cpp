#include "cli/output_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <filesystem>
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

/// Problems of the directory a new file would be created in; nullopt when it can be.
std::optional<std::string> directory_problem(const std::string& path) {
  const std::string directory = directory_of(path);
  struct stat info {};
  if (::stat(directory.c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) {
    return fmt::format("directory '{}' does not exist", directory);
  }
  if (::access(directory.c_str(), W_OK) != 0) {
    return fmt::format("directory '{}' is not writable ({})", directory, std::strerror(errno));
  }
  return std::nullopt;
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

std::optional<WriteError> write_stream(const std::string& path, std::string_view data) {
  if (const std::optional<int> fd = standard_stream_fd(path)) {
    if (const int error = write_all(*fd, data); error != 0) {
      return WriteError{fmt::format("cannot write '{}': {}", path, std::strerror(error)), false};
    }
    return std::nullopt;
  }
  // No O_CREAT: nothing is created here. O_NONBLOCK: a FIFO nobody reads fails at once (ENXIO)
  // instead of hanging the run.
  const int fd = ::open(path.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    if (errno == ENXIO) {
      return WriteError{fmt::format("cannot write '{}': no process is reading this FIFO", path),
                        true};
    }
    return write_error(path, errno);
  }
  struct stat info {};
  // The path may have changed since it was classified: write only into what was meant.
  if (::fstat(fd, &info) != 0 || !(S_ISCHR(info.st_mode) || S_ISFIFO(info.st_mode))) {
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

std::optional<WriteError> replace_file(const std::string& path, std::string_view data) {
  const std::string directory = directory_of(path);
  std::string name = std::filesystem::path(path).filename().string();
  if (name.size() > k_max_name_in_temporary) {
    name.resize(k_max_name_in_temporary);
  }
  // mkostemp: O_CREAT|O_EXCL with a random name, so a planted file or link of that name is
  // never opened; the mode is 0600 until fchmod below.
  std::string temporary =
      (std::filesystem::path(directory) / ("." + name + ".tmp.XXXXXX")).string();
  std::vector<char> buffer(temporary.begin(), temporary.end());
  buffer.push_back('\0');
  const int fd = ::mkostemp(buffer.data(), O_CLOEXEC);
  if (fd < 0) {
    return write_error(path, errno);
  }
  temporary.assign(buffer.data());
  const auto fail = [&](int error, bool opened) {
    if (opened) {
      ::close(fd);
    }
    ::unlink(temporary.c_str());
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
  if (::lstat(path.c_str(), &info) == 0 && !S_ISREG(info.st_mode)) {
    ::unlink(temporary.c_str());
    return WriteError{fmt::format("cannot write '{}': it changed into something that is not a "
                                  "regular file while gpucheck ran; it was left as it is",
                                  path),
                      true};
  }
  if (::rename(temporary.c_str(), path.c_str()) != 0) {
    return fail(errno, false);
  }
  // Make the rename durable too; a directory that cannot be synced is no reason to fail.
  const int dir_fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    ::fsync(dir_fd);
    ::close(dir_fd);
  }
  return std::nullopt;
}

} // namespace

OutputFileClass classify_output_path(const std::string& path) {
  if (const std::optional<int> fd = standard_stream_fd(path)) {
    if (::fcntl(*fd, F_GETFD) < 0) {
      return {OutputFileKind::refused, fmt::format("file descriptor {} is not open", *fd)};
    }
    return {OutputFileKind::stream, ""};
  }
  struct stat link_info {};
  if (::lstat(path.c_str(), &link_info) != 0) {
    if (errno != ENOENT) {
      // ENOTDIR, EACCES, ELOOP: say why the path cannot be reached.
      const int error = errno;
      if (std::optional<std::string> problem = directory_problem(path)) {
        return {OutputFileKind::refused, *problem};
      }
      return {OutputFileKind::refused, std::strerror(error)};
    }
    if (std::optional<std::string> problem = directory_problem(path)) {
      return {OutputFileKind::refused, *problem};
    }
    return {OutputFileKind::replace, ""};
  }
  if (S_ISREG(link_info.st_mode)) {
    if (std::optional<std::string> problem = directory_problem(path)) {
      return {OutputFileKind::refused, *problem};
    }
    return {OutputFileKind::replace, ""};
  }
  if (S_ISCHR(link_info.st_mode) || S_ISFIFO(link_info.st_mode)) {
    return {OutputFileKind::stream, ""};
  }
  if (S_ISLNK(link_info.st_mode)) {
    struct stat target {};
    if (::stat(path.c_str(), &target) != 0) {
      return {OutputFileKind::refused,
              "it is a symbolic link to nothing; gpucheck does not create files through links"};
    }
    if (S_ISCHR(target.st_mode) || S_ISFIFO(target.st_mode)) {
      return {OutputFileKind::stream, ""};
    }
    if (S_ISDIR(target.st_mode)) {
      return {OutputFileKind::refused, "it is a directory"};
    }
    return {OutputFileKind::refused,
            "it is a symbolic link; gpucheck neither writes through links to files nor replaces "
            "them (name the file it points to)"};
  }
  return {OutputFileKind::refused, std::string(type_name(link_info.st_mode))};
}

std::optional<std::string> output_path_problem(const std::string& path) {
  const OutputFileClass found = classify_output_path(path);
  if (found.kind == OutputFileKind::refused) {
    return fmt::format("cannot write '{}': {}", path, found.reason);
  }
  return std::nullopt;
}

std::optional<WriteError> write_output_file(const std::string& path, std::string_view data) {
  const OutputFileClass found = classify_output_path(path);
  switch (found.kind) {
  case OutputFileKind::refused:
    return WriteError{fmt::format("cannot write '{}': {}", path, found.reason), true};
  case OutputFileKind::stream:
    return write_stream(path, data);
  case OutputFileKind::replace:
    return replace_file(path, data);
  }
  return WriteError{fmt::format("cannot write '{}'", path), true};
}

} // namespace gpucheck::cli
