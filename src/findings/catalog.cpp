#include "findings/catalog.hpp"

#include <algorithm>
#include <vector>

#include "findings/tables.hpp"

namespace gpucheck {

namespace {

/// All domain tables joined and sorted by code once (a unit test proves codes are unique and
/// every template formats).
const std::vector<FindingSpec>& joined() {
  static const std::vector<FindingSpec> k_all = [] {
    std::vector<FindingSpec> all;
    for (std::span<const FindingSpec> table : finding_tables()) {
      all.insert(all.end(), table.begin(), table.end());
    }
    std::sort(all.begin(), all.end(),
              [](const FindingSpec& a, const FindingSpec& b) { return a.code < b.code; });
    return all;
  }();
  return k_all;
}

} // namespace

std::span<const FindingSpec> finding_catalog() {
  return joined();
}

const FindingSpec* find_finding_spec(std::string_view code) {
  const std::vector<FindingSpec>& all = joined();
  const auto it =
      std::lower_bound(all.begin(), all.end(), code,
                       [](const FindingSpec& spec, std::string_view c) { return spec.code < c; });
  if (it != all.end() && it->code == code) {
    return &*it;
  }
  return nullptr;
}

} // namespace gpucheck
