#include <gtest/gtest.h>

#include "gpucheck/model/version.hpp"

namespace gpucheck::compat {
namespace {

Version v(const char* text) {
  return *Version::parse(text);
}

TEST(CompatVersion, ComparesNumerically) {
  EXPECT_LT(v("525.60.12"), v("525.60.13"));
  EXPECT_LT(v("570.26"), v("570.124.06"));
  EXPECT_LT(v("9.5.1"), v("9.10.2"));
  EXPECT_LT(v("615"), v("615.31")); // a branch-only minimum is met by every driver on it
  EXPECT_EQ(v("580.65.06"), v("580.65.6"));
}

TEST(CompatVersion, RejectsNonVersions) {
  EXPECT_FALSE(Version::parse(""));
  EXPECT_FALSE(Version::parse("580.x"));
  EXPECT_FALSE(Version::parse("1.2.3.4.5"));
  EXPECT_FALSE(Version::parse("580..65"));
}

TEST(CompatVersion, PrintsDriverPointReleasesWithTwoDigits) {
  EXPECT_EQ(v("580.65.06").str(), "580.65.06");
  EXPECT_EQ(v("13.0.88").str(), "13.0.88");
  EXPECT_EQ(v("13.0.88").truncated(2).str(), "13.0");
}

TEST(CompatVersion, RangeIsInclusiveAtItsPrecision) {
  EXPECT_TRUE(in_range(v("9.5.1.17"), v("9.1"), v("9.5")));
  EXPECT_TRUE(in_range(v("9.1.0"), v("9.1"), v("9.5")));
  EXPECT_FALSE(in_range(v("9.10.2"), v("9.1"), v("9.5")));
  EXPECT_FALSE(in_range(v("9.0.0"), v("9.1"), v("9.5")));
}

TEST(CompatVersion, CudaEncoding) {
  EXPECT_EQ(cuda_from_int(13010).str(), "13.1");
  EXPECT_EQ(cuda_from_int(12080).str(), "12.8");
  EXPECT_EQ(cuda_from_int(9020).str(), "9.2");
}

TEST(CompatVersion, ComputeCapabilitySpellings) {
  EXPECT_EQ(parse_cc("sm_86")->str(), "8.6");
  EXPECT_EQ(parse_cc("sm_120")->str(), "12.0");
  EXPECT_EQ(parse_cc("sm_90a")->str(), "9.0");
  EXPECT_EQ(parse_cc("compute_75")->str(), "7.5");
  EXPECT_EQ(parse_cc("8.9")->str(), "8.9");
  EXPECT_EQ(parse_cc("100f")->str(), "10.0");
  EXPECT_FALSE(parse_cc("H100"));
  EXPECT_FALSE(parse_cc("8"));
  EXPECT_EQ(sm_name(v("12.1")), "sm_121");
}

} // namespace
} // namespace gpucheck::compat
