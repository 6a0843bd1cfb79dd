// gpu.memory_pool: its judge on typed payloads, its payload's one field declaration both ways,
// and its one registration line reaching the engine, the children, the runner, the catalogue
// and the gates.
#include <gtest/gtest.h>

#include <algorithm>

#include "engine/plan.hpp"
#include "findings/catalog.hpp"
#include "gates/metric_names.hpp"
#include "gpu/gpu_children.hpp"
#include "gpu_checks/memory_pool/memory_pool.hpp"
#include "gpu_checks/registry.hpp"
#include "gpucheck/registry.hpp"

namespace gpucheck::gpu_checks::memory_pool {
namespace {

checks::GpuTarget gpu0() {
  checks::GpuTarget gpu;
  gpu.name = "NVIDIA H200";
  return gpu;
}

Payload healthy() {
  Payload p;
  p.supported = true;
  p.block_bytes = 1ULL << 20;
  p.timed_pairs = 160;
  p.pool_pair_us = 0.8;
  p.plain_pair_us = 95.0;
  p.blocks_verified = 8;
  return p;
}

TEST(MemoryPool, HealthyPoolHasNoFinding) {
  const checks::Judgement j = judge(gpu0(), healthy(), {});
  EXPECT_FALSE(j.skipped);
  EXPECT_TRUE(j.findings.empty());
  EXPECT_NE(j.summary.find("8 blocks of 1 MiB read back"), std::string::npos) << j.summary;
}

TEST(MemoryPool, PoolNoFasterThanCuMemAllocIsANote) {
  Payload p = healthy();
  p.pool_pair_us = 120.0;
  const checks::Judgement j = judge(gpu0(), p, {});
  ASSERT_EQ(j.findings.size(), 1U);
  EXPECT_EQ(j.findings[0].code, k_not_reused.text());
  EXPECT_EQ(j.findings[0].severity, Severity::info);
}

TEST(MemoryPool, NoPoolsIsASkipNotAFault) {
  Payload p;
  p.supported = false;
  const checks::Judgement j = judge(gpu0(), p, {});
  EXPECT_TRUE(j.skipped);
  EXPECT_TRUE(j.findings.empty());
  EXPECT_NE(j.summary.find("no stream-ordered allocator"), std::string::npos);
}

TEST(MemoryPool, PayloadIsReadAsItWasWritten) {
  Output<Payload> out;
  out.payload = healthy();
  out.metrics.push_back({"memory_pool_alloc_free_us", 0.8, "us", ""});
  nlohmann::json json = {{"work", "memory_pool"}};
  write_output(out, json);
  const Expected<Payload> back = read_payload<Payload>(json);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back.value(), out.payload);
  EXPECT_EQ(json["metrics"].size(), 1U);
  json.erase("pool_pair_us");
  EXPECT_FALSE(read_payload<Payload>(json)) << "a missing field is unreadable, not zero";
}

TEST(MemoryPool, OneRegistrationLineReachesEveryTable) {
  install(); // the test main did; a second call changes nothing
  const std::optional<engine::Work> work = engine::work_named("memory_pool");
  ASSERT_TRUE(work);
  EXPECT_EQ(engine::check_id(*work), "gpu.memory_pool");
  EXPECT_EQ(engine::child_mode(*work), "gpu-memory-pool");
  EXPECT_EQ(engine::work_for_check("gpu.memory_pool"), work);
  // Its work runs in each GPU's shared child after gpu.streams, before the copies.
  const std::vector<engine::Work> group = engine::child_groups(engine::all_works()).front();
  const auto at = [&group](engine::Work w) { return std::find(group.begin(), group.end(), w); };
  EXPECT_EQ(at(*work) - at(*engine::work_named("streams")), 1);
  EXPECT_LT(at(*work), at(*engine::work_named("bandwidth")));

  const gpu::WorkRunner* runner = gpu::runner_of_mode("gpu-memory-pool");
  ASSERT_NE(runner, nullptr);
  EXPECT_EQ(runner->work, *work);

  for (const FindingSpec& spec : findings()) {
    EXPECT_EQ(find_finding_spec(spec.code),
              &*std::find_if(finding_catalog().begin(), finding_catalog().end(),
                             [&spec](const FindingSpec& s) { return s.code == spec.code; }));
  }
  EXPECT_TRUE(gates::is_known_metric("memory_pool_alloc_free_us"));
  EXPECT_TRUE(gates::is_known_metric("memory_alloc_free_us"));

  const std::span<const CheckDef> checks = all_checks();
  const auto streams = std::find_if(checks.begin(), checks.end(),
                                    [](const CheckDef& c) { return c.info.id == "gpu.streams"; });
  ASSERT_NE(streams, checks.end());
  ASSERT_NE(streams + 1, checks.end());
  EXPECT_EQ((streams + 1)->info.id, "gpu.memory_pool");
  EXPECT_EQ((streams + 1)->info.kind, CheckKind::active);
}

TEST(MemoryPool, AMismatchOfItsBlocksIsItsOwnFinding) {
  nlohmann::json payload = {{"work", "memory_pool"}, {"metrics", nlohmann::json::array()}};
  protocol::PayloadVerification v{
      std::string(k_verify_kind), "8 blocks", 100, 1, 7, "0x0BADF00D", "0x12345678"};
  payload["verify"].push_back(protocol::to_json(v));
  const std::vector<Finding> found = checks::common_findings("test", gpu0(), payload);
  ASSERT_EQ(found.size(), 1U);
  EXPECT_EQ(found[0].code, k_corrupt.text()) << found[0].message;
  EXPECT_EQ(found[0].severity, Severity::fail);
  // Its healthy twin: every block read back right is no finding.
  v.mismatches = 0;
  payload["verify"] = nlohmann::json::array({protocol::to_json(v)});
  EXPECT_TRUE(checks::common_findings("test", gpu0(), payload).empty());
}

} // namespace
} // namespace gpucheck::gpu_checks::memory_pool
