#include "probes/sysroot.hpp"

#include <climits>
#include <cstdlib>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include "probes/paths.hpp"

extern char** environ; // NOLINT(readability-redundant-declaration)

namespace gpucheck::probes {

namespace fs = std::filesystem;

Sysroot::Sysroot(std::string root) : m_root(std::move(root)) {
  while (m_root.size() > 1 && m_root.back() == '/') {
    m_root.pop_back();
  }
}

std::string Sysroot::path(std::string_view absolute) const {
  if (m_root == "/" || m_root.empty()) {
    return std::string(absolute);
  }
  return m_root + std::string(absolute);
}

std::optional<std::string> Sysroot::resolve(std::string_view absolute) const {
  if (m_root == "/" || m_root.empty()) {
    char buffer[PATH_MAX];
    if (::realpath(std::string(absolute).c_str(), buffer) == nullptr) {
      return std::nullopt;
    }
    return std::string(buffer);
  }
  // Walk component by component; a symlink's target replaces the walked prefix (absolute
  // targets restart at the root, never at the host's "/") and the remaining components are
  // appended again. ".." never climbs above the root.
  constexpr int k_max_links = 40;
  std::vector<std::string> pending = path_components(absolute);
  std::vector<std::string> done;
  int links = 0;
  size_t next = 0;
  while (next < pending.size()) {
    done.push_back(pending[next++]);
    const std::string current = join_components(done);
    struct stat st {};
    if (::lstat(path(current).c_str(), &st) != 0) {
      return std::nullopt;
    }
    if (!S_ISLNK(st.st_mode)) {
      continue;
    }
    if (++links > k_max_links) {
      return std::nullopt;
    }
    std::error_code ec;
    const fs::path target = fs::read_symlink(path(current), ec);
    if (ec) {
      return std::nullopt;
    }
    done.pop_back();
    std::string rebuilt = target.string().starts_with('/')
                              ? target.string()
                              : join_path(join_components(done), target.string());
    for (size_t i = next; i < pending.size(); ++i) {
      rebuilt = join_path(rebuilt, pending[i]);
    }
    pending = path_components(rebuilt);
    done.clear();
    next = 0;
  }
  return join_components(done);
}

std::optional<std::string> Sysroot::host_resolved(std::string_view absolute) const {
  if (m_root == "/" || m_root.empty()) {
    return std::string(absolute);
  }
  const std::optional<std::string> resolved = resolve(absolute);
  if (!resolved) {
    return std::nullopt;
  }
  return path(*resolved);
}

bool Sysroot::exists(std::string_view absolute) const {
  if (m_root == "/" || m_root.empty()) {
    std::error_code ec;
    return fs::exists(fs::symlink_status(path(absolute), ec)) || fs::exists(path(absolute), ec);
  }
  return resolve(absolute).has_value() || read_link(absolute).has_value();
}

bool Sysroot::is_directory(std::string_view absolute) const {
  const std::optional<std::string> host = host_resolved(absolute);
  std::error_code ec;
  return host && fs::is_directory(*host, ec);
}

std::optional<std::string> Sysroot::read(std::string_view absolute) const {
  // Links resolve inside the root: the host's kernel must not follow an absolute link in the
  // tree to the host's file of that name.
  const std::optional<std::string> host = host_resolved(absolute);
  if (!host) {
    return std::nullopt;
  }
  // Regular files only, opened without blocking: a FIFO named METADATA or pyvenv.cfg hung the
  // run; a device could be read without end. In a tree the resolved path
  // ends in no link; O_NOFOLLOW keeps it so should it change meanwhile.
  const int no_follow = m_root == "/" || m_root.empty() ? 0 : O_NOFOLLOW;
  const int fd = ::open(host->c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY | no_follow);
  if (fd < 0) {
    return std::nullopt;
  }
  struct stat info {};
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    ::close(fd);
    return std::nullopt;
  }
  // Grow as the file does: most files read here are sysfs attributes of a few bytes.
  constexpr size_t k_max = 1 << 20;
  std::string data;
  char chunk[4096];
  while (data.size() < k_max) {
    const ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n < 0) {
      ::close(fd);
      return std::nullopt;
    }
    if (n == 0) {
      break;
    }
    data.append(chunk, static_cast<size_t>(n));
  }
  ::close(fd);
  data.resize(std::min(data.size(), k_max));
  return data;
}

std::optional<std::string> Sysroot::read_line(std::string_view absolute) const {
  auto text = read(absolute);
  if (!text) {
    return std::nullopt;
  }
  std::string line = text->substr(0, text->find('\n'));
  const auto not_space = [](unsigned char c) { return !std::isspace(c); };
  line.erase(line.begin(), std::find_if(line.begin(), line.end(), not_space));
  line.erase(std::find_if(line.rbegin(), line.rend(), not_space).base(), line.end());
  return line;
}

std::vector<std::string> Sysroot::list(std::string_view absolute) const {
  std::vector<std::string> names;
  const std::optional<std::string> host = host_resolved(absolute);
  if (!host) {
    return names;
  }
  std::error_code ec;
  for (fs::directory_iterator it(*host, ec), end; !ec && it != end; it.increment(ec)) {
    names.push_back(it->path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::optional<std::string> Sysroot::read_link(std::string_view absolute) const {
  std::error_code ec;
  fs::path target = fs::read_symlink(host_path(*this, absolute), ec);
  if (ec) {
    return std::nullopt;
  }
  return target.string();
}

Environment Environment::current() {
  std::map<std::string, std::string> vars;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string_view entry = *e;
    const auto eq = entry.find('=');
    if (eq != std::string_view::npos) {
      vars.emplace(std::string(entry.substr(0, eq)), std::string(entry.substr(eq + 1)));
    }
  }
  return Environment(std::move(vars));
}

std::optional<std::string> Environment::get(const std::string& name) const {
  auto it = m_vars.find(name);
  if (it == m_vars.end()) {
    return std::nullopt;
  }
  return it->second;
}

} // namespace gpucheck::probes
