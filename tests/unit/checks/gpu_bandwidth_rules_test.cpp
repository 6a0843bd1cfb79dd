#include "checks/active/bandwidth_rules.hpp"

#include <gtest/gtest.h>

namespace gpucheck::checks {
namespace {

TEST(GpuBandwidthRules, LinkRateFromSysfs) {
  auto gen5 = link_rate_from_sysfs("32.0 GT/s PCIe", "16");
  ASSERT_TRUE(gen5);
  EXPECT_EQ(gen5->generation, 5);
  EXPECT_EQ(gen5->label, "PCIe Gen5 x16");
  EXPECT_NEAR(gen5->gbps, 63.02, 0.01);
  auto gen3 = link_rate_from_sysfs("8.0 GT/s PCIe", "8");
  ASSERT_TRUE(gen3);
  EXPECT_NEAR(gen3->gbps, 7.877, 0.001);
  auto gen1 = link_rate_from_sysfs("2.5 GT/s PCIe", "16");
  ASSERT_TRUE(gen1);
  EXPECT_DOUBLE_EQ(gen1->gbps, 4.0);
}

TEST(GpuBandwidthRules, UnreadableLinksGiveNothing) {
  EXPECT_FALSE(link_rate_from_sysfs("", "16"));
  EXPECT_FALSE(link_rate_from_sysfs("Unknown", "16"));
  EXPECT_FALSE(link_rate_from_sysfs("12.0 GT/s PCIe", "16"));
  EXPECT_FALSE(link_rate_from_sysfs("16.0 GT/s PCIe", "0"));
  EXPECT_FALSE(link_rate_from_generation(7, 16));
  EXPECT_FALSE(link_rate_from_generation(4, 0));
}

TEST(GpuBandwidthRules, LowIsBelowSixtyPercentOfTheLink) {
  const LinkRate gen4 = *link_rate_from_generation(4, 16); // 31.5 GB/s
  EXPECT_FALSE(is_bandwidth_low(26.0, gen4));
  EXPECT_FALSE(is_bandwidth_low(0.6 * gen4.gbps + 0.01, gen4));
  EXPECT_TRUE(is_bandwidth_low(0.6 * gen4.gbps - 0.01, gen4));
  EXPECT_TRUE(is_bandwidth_low(12.5, gen4)); // what a Gen3 or x8 link gives
}

TEST(GpuBandwidthRules, OutlierAgainstTheMedian) {
  const std::vector<double> values = {55.0, 54.8, 55.2, 30.0};
  const auto ratio = outlier_ratio(30.0, values);
  ASSERT_TRUE(ratio);
  EXPECT_NEAR(*ratio, 30.0 / 54.9, 1e-9);
  EXPECT_FALSE(outlier_ratio(54.8, values));
  EXPECT_FALSE(outlier_ratio(30.0, {30.0}));
  EXPECT_FALSE(outlier_ratio(44.0 + 0.01, {55.0, 55.0}));
  EXPECT_TRUE(outlier_ratio(40.0, {55.0, 40.0, 55.0}));
}

} // namespace
} // namespace gpucheck::checks
