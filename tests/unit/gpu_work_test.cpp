#include "checks/gpu_work.hpp"

#include <gtest/gtest.h>

#include "support/fixture_tree.hpp"

namespace gpucheck::checks {
namespace {

using gpucheck::testing::FixtureTree;

void proc_gpus(FixtureTree& tree, int count) {
  for (int i = 0; i < count; ++i) {
    tree.file("/proc/driver/nvidia/gpus/0000:" + std::to_string(10 + i) + ":00.0/information",
              "Model: NVIDIA H200\n");
  }
}

TEST(GpuWork, ExpectsOneOrdinalPerGpuTheDriverLists) {
  FixtureTree tree;
  proc_gpus(tree, 3);
  EXPECT_EQ(expected_cuda_ordinals(tree.root(), std::nullopt), (std::vector<int>{0, 1, 2}));
}

TEST(GpuWork, VisibleDevicesNarrowTheGuess) {
  FixtureTree tree;
  proc_gpus(tree, 4);
  EXPECT_EQ(expected_cuda_ordinals(tree.root(), "2,3"), (std::vector<int>{0, 1}));
  // CUDA stops at the first invalid entry.
  EXPECT_EQ(expected_cuda_ordinals(tree.root(), "1,-1,0"), (std::vector<int>{0}));
  EXPECT_TRUE(expected_cuda_ordinals(tree.root(), "").empty());
  // More entries than GPUs: no more ordinals than GPUs.
  EXPECT_EQ(expected_cuda_ordinals(tree.root(), "0,1,2,3,4,5").size(), 4U);
}

TEST(GpuWork, NoDriverNoGuess) {
  FixtureTree tree;
  EXPECT_TRUE(expected_cuda_ordinals(tree.root(), std::nullopt).empty());
}

TEST(GpuWork, ModesOfTheActiveChecks) {
  EXPECT_EQ(gpu_work_mode_for("gpu.cudnn"), "gpu-cudnn");
  EXPECT_EQ(gpu_work_mode_for("gpu.bandwidth"), "gpu-bandwidth");
  EXPECT_EQ(gpu_work_mode_for("gpu.ecc"), "");
  // Bandwidth opens alone, after compute and streams; cuDNN's timed work last.
  EXPECT_EQ(gpu_work_modes(),
            (std::vector<std::string>{"gpu-compute", "gpu-streams", "gpu-bandwidth", "gpu-cudnn"}));
}

size_t index_of(const std::vector<PlannedGpuJob>& plan, const std::string& mode, int ordinal) {
  for (size_t i = 0; i < plan.size(); ++i) {
    if (plan[i].mode == mode && plan[i].ordinal == ordinal) {
      return i;
    }
  }
  ADD_FAILURE() << mode << " on " << ordinal << " not planned";
  return plan.size();
}

using Indices = std::vector<size_t>;

TEST(GpuWork, PlanOnTwoGpus) {
  const std::vector<PlannedGpuJob> plan = plan_gpu_jobs(gpu_work_modes(), {0, 1});
  ASSERT_EQ(plan.size(), 8U);
  const auto at = [&plan](const char* mode, int ordinal) { return index_of(plan, mode, ordinal); };
  const size_t c0 = at("gpu-compute", 0);
  const size_t s0 = at("gpu-streams", 0);
  const size_t b0 = at("gpu-bandwidth", 0);
  const size_t d0 = at("gpu-cudnn", 0);
  const size_t c1 = at("gpu-compute", 1);
  const size_t s1 = at("gpu-streams", 1);
  const size_t b1 = at("gpu-bandwidth", 1);
  const size_t d1 = at("gpu-cudnn", 1);
  // Each GPU: compute, then streams; the two GPUs side by side.
  EXPECT_TRUE(plan[c0].release_after.empty());
  EXPECT_EQ(plan[s0].release_after, Indices{c0});
  EXPECT_TRUE(plan[c1].release_after.empty());
  EXPECT_EQ(plan[s1].release_after, Indices{c1});
  // Bandwidth: after every compute and streams job, one GPU after the other.
  EXPECT_EQ(plan[b0].release_after, (Indices{c0, s0, c1, s1}));
  EXPECT_EQ(plan[b1].release_after, (Indices{c0, s0, c1, s1, b0}));
  // cuDNN's timed work: after its GPU's jobs and every bandwidth job.
  EXPECT_EQ(plan[d0].release_after, (Indices{c0, s0, b0, b1}));
  EXPECT_EQ(plan[d1].release_after, (Indices{c1, s1, b0, b1}));
  // Bandwidth and cuDNN wait for the jobs before them to exit (no teardown beside them).
  EXPECT_FALSE(plan[s0].after_exit);
  EXPECT_TRUE(plan[b0].after_exit);
  EXPECT_TRUE(plan[b1].after_exit);
  EXPECT_TRUE(plan[d0].after_exit);
  // cuDNN's timed work only once the probes are over (their cuDNN loading slowed it); the
  // bandwidth children pause by themselves before their device-local copies instead.
  EXPECT_TRUE(plan[d0].after_quiet_host);
  EXPECT_TRUE(plan[d1].after_quiet_host);
  EXPECT_FALSE(plan[b0].after_quiet_host);
  EXPECT_FALSE(plan[c0].after_quiet_host);
  // Bandwidth copies with no context being built anywhere.
  EXPECT_EQ(plan[b1].after_contexts.size(), plan.size());
  EXPECT_TRUE(plan[c0].after_contexts.empty());
  // Contexts one at a time per GPU: cuDNN, compute, streams, bandwidth.
  EXPECT_TRUE(plan[d0].setup_after.empty());
  EXPECT_EQ(plan[c0].setup_after, Indices{d0});
  EXPECT_EQ(plan[s0].setup_after, Indices{c0});
  EXPECT_EQ(plan[b0].setup_after, Indices{s0});
  EXPECT_TRUE(plan[d1].setup_after.empty());
  EXPECT_EQ(plan[c1].setup_after, Indices{d1});
}

TEST(GpuWork, PlanOfSomeChecks) {
  // --only gpu.cudnn,gpu.streams: cuDNN follows streams; the context order skips the others.
  const std::vector<PlannedGpuJob> plan = plan_gpu_jobs({"gpu-cudnn", "gpu-streams"}, {0});
  ASSERT_EQ(plan.size(), 2U);
  const size_t s0 = index_of(plan, "gpu-streams", 0);
  const size_t d0 = index_of(plan, "gpu-cudnn", 0);
  EXPECT_TRUE(plan[s0].release_after.empty());
  EXPECT_EQ(plan[d0].release_after, Indices{s0});
  EXPECT_EQ(plan[s0].setup_after, Indices{d0});
  // Bandwidth alone: nothing to wait for.
  const std::vector<PlannedGpuJob> alone = plan_gpu_jobs({"gpu-bandwidth"}, {0});
  ASSERT_EQ(alone.size(), 1U);
  EXPECT_TRUE(alone[0].release_after.empty());
  EXPECT_TRUE(alone[0].setup_after.empty());
}

TEST(GpuWork, OutcomeOnlyForScheduledPairs) {
  // No GPU here: the children fail at once (no libcuda or no device), which is all this needs.
  GpuWork work({"gpu-streams"}, {0}, std::chrono::milliseconds(20000));
  EXPECT_FALSE(work.outcome("gpu-cudnn", 0).has_value());
  EXPECT_FALSE(work.outcome("gpu-streams", 1).has_value());
  const std::optional<platform::ChildOutcome> outcome = work.outcome("gpu-streams", 0);
  ASSERT_TRUE(outcome.has_value());
  // Whatever the child found, it finished on its own: not cancelled, not timed out.
  if (outcome->failure) {
    EXPECT_NE(outcome->failure->kind, "cancelled");
    EXPECT_NE(outcome->failure->kind, "timeout");
  }
}

} // namespace
} // namespace gpucheck::checks
