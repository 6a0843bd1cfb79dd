#include "checks/rules/path_text.hpp"

#include <gtest/gtest.h>

#include <compare>

namespace gpucheck::checks {
namespace {

TEST(VersionText, ComparesNumerically) {
  EXPECT_TRUE(std::is_gt(compare_padded(Version::leading("9.10.2"), Version::leading("9.9.0"))));
  EXPECT_TRUE(
      std::is_lt(compare_padded(Version::leading("580.95.05"), Version::leading("580.159.04"))));
  EXPECT_TRUE(
      std::is_eq(compare_padded(Version::leading("580.159.04"), Version::leading("580.159.4"))));
  EXPECT_TRUE(std::is_eq(compare_padded(Version::leading("9.1"), Version::leading("9.1.0"))));
  EXPECT_LT(Version::leading("9.1"), Version::leading("9.1.0")); // the matrix's order
  EXPECT_EQ(Version::leading("580.159.04-open").parts(), (std::vector<int>{580, 159, 4}));
  EXPECT_TRUE(Version::leading("abc").empty());
}

TEST(VersionText, SonameVersion) {
  EXPECT_EQ(soname_version("/usr/lib/x86_64-linux-gnu/libcuda.so.580.159.04", "libcuda"),
            "580.159.04");
  EXPECT_EQ(soname_version("/usr/lib/libnvidia-ml.so.1", "libnvidia-ml"), "1");
  EXPECT_EQ(soname_version("/usr/lib/libcuda.so", "libcuda"), std::nullopt);
  EXPECT_EQ(soname_version("/usr/lib/libcudart.so.13.0.88", "libcuda"), std::nullopt);
}

TEST(VersionText, Paths) {
  EXPECT_EQ(directory_of("/a/b/libx.so"), "/a/b");
  EXPECT_EQ(directory_of("libx.so"), ".");
  EXPECT_EQ(path_through_component("/usr/local/cuda/lib64/stubs/libcuda.so", "stubs"),
            "/usr/local/cuda/lib64/stubs");
  EXPECT_EQ(path_through_component("/opt/stubsy/libcuda.so", "stubs"), std::nullopt);
  EXPECT_EQ(cuda_version_text(13010), "13.1");
  EXPECT_EQ(cuda_version_text(12080), "12.8");
  EXPECT_EQ(driver_branch("580.159.04"), "580");
}

} // namespace
} // namespace gpucheck::checks
