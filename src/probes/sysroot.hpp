#pragma once
/// The one seam through which probes read /proc, /sys, /dev, /etc and the environment.
/// Tests point the root at a fixture tree and inject variables.

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpucheck::probes {

class Sysroot {
public:
  /// root "/" reads the real system; any other directory stands in for it.
  explicit Sysroot(std::string root = "/");

  [[nodiscard]] const std::string& root() const { return m_root; }
  /// The host path for an absolute system path: root + path, lexically (no link followed).
  /// Reading a file there would let the host's kernel follow an absolute link out of the tree:
  /// read through read(), list(), or host_resolved().
  [[nodiscard]] std::string path(std::string_view absolute) const;
  /// Canonical system path of `absolute` with every symlink followed, absolute link targets
  /// taken relative to the root (so a fixture's "/usr/local/cuda -> /usr/local/cuda-13.0" stays
  /// in the tree, and a link to "/etc/shadow" means the tree's, never the host's). nullopt when
  /// the path or a link target does not exist, or after 40 links (a loop). On "/": realpath.
  [[nodiscard]] std::optional<std::string> resolve(std::string_view absolute) const;
  /// The host path of resolve(absolute): what may be opened, stat()ed or listed. nullopt when
  /// it cannot be resolved.
  [[nodiscard]] std::optional<std::string> host_resolved(std::string_view absolute) const;
  /// Whether the path exists (a dangling symlink counts: the link itself exists).
  [[nodiscard]] bool exists(std::string_view absolute) const;
  [[nodiscard]] bool is_directory(std::string_view absolute) const;
  /// Whole file, or nullopt when it cannot be read or is not a regular file (a FIFO or a device
  /// is never read: it could block or never end). Bounded to 1 MiB. Links resolve inside the
  /// root (resolve()).
  [[nodiscard]] std::optional<std::string> read(std::string_view absolute) const;
  /// First line without the newline, trimmed.
  [[nodiscard]] std::optional<std::string> read_line(std::string_view absolute) const;
  /// Entry names in a directory (not "." or ".."), sorted; empty when unreadable. Links resolve
  /// inside the root.
  [[nodiscard]] std::vector<std::string> list(std::string_view absolute) const;
  /// Target of a symlink (as written), or nullopt. The directories above it resolve inside the
  /// root.
  [[nodiscard]] std::optional<std::string> read_link(std::string_view absolute) const;

private:
  std::string m_root;
};

/// A captured environment: the process's own by default, or a test's.
class Environment {
public:
  /// Snapshot of this process's environ.
  static Environment current();
  explicit Environment(std::map<std::string, std::string> vars = {}) : m_vars(std::move(vars)) {}

  [[nodiscard]] std::optional<std::string> get(const std::string& name) const;
  [[nodiscard]] const std::map<std::string, std::string>& all() const { return m_vars; }

private:
  std::map<std::string, std::string> m_vars;
};

} // namespace gpucheck::probes
