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
  // Bandwidth opens last: it runs alone.
  EXPECT_EQ(gpu_work_modes().back(), "gpu-bandwidth");
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
