// The registry: unique ids, report order by area, every passive check runs on an empty snapshot.
#include <gtest/gtest.h>

#include <set>

#include "gpucheck/registry.hpp"
#include "unit/snapshot_builder.hpp"

namespace gpucheck::testing {
namespace {

int area_rank(std::string_view id) {
  const std::string_view area = id.substr(0, id.find('.'));
  constexpr std::string_view k_order[] = {"driver", "cuda", "env", "lib", "compat", "fw", "gpu"};
  for (int i = 0; i < 7; ++i) {
    if (k_order[i] == area) {
      return i;
    }
  }
  return 100; // areas added later (active checks) come after the passive ones
}

TEST(Registry, IdsUniqueAndInReportOrder) {
  std::set<std::string_view> ids;
  int previous = -1;
  for (const CheckDef& check : all_checks()) {
    EXPECT_TRUE(ids.insert(check.info.id).second) << check.info.id;
    const int rank = area_rank(check.info.id);
    EXPECT_GE(rank, previous) << check.info.id << " is out of report order";
    previous = rank;
    EXPECT_FALSE(check.info.title.empty());
    EXPECT_FALSE(check.info.description.empty());
  }
  EXPECT_GE(ids.size(), 22U);
}

TEST(Registry, EveryPassiveCheckJudgesAnEmptySnapshotWithoutPassing) {
  // An empty snapshot has no facts at all: no check may pass on it except those whose "nothing
  // set" is itself the healthy state (no risky variable, no nouveau, no CUDA_VISIBLE_DEVICES).
  const std::set<std::string_view> may_pass = {"env.variables", "env.nouveau",
                                               "env.visible_devices"};
  const SystemSnapshot empty;
  for (const CheckDef& check : all_checks()) {
    if (check.info.kind != CheckKind::passive) {
      continue;
    }
    SCOPED_TRACE(std::string(check.info.id));
    const std::vector<CheckResult> results = run_check(check, empty);
    ASSERT_FALSE(results.empty());
    for (const CheckResult& result : results) {
      if (!may_pass.contains(check.info.id)) {
        EXPECT_NE(result.status, Status::pass) << result.summary;
      }
    }
  }
}

TEST(Registry, HealthyH200PassesEveryPassiveCheck) {
  const SystemSnapshot healthy = healthy_h200(1);
  for (const CheckDef& check : all_checks()) {
    if (check.info.kind != CheckKind::passive) {
      continue;
    }
    SCOPED_TRACE(std::string(check.info.id));
    for (const CheckResult& result : run_check(check, healthy)) {
      EXPECT_TRUE(result.status == Status::pass || result.status == Status::skip) << result.summary;
      for (const Finding& finding : result.findings) {
        EXPECT_EQ(finding.severity, Severity::info) << finding.code << ": " << finding.message;
      }
    }
  }
}

} // namespace
} // namespace gpucheck::testing
