#include "checks/version_text.hpp"

#include <gtest/gtest.h>

namespace gpucheck::checks {
namespace {

TEST(VersionText, ComparesNumerically) {
  EXPECT_GT(compare_versions("9.10.2", "9.9.0"), 0);
  EXPECT_LT(compare_versions("580.95.05", "580.159.04"), 0);
  EXPECT_EQ(compare_versions("580.159.04", "580.159.4"), 0);
  EXPECT_EQ(compare_versions("9.1", "9.1.0"), 0);
  EXPECT_EQ(version_parts("580.159.04-open"), (std::vector<int>{580, 159, 4}));
  EXPECT_TRUE(version_parts("abc").empty());
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
