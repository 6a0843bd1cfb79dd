#include "gpucheck/registry.hpp"

#include <algorithm>
#include <string_view>
#include <vector>

#include "checks/checks.hpp"
#include "findings/catalog.hpp"

namespace gpucheck {

namespace {
/// A check that spells its own findings adds them to the catalogue as it joins the list.
void add_own_findings(const CheckDef& check) {
  if (check.findings != nullptr) {
    add_finding_table(check.findings());
  }
}

std::vector<CheckDef>& checks_table() {
#define GPUCHECK_REGISTER_CHECK(factory) checks::factory(),
  static std::vector<CheckDef> checks = [] {
    std::vector<CheckDef> list{GPUCHECK_CHECKS(GPUCHECK_REGISTER_CHECK)};
    for (const CheckDef& check : list) {
      add_own_findings(check);
    }
    return list;
  }();
#undef GPUCHECK_REGISTER_CHECK
  return checks;
}
size_t g_first = 0;
size_t g_before_long = 0;
size_t g_over_gpus = 0;

/// The checks placed over_gpus, by id.
std::vector<std::string_view>& over_gpus_ids() {
  static std::vector<std::string_view> ids;
  return ids;
}

/// Before the first check that `starts` the place, after the `added` checks put there before.
void insert_before(std::vector<CheckDef>& checks, const CheckDef& check, size_t& added,
                   bool (*starts)(const CheckDef&)) {
  auto at = std::find_if(checks.begin(), checks.end(), starts);
  at = at == checks.end() ? checks.end() : at + static_cast<std::ptrdiff_t>(added);
  checks.insert(at, check);
  ++added;
}
} // namespace

std::span<const CheckDef> all_checks() {
  return checks_table();
}

void add_check(const CheckDef& check, CheckPlace place) {
  std::vector<CheckDef>& checks = checks_table();
  if (place == CheckPlace::first) {
    insert_before(checks, check, g_first,
                  [](const CheckDef& c) { return c.info.kind == CheckKind::active; });
  } else if (place == CheckPlace::before_long) {
    insert_before(checks, check, g_before_long,
                  [](const CheckDef& c) { return c.info.level == Level::long_; });
  } else if (place == CheckPlace::over_gpus) {
    insert_before(checks, check, g_over_gpus,
                  [](const CheckDef& c) { return c.info.level == Level::long_; });
    over_gpus_ids().push_back(check.info.id);
  } else {
    // Before the checks over GPUs and the long level's, in the order added.
    const auto at = std::find_if(checks.begin(), checks.end(), [](const CheckDef& c) {
      const std::vector<std::string_view>& over = over_gpus_ids();
      return c.info.level == Level::long_ ||
             std::find(over.begin(), over.end(), c.info.id) != over.end();
    });
    checks.insert(at, check);
  }
  add_own_findings(check);
}

} // namespace gpucheck
