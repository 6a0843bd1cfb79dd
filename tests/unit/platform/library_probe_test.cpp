// The library child probe against the fake cudart/cuBLAS/NCCL (tests/fakes/README.md).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "fakes/fake_gpu.hpp"
#include "gpucheck/model/json_io.hpp"

namespace gpucheck::platform {
namespace {

using gpucheck::testing::FakeMachine;
using gpucheck::testing::run_ok;

LibraryLoad probe_library(const FakeMachine& machine, std::vector<std::string> args) {
  const nlohmann::json payload = run_ok(machine.request("library", std::move(args)));
  return payload.is_null() ? LibraryLoad{} : payload.get<LibraryLoad>();
}

TEST(LibraryProbe, CudartReportsItsRuntimeVersion) {
  FakeMachine machine("cudart.version=12080\n");
  const LibraryLoad load = probe_library(machine, {"cudart", "libcudart.so.13", "libcudart.so.12"});
  EXPECT_TRUE(load.loaded);
  EXPECT_EQ(load.name, "libcudart.so.13");
  EXPECT_EQ(load.version, "12.8");
  EXPECT_EQ(load.version_raw, 12080);
  EXPECT_EQ(load.path, gpucheck::testing::fake_lib_path("libcudart.so.13"));
  EXPECT_EQ(load.real_path.substr(load.real_path.rfind('/') + 1), "libcudart.so.13.0.96");
}

TEST(LibraryProbe, CublasReportsMajorMinorPatch) {
  FakeMachine machine("cublas.version=13.1.7\n");
  const LibraryLoad load = probe_library(machine, {"cublas", "libcublas.so.13"});
  EXPECT_TRUE(load.loaded);
  EXPECT_EQ(load.version, "13.1.7");
  EXPECT_EQ(load.version_raw, 130107);
}

TEST(LibraryProbe, NcclDecodesBothEncodings) {
  {
    FakeMachine machine("nccl.version=22803\n");
    const LibraryLoad load = probe_library(machine, {"nccl", "libnccl.so.2"});
    EXPECT_EQ(load.version, "2.28.3");
    EXPECT_EQ(load.version_raw, 22803);
  }
  {
    FakeMachine machine("nccl.version=2708\n");
    EXPECT_EQ(probe_library(machine, {"nccl", "libnccl.so.2"}).version, "2.7.8");
  }
}

TEST(LibraryProbe, FallsBackToTheNextNameAndJoinsErrors) {
  FakeMachine machine("");
  const LibraryLoad next = probe_library(machine, {"cudart", "libcudart.so.99", "libcudart.so.13"});
  EXPECT_TRUE(next.loaded);
  EXPECT_EQ(next.name, "libcudart.so.13");
  EXPECT_EQ(next.version, "13.0");

  const LibraryLoad none = probe_library(machine, {"cudart", "libcudart.so.97", "libcudart.so.98"});
  EXPECT_FALSE(none.loaded);
  EXPECT_NE(none.error.find("libcudart.so.97"), std::string::npos);
  EXPECT_NE(none.error.find("libcudart.so.98"), std::string::npos);
  EXPECT_EQ(none.version, "");
  EXPECT_FALSE(none.version_raw);
}

TEST(LibraryProbe, UnknownFamilyLoadsWithoutVersion) {
  FakeMachine machine("");
  const LibraryLoad load = probe_library(machine, {"other", "libcudart.so.13"});
  EXPECT_TRUE(load.loaded);
  EXPECT_EQ(load.version, "");
}

TEST(LibraryProbe, NoArgumentsIsAnError) {
  FakeMachine machine("");
  const LibraryLoad load = probe_library(machine, {});
  EXPECT_FALSE(load.loaded);
  EXPECT_FALSE(load.error.empty());
}

} // namespace
} // namespace gpucheck::platform
