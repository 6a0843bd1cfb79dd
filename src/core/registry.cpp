#include "gpucheck/registry.hpp"

#include <algorithm>
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
size_t g_added = 0;
size_t g_first = 0;
} // namespace

std::span<const CheckDef> all_checks() {
  return checks_table();
}

void add_check(const CheckDef& check, bool first) {
  std::vector<CheckDef>& checks = checks_table();
  if (first) {
    auto at = std::find_if(checks.begin(), checks.end(),
                           [](const CheckDef& c) { return c.info.kind == CheckKind::active; });
    // After those added first before it (the first active check is then theirs).
    at = at == checks.end() ? checks.end() : at + static_cast<std::ptrdiff_t>(g_first);
    checks.insert(at, check);
    ++g_first;
  } else {
    auto at = std::find_if(checks.begin(), checks.end(),
                           [](const CheckDef& c) { return c.info.id == "gpu.cudnn"; });
    at = at == checks.end() ? checks.end() : at + 1 + static_cast<std::ptrdiff_t>(g_added);
    checks.insert(at, check);
    ++g_added;
  }
  add_own_findings(check);
}

} // namespace gpucheck
