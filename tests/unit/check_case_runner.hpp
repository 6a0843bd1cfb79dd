#pragma once
/// Runs a table of CheckCase rows against one check and asserts status and finding codes.

#include <gtest/gtest.h>

#include <span>

#include "unit/snapshot_builder.hpp"

namespace gpucheck::testing {

/// Every row starts from `base` (a fresh copy), applies its change and runs `check`; a
/// single-result check must return exactly one result; a per-GPU check is judged on the result
/// for GPU `gpu_index` (and must return one result per GPU when the snapshot has GPUs).
inline void run_cases(const CheckDef& check, const SystemSnapshot& base,
                      std::span<const CheckCase> cases,
                      std::optional<int> gpu_index = std::nullopt) {
  for (const CheckCase& row : cases) {
    SCOPED_TRACE(row.name);
    SystemSnapshot snapshot = base;
    if (row.mutate) {
      row.mutate(snapshot);
    }
    const std::vector<CheckResult> results = run_check(check, snapshot);
    ASSERT_FALSE(results.empty());
    const CheckResult* result = &results.front();
    if (gpu_index && !snapshot.gpus.empty()) {
      ASSERT_EQ(results.size(), snapshot.gpus.size());
      result = &results.at(static_cast<std::size_t>(*gpu_index));
      EXPECT_EQ(result->gpu_index, gpu_index);
    } else {
      ASSERT_EQ(results.size(), 1U);
    }
    EXPECT_EQ(result->check_id, check.info.id);
    EXPECT_EQ(to_string(result->status), to_string(row.status)) << result->summary;
    EXPECT_EQ(codes_of(*result), row.codes) << result->summary;
    EXPECT_FALSE(result->summary.empty());
    for (const Finding& finding : result->findings) {
      EXPECT_FALSE(finding.message.empty());
      EXPECT_EQ(finding.message.find('{'), std::string::npos) << finding.message;
    }
  }
}

} // namespace gpucheck::testing
