#include "gpucheck/selection.hpp"

#include <algorithm>

namespace gpucheck {

namespace {
bool prefix_matches(std::string_view id, std::string_view prefix) {
  if (prefix.empty() || !id.starts_with(prefix)) {
    return false;
  }
  return id.size() == prefix.size() || prefix.back() == '.' || id[prefix.size()] == '.';
}

/// The first words of an id's last component: "gpu.pcie" of "gpu.pcie_link".
bool word_prefix_matches(std::string_view id, std::string_view prefix) {
  return !prefix.empty() && id.starts_with(prefix) && id.size() > prefix.size() &&
         id[prefix.size()] == '_';
}
} // namespace

bool pattern_matches(std::string_view id, std::string_view pattern) {
  return prefix_matches(id, pattern) || word_prefix_matches(id, pattern);
}

Selection resolve_selection(const Selection& given, const std::vector<std::string>& ids) {
  const auto resolve = [&ids](const std::vector<std::string>& patterns) {
    std::vector<std::string> out;
    for (const std::string& pattern : patterns) {
      const bool whole = std::any_of(ids.begin(), ids.end(), [&pattern](const std::string& id) {
        return prefix_matches(id, pattern);
      });
      if (whole) {
        out.push_back(pattern); // an id or its components: "gpu.compute" is not gpu.compute_mode
        continue;
      }
      const size_t before = out.size();
      for (const std::string& id : ids) {
        if (word_prefix_matches(id, pattern)) {
          out.push_back(id);
        }
      }
      if (out.size() == before) {
        out.push_back(pattern); // matches nothing: the caller says so
      }
    }
    return out;
  };
  return {resolve(given.only), resolve(given.skip)};
}

bool is_selected(std::string_view id, const Selection& selection) {
  bool wanted = selection.only.empty();
  for (const std::string& prefix : selection.only) {
    wanted = wanted || prefix_matches(id, prefix);
  }
  for (const std::string& prefix : selection.skip) {
    wanted = wanted && !prefix_matches(id, prefix);
  }
  return wanted;
}

} // namespace gpucheck
