#include "checks/rules/path_text.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cstdint>

namespace gpucheck::checks {

std::optional<std::string> soname_version(std::string_view path, std::string_view stem) {
  const std::size_t slash = path.rfind('/');
  const std::string_view name = slash == std::string_view::npos ? path : path.substr(slash + 1);
  const std::string prefix = fmt::format("{}.so.", stem);
  if (!name.starts_with(prefix)) {
    return std::nullopt;
  }
  const std::string_view suffix = name.substr(prefix.size());
  if (suffix.empty() || Version::leading(suffix).empty()) {
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
  const Version parts = Version::leading(version);
  return parts.empty() ? std::string() : std::to_string(parts.major_number());
}

} // namespace gpucheck::checks
