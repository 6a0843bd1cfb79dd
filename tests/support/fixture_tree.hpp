#pragma once
/// A fake system root in a fresh temporary directory, removed on destruction. Tests build the
/// files, directories, symlinks and modes a probe reads, then point a Sysroot at root().

#include <string>
#include <string_view>
#include <sys/types.h>

namespace gpucheck::testing {

class FixtureTree {
public:
  FixtureTree();
  ~FixtureTree();
  FixtureTree(const FixtureTree&) = delete;
  FixtureTree& operator=(const FixtureTree&) = delete;

  /// The host directory standing in for "/".
  [[nodiscard]] const std::string& root() const { return m_root; }
  /// Host path of a system path inside the tree.
  [[nodiscard]] std::string host(std::string_view absolute) const;

  /// Write a file (parents created) with `mode`; returns *this for chaining.
  FixtureTree& file(std::string_view absolute, std::string_view content = "", mode_t mode = 0644);
  /// Create a directory and its parents.
  FixtureTree& dir(std::string_view absolute);
  /// Create a symlink at `absolute` whose target is written as given (absolute targets are
  /// system paths, resolved inside the tree by the probes).
  FixtureTree& symlink(std::string_view absolute, std::string_view target);
  /// Remove a path (recursively).
  FixtureTree& remove(std::string_view absolute);

private:
  std::string m_root;
};

} // namespace gpucheck::testing
