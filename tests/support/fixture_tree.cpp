#include "support/fixture_tree.hpp"

#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <vector>

namespace gpucheck::testing {

namespace fs = std::filesystem;

FixtureTree::FixtureTree() {
  std::string pattern = (fs::temp_directory_path() / "gpucheck-fixture-XXXXXX").string();
  std::vector<char> buffer(pattern.begin(), pattern.end());
  buffer.push_back('\0');
  if (::mkdtemp(buffer.data()) == nullptr) {
    throw std::runtime_error("mkdtemp failed");
  }
  m_root = buffer.data();
}

FixtureTree::~FixtureTree() {
  std::error_code ec;
  // Restore search permission on directories a test locked, then remove everything.
  for (fs::recursive_directory_iterator it(m_root, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->is_directory(ec) && !it->is_symlink(ec)) {
      fs::permissions(it->path(), fs::perms::owner_all, fs::perm_options::add, ec);
    }
  }
  fs::remove_all(m_root, ec);
}

std::string FixtureTree::host(std::string_view absolute) const {
  return m_root + std::string(absolute);
}

FixtureTree& FixtureTree::file(std::string_view absolute, std::string_view content, mode_t mode) {
  const fs::path path = host(absolute);
  fs::create_directories(path.parent_path());
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out) {
      throw std::runtime_error("cannot write fixture file " + path.string());
    }
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
  }
  if (::chmod(path.c_str(), mode) != 0) {
    throw std::runtime_error("chmod failed for " + path.string());
  }
  return *this;
}

FixtureTree& FixtureTree::dir(std::string_view absolute) {
  fs::create_directories(host(absolute));
  return *this;
}

FixtureTree& FixtureTree::symlink(std::string_view absolute, std::string_view target) {
  const fs::path path = host(absolute);
  fs::create_directories(path.parent_path());
  fs::create_symlink(fs::path(std::string(target)), path);
  return *this;
}

FixtureTree& FixtureTree::remove(std::string_view absolute) {
  fs::remove_all(host(absolute));
  return *this;
}

} // namespace gpucheck::testing
