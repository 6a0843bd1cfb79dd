#include "checks/version_text.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cstdint>

namespace gpucheck::checks {

std::vector<int> version_parts(std::string_view version) {
  std::vector<int> parts;
  std::size_t pos = 0;
  while (pos < version.size()) {
    int value = 0;
    const char* begin = version.data() + pos;
    const char* end = version.data() + version.size();
    const auto [ptr, ec] = std::from_chars(begin, end, value);
    if (ec != std::errc{} || ptr == begin) {
      break;
    }
    parts.push_back(value);
    pos += static_cast<std::size_t>(ptr - begin);
    if (pos >= version.size() || version[pos] != '.') {
      break;
    }
    ++pos;
  }
  return parts;
}

int compare_versions(std::string_view a, std::string_view b) {
  const std::vector<int> pa = version_parts(a);
  const std::vector<int> pb = version_parts(b);
  const std::size_t n = std::max(pa.size(), pb.size());
  for (std::size_t i = 0; i < n; ++i) {
    const int x = i < pa.size() ? pa[i] : 0;
    const int y = i < pb.size() ? pb[i] : 0;
    if (x != y) {
      return x < y ? -1 : 1;
    }
  }
  return 0;
}

std::optional<std::string> soname_version(std::string_view path, std::string_view stem) {
  const std::size_t slash = path.rfind('/');
  const std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
  const std::string prefix = fmt::format("{}.so.", stem);
  if (!name.starts_with(prefix)) {
    return std::nullopt;
  }
  const std::string_view suffix = name.substr(prefix.size());
  if (suffix.empty() || version_parts(suffix).empty()) {
    return std::nullopt;
  }
  return std::string(suffix);
}

std::string directory_of(std::string_view path) {
  const std::size_t slash = path.rfind('/');
  if (slash == std::string_view::npos) {
    return ".";
  }
  if (slash == 0) {
    return "/";
  }
  return std::string(path.substr(0, slash));
}

std::optional<std::string> path_through_component(std::string_view path,
                                                  std::string_view component) {
  std::size_t start = 0;
  while (start <= path.size()) {
    std::size_t end = path.find('/', start);
    if (end == std::string_view::npos) {
      end = path.size();
    }
    if (path.substr(start, end - start) == component) {
      return std::string(path.substr(0, end));
    }
    start = end + 1;
  }
  return std::nullopt;
}

std::string driver_branch(std::string_view version) {
  const std::vector<int> parts = version_parts(version);
  return parts.empty() ? std::string() : std::to_string(parts.front());
}

} // namespace gpucheck::checks
