// gpu.bandwidth's second series of a pinned direction that read far below the other.
#include "gpu_checks/bandwidth/copy_series.hpp"

#include <gtest/gtest.h>

namespace gpucheck::gpu_checks::bandwidth {
namespace {

protocol::PayloadMetric metric(const std::string& name, double value, const std::string& note) {
  return {name, value, "GB/s", note};
}

Series series(const std::string& name, double median) {
  return {name, median, median, median, 8};
}

TEST(CopySeries, OnlyAFarSlowerDirectionIsMeasuredAgain) {
  EXPECT_TRUE(needs_second_series(54.9, 32.2)); // seen on an H100 VM, healthy
  EXPECT_TRUE(needs_second_series(30.0, 55.0));
  EXPECT_FALSE(needs_second_series(55.1, 55.2));
  EXPECT_FALSE(needs_second_series(50.0, 55.0)); // within 15%
  EXPECT_FALSE(needs_second_series(13.9, 14.1)); // a Gen3 link: slow both ways, judged as it is
}

TEST(CopySeries, TheBetterSeriesIsKeptInPlaceAndTheOtherNamed) {
  std::vector<protocol::PayloadMetric> metrics = {metric("h2d_gbps", 54.9, "h2d"),
                                                  metric("d2h_gbps", 32.2, "pinned"),
                                                  metric("d2h_gbps", 55.0, "pinned")};
  const Series kept = keep_better_series(metrics, "d2h_gbps", series("d2h_gbps", 32.2),
                                         series("d2h_gbps", 55.0), 54.9);
  EXPECT_EQ(kept.median, 55.0);
  ASSERT_EQ(metrics.size(), 2U);
  EXPECT_EQ(metrics[1].value, 55.0);
  EXPECT_EQ(metrics[1].note,
            "pinned; measured twice, the first series gave 32.2 GB/s (the other direction 54.9)");
}

TEST(CopySeries, AFaultThatStaysKeepsTheFirstSeriesAndStaysLow) {
  std::vector<protocol::PayloadMetric> metrics = {metric("d2h_gbps", 30.1, "pinned"),
                                                  metric("d2h_gbps", 29.5, "pinned")};
  const Series kept = keep_better_series(metrics, "d2h_gbps", series("d2h_gbps", 30.1),
                                         series("d2h_gbps", 29.5), 55.0);
  EXPECT_EQ(kept.median, 30.1);
  ASSERT_EQ(metrics.size(), 1U);
  EXPECT_EQ(metrics[0].value, 30.1);
  EXPECT_EQ(metrics[0].note,
            "pinned; measured twice, the second series gave 29.5 GB/s (the other direction 55.0)");
}

} // namespace
} // namespace gpucheck::gpu_checks::bandwidth
