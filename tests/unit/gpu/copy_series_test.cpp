// gpu.bandwidth's second series of a pinned direction that read far below the other.
#include "gpu/copy_series.hpp"

#include <gtest/gtest.h>

namespace gpucheck::gpu {
namespace {

nlohmann::json metric(const std::string& name, double value, const std::string& note) {
  return {{"name", name}, {"value", value}, {"unit", "GB/s"}, {"note", note}};
}

TEST(CopySeries, OnlyAFarSlowerDirectionIsMeasuredAgain) {
  EXPECT_TRUE(needs_second_series(54.9, 32.2)); // seen on an H100 VM, healthy
  EXPECT_TRUE(needs_second_series(30.0, 55.0));
  EXPECT_FALSE(needs_second_series(55.1, 55.2));
  EXPECT_FALSE(needs_second_series(50.0, 55.0)); // within 15%
  EXPECT_FALSE(needs_second_series(13.9, 14.1)); // a Gen3 link: slow both ways, judged as it is
}

TEST(CopySeries, TheBetterSeriesIsKeptInPlaceAndTheOtherNamed) {
  nlohmann::json out = {{"metrics", nlohmann::json::array({metric("h2d_gbps", 54.9, "h2d"),
                                                           metric("d2h_gbps", 32.2, "pinned"),
                                                           metric("d2h_gbps", 55.0, "pinned")})}};
  const nlohmann::json kept =
      keep_better_series(out, "d2h_gbps", {{"median", 32.2}}, {{"median", 55.0}}, 54.9);
  EXPECT_EQ(kept.value("median", 0.0), 55.0);
  ASSERT_EQ(out["metrics"].size(), 2U);
  EXPECT_EQ(out["metrics"][1]["value"], 55.0);
  EXPECT_EQ(out["metrics"][1]["note"],
            "pinned; measured twice, the first series gave 32.2 GB/s (the other direction 54.9)");
}

TEST(CopySeries, AFaultThatStaysKeepsTheFirstSeriesAndStaysLow) {
  nlohmann::json out = {{"metrics", nlohmann::json::array({metric("d2h_gbps", 30.1, "pinned"),
                                                           metric("d2h_gbps", 29.5, "pinned")})}};
  const nlohmann::json kept =
      keep_better_series(out, "d2h_gbps", {{"median", 30.1}}, {{"median", 29.5}}, 55.0);
  EXPECT_EQ(kept.value("median", 0.0), 30.1);
  ASSERT_EQ(out["metrics"].size(), 1U);
  EXPECT_EQ(out["metrics"][0]["value"], 30.1);
  EXPECT_EQ(out["metrics"][0]["note"],
            "pinned; measured twice, the second series gave 29.5 GB/s (the other direction 55.0)");
}

} // namespace
} // namespace gpucheck::gpu
