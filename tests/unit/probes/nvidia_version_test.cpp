#include "probes/nvidia_version.hpp"

#include <gtest/gtest.h>

namespace gpucheck::probes {
namespace {

TEST(NvrmVersion, OpenModuleX86) {
  const auto parsed = parse_nvrm_version(
      "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build  "
      "(dvs-builder@U22-I3-AM02-24-3)  Wed Jan  7 00:00:00 UTC 2026\n"
      "GCC version:  gcc version 12.3.0 (Ubuntu 12.3.0-1ubuntu1~22.04)\n");
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->version, "580.159.04");
  EXPECT_EQ(parsed->flavor, "open");
}

TEST(NvrmVersion, ProprietaryModuleX86) {
  const auto parsed = parse_nvrm_version(
      "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.129.03  Thu Oct 19 18:56:32 UTC 2023\n");
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->version, "535.129.03");
  EXPECT_EQ(parsed->flavor, "proprietary");
}

TEST(NvrmVersion, Aarch64Variants) {
  const auto open = parse_nvrm_version(
      "NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  570.86.15  Release Build  "
      "(dvs-builder@U16-I2-C04-12-2)  Thu Jan 30 00:00:00 UTC 2025");
  ASSERT_TRUE(open);
  EXPECT_EQ(open->version, "570.86.15");
  EXPECT_EQ(open->flavor, "open");
  const auto prop = parse_nvrm_version(
      "NVRM version: NVIDIA UNIX aarch64 Kernel Module  470.82.01  Wed Oct 27 2021");
  ASSERT_TRUE(prop);
  EXPECT_EQ(prop->version, "470.82.01");
  EXPECT_EQ(prop->flavor, "proprietary");
}

TEST(NvrmVersion, RejectsTextWithoutVersion) {
  EXPECT_FALSE(parse_nvrm_version(""));
  EXPECT_FALSE(parse_nvrm_version("GCC version: 12.3.0\n"));
  EXPECT_FALSE(parse_nvrm_version("NVRM version: NVIDIA UNIX x86_64 Kernel Module  garbled\n"));
}

TEST(NvrmVersion, DriverVersionShape) {
  EXPECT_TRUE(looks_like_driver_version("580.159.04"));
  EXPECT_TRUE(looks_like_driver_version("470.42"));
  EXPECT_FALSE(looks_like_driver_version("12.3"));
  EXPECT_FALSE(looks_like_driver_version("x86_64"));
  EXPECT_FALSE(looks_like_driver_version("580."));
  EXPECT_FALSE(looks_like_driver_version("18:56:32"));
}

} // namespace
} // namespace gpucheck::probes
