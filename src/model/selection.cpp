#include "gpucheck/selection.hpp"

namespace gpucheck {

namespace {
bool prefix_matches(std::string_view id, std::string_view prefix) {
  if (prefix.empty() || !id.starts_with(prefix)) {
    return false;
  }
  return id.size() == prefix.size() || prefix.back() == '.' || id[prefix.size()] == '.';
}
} // namespace

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
