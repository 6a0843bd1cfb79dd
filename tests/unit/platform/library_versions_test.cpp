#include "platform/library_versions.hpp"

#include <gtest/gtest.h>

#include "gpucheck/model/stack_versions.hpp"

namespace gpucheck::platform {
namespace {

TEST(LibraryVersions, CudaRuntime) {
  EXPECT_EQ(cuda_version_text(13000), "13.0");
  EXPECT_EQ(cuda_version_text(12080), "12.8");
  EXPECT_EQ(cuda_version_text(11040), "11.4");
  EXPECT_EQ(cuda_version_text(13010), "13.1");
}

TEST(LibraryVersions, NcclBothEncodings) {
  EXPECT_EQ(nccl_version_string(22803), "2.28.3");
  EXPECT_EQ(nccl_version_string(21903), "2.19.3");
  EXPECT_EQ(nccl_version_string(2708), "2.7.8");
  EXPECT_EQ(nccl_version_string(2804), "2.8.4");
}

TEST(LibraryVersions, CudnnBothEncodings) {
  EXPECT_EQ(cudnn_version_string(91900), "9.19.0");
  EXPECT_EQ(cudnn_version_string(90100), "9.1.0");
  EXPECT_EQ(cudnn_version_string(8907), "8.9.7");
  EXPECT_EQ(cudnn_version_string(8100), "8.1.0");
}

} // namespace
} // namespace gpucheck::platform
