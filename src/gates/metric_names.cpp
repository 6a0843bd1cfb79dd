#include "gates/metric_names.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace gpucheck::gates {

namespace {

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}

/// Whether `text` matches `pattern`, where each "<...>" matches one or more name characters.
bool matches(std::string_view pattern, std::string_view text) {
  const size_t open = pattern.find('<');
  if (open == std::string_view::npos) {
    return pattern == text;
  }
  const size_t close = pattern.find('>', open);
  if (close == std::string_view::npos || !text.starts_with(pattern.substr(0, open))) {
    return false;
  }
  const std::string_view rest = pattern.substr(close + 1);
  // The placeholder takes at least one character; try every length (names are short).
  for (size_t end = open + 1; end <= text.size(); ++end) {
    if (!is_name_char(text[end - 1])) {
      return false;
    }
    if (matches(rest, text.substr(end))) {
      return true;
    }
  }
  return false;
}

} // namespace

namespace {
std::vector<std::string_view>& names_table() {
  // Kept in step with the checks by the GPU test (tests/gpu/gpu_checks_test.py asks
  // is_known_metric of every metric a real run reports, through --min).
  static std::vector<std::string_view> names{
      // gpu.nvlink, gpu.fabric, gpu.topology (each GPU check of its own folder adds its own:
      // add_metric_names())
      "nvlink_active", "nvlink_version", "fabric_clique", "path_<a>_<b>_nvlinks",
      "gpu<n>_numa_node",
      // every GPU child; fw.import
      "host_peak_rss_mib", "host_rss_anon_mib", "host_rss_file_mib", "import_s"};
  return names;
}
} // namespace

const std::vector<std::string_view>& known_metric_names() {
  return names_table();
}

void add_metric_names(std::span<const std::string_view> names) {
  names_table().insert(names_table().end(), names.begin(), names.end());
}

bool is_known_metric(std::string_view metric) {
  for (const std::string_view pattern : known_metric_names()) {
    if (matches(pattern, metric)) {
      return true;
    }
  }
  return false;
}

Expected<std::string_view> check_known_metric(std::string_view metric) {
  if (is_known_metric(metric)) {
    return metric;
  }
  return Error{fmt::format("'{}' is not a metric any check reports; known metrics: {} (docs/ci.md)",
                           metric, fmt::join(known_metric_names(), ", "))};
}

} // namespace gpucheck::gates
