// gpu.p2p's and gpu.nccl's registration lines reaching the engine (two works of the child over
// every GPU, NCCL's beyond the budget), that child's runners (NCCL loads before the session and
// prepares before the peer copies' gate), the runner's order of checks, the catalogue and the
// gates.
#include <gtest/gtest.h>

#include <algorithm>

#include "engine/plan.hpp"
#include "findings/catalog.hpp"
#include "gates/metric_names.hpp"
#include "gpu/gpu_children.hpp"
#include "gpu_checks/nccl/nccl.hpp"
#include "gpu_checks/p2p/p2p.hpp"
#include "gpu_checks/registry.hpp"
#include "gpucheck/registry.hpp"

namespace gpucheck::gpu_checks {
namespace {

const gpu::SpanRunner* span_runner_of(engine::Work work) {
  for (const gpu::SpanRunner& r : gpu::span_runners()) {
    if (r.work == work) {
      return &r;
    }
  }
  return nullptr;
}

TEST(SpanningChecks, TheirRegistrationLinesReachEveryTable) {
  install(); // the test main did; a second call changes nothing
  const std::optional<engine::Work> peers = engine::work_named("peers");
  const std::optional<engine::Work> nccl = engine::work_named("nccl");
  ASSERT_TRUE(peers && nccl);
  EXPECT_EQ(engine::work_for_check("gpu.p2p"), peers);
  EXPECT_EQ(engine::work_for_check("gpu.nccl"), nccl);
  EXPECT_TRUE(engine::spans_gpus(*peers));
  EXPECT_TRUE(engine::spans_gpus(*nccl));
  EXPECT_EQ(engine::spanning_works(engine::all_works()),
            (std::vector<engine::Work>{*peers, *nccl}));
  EXPECT_FALSE(engine::work_row(*peers).beyond_budget);
  EXPECT_TRUE(engine::work_row(*nccl).beyond_budget);

  // The child over every GPU runs them; neither has a runner of the per-GPU children.
  const gpu::SpanRunner* p2p_runner = span_runner_of(*peers);
  const gpu::SpanRunner* nccl_runner = span_runner_of(*nccl);
  ASSERT_NE(p2p_runner, nullptr);
  ASSERT_NE(nccl_runner, nullptr);
  EXPECT_NE(p2p_runner->run, nullptr);
  EXPECT_EQ(p2p_runner->load, nullptr);
  EXPECT_EQ(p2p_runner->prepare, nullptr);
  EXPECT_NE(nccl_runner->load, nullptr);    // its library, before the session
  EXPECT_NE(nccl_runner->prepare, nullptr); // ncclCommInitAll, before the peer copies' gate
  for (const gpu::WorkRunner& r : gpu::work_runners()) {
    EXPECT_NE(r.work, *peers);
    EXPECT_NE(r.work, *nccl);
  }

  // Listed after every per-GPU active check, gpu.p2p first, before the long level's.
  const std::span<const CheckDef> checks = all_checks();
  const auto at = [&checks](std::string_view id) {
    return std::find_if(checks.begin(), checks.end(),
                        [id](const CheckDef& c) { return c.info.id == id; }) -
           checks.begin();
  };
  EXPECT_EQ(at("gpu.p2p"), at("gpu.memory_pool") + 1);
  EXPECT_EQ(at("gpu.nccl"), at("gpu.p2p") + 1);
  EXPECT_EQ(at("gpu.memtest"), at("gpu.nccl") + 1);

  for (const std::span<const FindingSpec> own : {p2p::findings(), nccl::findings()}) {
    for (const FindingSpec& spec : own) {
      EXPECT_NE(find_finding_spec(spec.code), nullptr) << spec.code;
    }
  }
  for (const char* metric : {"p2p_gbps", "p2p_0_1_write_gbps", "peer_work_ms", "nccl_busbw_gbps",
                             "nccl_allreduce_256mib_busbw_gbps"}) {
    EXPECT_TRUE(gates::is_known_metric(metric)) << metric;
  }
}

} // namespace
} // namespace gpucheck::gpu_checks
