#include "probes/sysroot.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

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

bool Sysroot::exists(std::string_view absolute) const {
  std::error_code ec;
  return fs::exists(fs::symlink_status(path(absolute), ec)) || fs::exists(path(absolute), ec);
}

bool Sysroot::is_directory(std::string_view absolute) const {
  std::error_code ec;
  return fs::is_directory(path(absolute), ec);
}

std::optional<std::string> Sysroot::read(std::string_view absolute) const {
  // Regular files only, opened without blocking: a FIFO named METADATA or pyvenv.cfg hung the
  // run (issue 21, item 5); a device could be read without end.
  const int fd = ::open(path(absolute).c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
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
  std::error_code ec;
  for (fs::directory_iterator it(path(absolute), ec), end; !ec && it != end; it.increment(ec)) {
    names.push_back(it->path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::optional<std::string> Sysroot::read_link(std::string_view absolute) const {
  std::error_code ec;
  fs::path target = fs::read_symlink(path(absolute), ec);
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
