#include "findings/catalog.hpp"

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "findings/tables.hpp"

namespace gpucheck {

namespace {

/// The checks' own tables (add_finding_table()), and whether the catalogue was joined yet.
std::vector<std::span<const FindingSpec>>& added_tables() {
  static std::vector<std::span<const FindingSpec>> tables;
  return tables;
}
bool g_joined = false;

/// All domain tables joined and sorted by code once (a unit test proves codes are unique and
/// every template formats).
const std::vector<FindingSpec>& joined() {
  static const std::vector<FindingSpec> k_all = [] {
    g_joined = true;
    std::vector<FindingSpec> all;
    for (std::span<const FindingSpec> table : finding_tables()) {
      all.insert(all.end(), table.begin(), table.end());
    }
    for (std::span<const FindingSpec> table : added_tables()) {
      all.insert(all.end(), table.begin(), table.end());
    }
    std::sort(all.begin(), all.end(),
              [](const FindingSpec& a, const FindingSpec& b) { return a.code < b.code; });
    return all;
  }();
  return k_all;
}

} // namespace

void add_finding_table(std::span<const FindingSpec> table) {
  if (g_joined) {
    throw std::logic_error("a finding table was added after the catalogue was read");
  }
  added_tables().push_back(table);
}

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
