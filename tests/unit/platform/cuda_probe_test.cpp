// The driver API child probe against the fake libcuda (tests/fakes/README.md).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>

#include "fakes/fake_gpu.hpp"
#include "gpucheck/model/json_io.hpp"

namespace gpucheck::platform {
namespace {

using process::ChildOutcome;
using process::ChildRequest;
using process::run_child;

using gpucheck::testing::FakeMachine;
using gpucheck::testing::run_ok;
using namespace std::chrono_literals;

constexpr const char* k_three_gpus = R"(
cuda.driver_version=12080
gpu.count=3
gpu.0.name=NVIDIA H100 80GB HBM3
gpu.0.uuid=GPU-0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9
gpu.0.bus_id=00000000:3B:00.0
gpu.0.cc=9.0
gpu.0.sm_count=132
gpu.0.memory_total=85520809984
gpu.1.name=NVIDIA L4
gpu.1.uuid=GPU-11111111-2222-3333-4444-555555555555
gpu.1.bus_id=00000000:86:00.0
gpu.1.cc=8.9
gpu.1.sm_count=58
gpu.1.memory_total=23580639232
gpu.2.name=NVIDIA L4
gpu.2.uuid=GPU-11119999-2222-3333-4444-666666666666
gpu.2.bus_id=00000001:0A:00.0
gpu.2.cc=8.9
)";

CudaDriverInfo probe_cuda(const FakeMachine& machine) {
  const nlohmann::json payload = run_ok(machine.request("cuda"));
  return payload.is_null() ? CudaDriverInfo{} : payload.get<CudaDriverInfo>();
}

std::vector<std::string> uuids(const CudaDriverInfo& info) {
  std::vector<std::string> out;
  for (const CudaDevice& device : info.devices) {
    out.push_back(device.uuid);
  }
  return out;
}

TEST(CudaProbe, ListsDevicesWithEveryField) {
  FakeMachine machine(k_three_gpus);
  const CudaDriverInfo info = probe_cuda(machine);
  EXPECT_TRUE(info.library.loaded);
  EXPECT_NE(info.library.real_path.find("libcuda.so.580.95.05"), std::string::npos);
  EXPECT_TRUE(info.library.missing_symbols.empty())
      << nlohmann::json(info.library.missing_symbols).dump();
  EXPECT_EQ(info.driver_version, 12080);
  EXPECT_EQ(info.init_result, 0);
  EXPECT_EQ(info.init_result_name, "CUDA_SUCCESS");
  EXPECT_EQ(info.init_result_text, "no error");
  EXPECT_EQ(info.device_count, 3);
  ASSERT_EQ(info.devices.size(), 3U);
  const CudaDevice& h100 = info.devices[0];
  EXPECT_EQ(h100.ordinal, 0);
  EXPECT_EQ(h100.name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(h100.uuid, "GPU-0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9");
  EXPECT_EQ(h100.pci_bus_id, "0000:3B:00.0");
  EXPECT_EQ(h100.cc_major, 9);
  EXPECT_EQ(h100.cc_minor, 0);
  EXPECT_EQ(h100.sm_count, 132);
  EXPECT_EQ(h100.total_memory_bytes, 85520809984ULL);
  const CudaDevice& l4 = info.devices[1];
  EXPECT_EQ(l4.ordinal, 1);
  EXPECT_EQ(l4.uuid, "GPU-11111111-2222-3333-4444-555555555555");
  EXPECT_EQ(l4.pci_bus_id, "0000:86:00.0");
  EXPECT_EQ(l4.cc_major, 8);
  EXPECT_EQ(l4.cc_minor, 9);
  EXPECT_EQ(l4.sm_count, 58);
  EXPECT_EQ(l4.total_memory_bytes, 23580639232ULL);
  EXPECT_EQ(info.devices[2].pci_bus_id, "0001:0A:00.0");
}

TEST(CudaProbe, InitFailureKeepsDriverVersionAndNamesTheCode) {
  FakeMachine machine("cuda.driver_version=13010\ncuda.init_rc=999\n");
  const CudaDriverInfo info = probe_cuda(machine);
  EXPECT_EQ(info.driver_version, 13010); // asked before cuInit
  EXPECT_EQ(info.init_result, 999);
  EXPECT_EQ(info.init_result_name, "CUDA_ERROR_UNKNOWN");
  EXPECT_EQ(info.init_result_text, "unknown error");
  EXPECT_FALSE(info.device_count);
  EXPECT_TRUE(info.devices.empty());
}

TEST(CudaProbe, CodeOutsideTheTableIsNamedByTheDriver) {
  FakeMachine machine("cuda.init_rc=4242\ncuda.error_name=CUDA_ERROR_FROM_THE_FUTURE\n");
  const CudaDriverInfo info = probe_cuda(machine);
  EXPECT_EQ(info.init_result, 4242);
  EXPECT_EQ(info.init_result_name, "CUDA_ERROR_FROM_THE_FUTURE");
  EXPECT_EQ(info.init_result_text, "fake driver error");
}

TEST(CudaProbe, CrashInInitIsSigabrt) {
  FakeMachine machine("cuda.init_crash=1\n");
  const ChildOutcome outcome = run_child(machine.request("cuda"));
  ASSERT_TRUE(outcome.failure);
  EXPECT_EQ(outcome.failure->kind, ChildFailureKind::signal);
  EXPECT_EQ(outcome.failure->signal_name, "SIGABRT");
}

TEST(CudaProbe, HangInInitTimesOut) {
  FakeMachine machine("cuda.init_hang=1\n");
  ChildRequest request = machine.request("cuda");
  request.timeout = 400ms;
  const ChildOutcome outcome = run_child(request);
  ASSERT_TRUE(outcome.failure);
  EXPECT_EQ(outcome.failure->kind, ChildFailureKind::timeout);
}

TEST(CudaProbe, StubLibraryAnswers34) {
  FakeMachine machine("", gpucheck::testing::fake_lib_path("stubs"));
  const CudaDriverInfo info = probe_cuda(machine);
  EXPECT_TRUE(info.library.loaded);
  EXPECT_NE(info.library.real_path.find("/stubs/libcuda.so"), std::string::npos);
  EXPECT_FALSE(info.driver_version);
  EXPECT_EQ(info.init_result, 34);
  EXPECT_EQ(info.init_result_name, "CUDA_ERROR_STUB_LIBRARY");
  EXPECT_TRUE(info.devices.empty());
}

struct VisibleCase {
  const char* visible;
  int init_result;
  std::vector<std::string> uuids;
};

TEST(CudaProbe, HonoursCudaVisibleDevicesLikeTheDriver) {
  const std::string h100 = "GPU-0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9";
  const std::string l4a = "GPU-11111111-2222-3333-4444-555555555555";
  const std::string l4b = "GPU-11119999-2222-3333-4444-666666666666";
  const std::vector<VisibleCase> cases{
      {"2,0", 0, {l4b, h100}}, {"1", 0, {l4a}}, {"GPU-0a1b,GPU-11119", 0, {h100, l4b}},
      {"0,7,1", 0, {h100}},    // stops at the first invalid index
      {"1,1,2", 0, {l4a}},     // and at a repeated one
      {"GPU-1111,0", 100, {}}, // an ambiguous prefix ends the list: nothing left
      {"", 100, {}},           // empty: no device
      {"-1", 100, {}},         // -1: no device
      {"MIG-abc", 100, {}},    // a MIG id this fake does not know
  };
  for (const VisibleCase& c : cases) {
    FakeMachine machine(k_three_gpus);
    machine.set_visible_devices(c.visible);
    const CudaDriverInfo info = probe_cuda(machine);
    EXPECT_EQ(info.init_result, c.init_result) << c.visible;
    EXPECT_EQ(uuids(info), c.uuids) << c.visible;
    for (size_t i = 0; i < info.devices.size(); ++i) {
      EXPECT_EQ(info.devices[i].ordinal, static_cast<int>(i));
    }
  }
}

TEST(CudaProbe, MissingLibraryIsReportedNotFatal) {
  gpucheck::testing::TempDir empty;
  FakeMachine machine("", empty.path().string());
  const CudaDriverInfo info = probe_cuda(machine);
  if (info.library.loaded) {
    GTEST_SKIP() << "this machine has its own libcuda.so.1: " << info.library.real_path;
  }
  EXPECT_EQ(info.library.name, "libcuda.so.1");
  EXPECT_FALSE(info.library.error.empty());
  EXPECT_TRUE(info.library.missing_symbols.empty());
  EXPECT_FALSE(info.init_result);
}

} // namespace
} // namespace gpucheck::platform
