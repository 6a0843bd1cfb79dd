// The NVML child probe against the fake libnvidia-ml (tests/fakes/README.md).
#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sys/wait.h>

#include <chrono>
#include <fmt/format.h>
#include <thread>

#include "fakes/fake_gpu.hpp"
#include "gpucheck/model/json_io.hpp"
#include "platform/nvml_api.hpp"

namespace gpucheck::platform {
namespace {

using process::ChildOutcome;
using process::ChildRequest;
using process::run_child;

using gpucheck::testing::FakeMachine;
using gpucheck::testing::run_ok;
using namespace std::chrono_literals;

struct NvmlResult {
  NvmlInfo nvml;
  std::vector<GpuInfo> gpus;
};

NvmlResult probe_nvml(const FakeMachine& machine) {
  const nlohmann::json payload = run_ok(machine.request("nvml"));
  NvmlResult out;
  if (!payload.is_null()) {
    out.nvml = payload.at("nvml").get<NvmlInfo>();
    out.gpus = payload.at("gpus").get<std::vector<GpuInfo>>();
  }
  return out;
}

TEST(NvmlProbe, ReadsEveryFieldOfEveryGpu) {
  const uint32_t pid = static_cast<uint32_t>(::getpid());
  FakeMachine machine(fmt::format(R"(
nvml.driver_version=575.57.08
nvml.nvml_version=12.575.57.08
nvml.cuda_driver_version=12090
nvml.cuda_driver_version_kernel=12080
gpu.count=2
gpu.0.name=NVIDIA A100-SXM4-80GB
gpu.0.uuid=GPU-0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9
gpu.0.serial=1324021001234
gpu.0.bus_id=00000000:3B:00.0
gpu.0.pci_device_id=0x20B210DE
gpu.0.cc=8.0
gpu.0.memory_total=85899345920
gpu.0.memory_used=1073741824
gpu.0.memory_reserved=536870912
gpu.0.pcie_gen=3
gpu.0.pcie_gen_max=4
gpu.0.pcie_width=8
gpu.0.pcie_width_max=16
gpu.0.persistence=0
gpu.0.compute_mode=3
gpu.0.mig_mode=1
gpu.0.mig_pending=0
gpu.0.mig_devices=2
gpu.0.ecc_mode=1
gpu.0.ecc_uncorrected_volatile=2
gpu.0.ecc_corrected_volatile=17
gpu.0.ecc_uncorrected_aggregate=5
gpu.0.retired_sbe=3
gpu.0.retired_dbe=1
gpu.0.retired_pending=1
gpu.0.remapped_corr=4
gpu.0.remapped_unc=6
gpu.0.remapped_pending=1
gpu.0.remapped_failure=0
gpu.0.clock_events=0x48
gpu.0.temperature=87
gpu.0.power_mw=312500
gpu.0.power_limit_mw=400000
gpu.0.sm_clock=1095
gpu.0.sm_clock_max=1410
gpu.0.numa_node=1
gpu.0.compute_processes={}:2147483648,99999999:1024
gpu.0.graphics_processes={}:4096
gpu.1.name=NVIDIA A100-SXM4-80GB
gpu.1.bus_id=00000000:86:00.0
gpu.1.serial=na
gpu.1.remapped_rows=na
gpu.1.retired_pages=na
gpu.1.retired_pending=na
gpu.1.ecc_mode=na
gpu.1.mig_mode=na
gpu.1.numa_node=na
gpu.1.temperature=err:999
gpu.1.processes=na
)",
                                  pid, pid));
  const NvmlResult result = probe_nvml(machine);
  const NvmlInfo& nvml = result.nvml;
  EXPECT_TRUE(nvml.library.loaded);
  EXPECT_NE(nvml.library.real_path.find("libnvidia-ml.so.580.95.05"), std::string::npos);
  EXPECT_TRUE(nvml.library.missing_symbols.empty()) << nlohmann::json(nvml.library.missing_symbols);
  EXPECT_EQ(nvml.init_result, 0);
  EXPECT_EQ(nvml.init_result_name, "SUCCESS");
  EXPECT_EQ(nvml.driver_version, "575.57.08");
  EXPECT_EQ(nvml.nvml_version, "12.575.57.08");
  EXPECT_EQ(nvml.cuda_driver_version, 12090);
  EXPECT_EQ(nvml.cuda_driver_version_kernel, 12080);
  EXPECT_EQ(nvml.device_count, 2);
  ASSERT_EQ(result.gpus.size(), 2U);

  const GpuInfo& a = result.gpus[0];
  EXPECT_EQ(a.index, 0);
  EXPECT_FALSE(a.cuda_ordinal);
  EXPECT_EQ(a.name, "NVIDIA A100-SXM4-80GB");
  EXPECT_EQ(a.uuid, "GPU-0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9");
  EXPECT_EQ(a.serial, "1324021001234");
  EXPECT_EQ(a.pci_bus_id, "0000:3B:00.0");
  EXPECT_EQ(a.pci_device_id, "0x20B210DE");
  EXPECT_EQ(a.cc_major, 8);
  EXPECT_EQ(a.cc_minor, 0);
  EXPECT_FALSE(a.sm_count); // NVML does not report it; the driver API does
  EXPECT_EQ(a.memory_total_bytes, 85899345920ULL);
  EXPECT_EQ(a.memory_used_bytes, 1073741824ULL);
  EXPECT_EQ(a.memory_free_bytes, 85899345920ULL - 1073741824ULL - 536870912ULL);
  EXPECT_EQ(a.pcie_gen_current, 3);
  EXPECT_EQ(a.pcie_gen_max, 4);
  EXPECT_EQ(a.pcie_width_current, 8);
  EXPECT_EQ(a.pcie_width_max, 16);
  EXPECT_EQ(a.persistence_mode, false);
  EXPECT_EQ(a.compute_mode, "exclusive_process");
  EXPECT_EQ(a.mig_enabled, true);
  EXPECT_EQ(a.mig_pending, false);
  EXPECT_EQ(a.mig_instance_count, 2);
  EXPECT_EQ(a.ecc_enabled, true);
  EXPECT_EQ(a.ecc_uncorrected_volatile, 2U);
  EXPECT_EQ(a.ecc_corrected_volatile, 17U);
  EXPECT_EQ(a.ecc_uncorrected_aggregate, 5U);
  EXPECT_EQ(a.retired_pages_sbe, 3);
  EXPECT_EQ(a.retired_pages_dbe, 1);
  EXPECT_EQ(a.retired_pages_pending, true);
  EXPECT_EQ(a.remapped_rows_correctable, 4);
  EXPECT_EQ(a.remapped_rows_uncorrectable, 6);
  EXPECT_EQ(a.remapped_rows_pending, true);
  EXPECT_EQ(a.remapped_rows_failure, false);
  EXPECT_EQ(a.clock_event_reasons, 0x48U);
  EXPECT_EQ(a.temperature_c, 87);
  EXPECT_DOUBLE_EQ(a.power_w.value_or(-1), 312.5);
  EXPECT_DOUBLE_EQ(a.power_limit_w.value_or(-1), 400.0);
  EXPECT_EQ(a.sm_clock_mhz, 1095);
  EXPECT_EQ(a.sm_clock_max_mhz, 1410);
  EXPECT_EQ(a.numa_node, 1);
  // Compute processes first, then graphics ones not already listed; names from /proc.
  ASSERT_EQ(a.processes.size(), 2U);
  EXPECT_EQ(a.processes[0].pid, pid);
  EXPECT_EQ(a.processes[0].used_memory_bytes, 2147483648ULL);
  EXPECT_EQ(a.processes[0].name, gpucheck::testing::own_comm());
  EXPECT_EQ(a.processes[1].pid, 99999999U);
  EXPECT_EQ(a.processes[1].used_memory_bytes, 1024U);
  EXPECT_EQ(a.processes[1].name, "");

  // NOT_SUPPORTED (and any other failure) leaves the fact absent.
  const GpuInfo& b = result.gpus[1];
  EXPECT_EQ(b.index, 1);
  EXPECT_EQ(b.pci_bus_id, "0000:86:00.0");
  EXPECT_EQ(b.serial, "");
  EXPECT_FALSE(b.remapped_rows_correctable);
  EXPECT_FALSE(b.remapped_rows_uncorrectable);
  EXPECT_FALSE(b.remapped_rows_pending);
  EXPECT_FALSE(b.remapped_rows_failure);
  EXPECT_FALSE(b.retired_pages_sbe);
  EXPECT_FALSE(b.retired_pages_dbe);
  EXPECT_FALSE(b.retired_pages_pending);
  EXPECT_FALSE(b.ecc_enabled);
  EXPECT_FALSE(b.ecc_uncorrected_volatile);
  EXPECT_FALSE(b.ecc_corrected_volatile);
  EXPECT_FALSE(b.ecc_uncorrected_aggregate);
  EXPECT_FALSE(b.mig_enabled);
  EXPECT_FALSE(b.mig_pending);
  EXPECT_FALSE(b.mig_instance_count);
  EXPECT_FALSE(b.numa_node);
  EXPECT_FALSE(b.temperature_c);
  EXPECT_TRUE(b.processes.empty());
  // Defaults of the fake for what the scenario left alone.
  EXPECT_EQ(b.compute_mode, "default");
  EXPECT_EQ(b.persistence_mode, true);
}

TEST(NvmlProbe, VersionMismatchIsReportedByNameAndStopsThere) {
  FakeMachine machine("nvml.init_rc=18\n");
  const NvmlResult result = probe_nvml(machine);
  EXPECT_TRUE(result.nvml.library.loaded);
  EXPECT_EQ(result.nvml.init_result, 18);
  EXPECT_EQ(result.nvml.init_result_name, "LIB_RM_VERSION_MISMATCH");
  EXPECT_FALSE(result.nvml.driver_version);
  EXPECT_FALSE(result.nvml.device_count);
  EXPECT_TRUE(result.gpus.empty());
}

TEST(NvmlProbe, CrashInInitIsSigabrt) {
  FakeMachine machine("nvml.init_crash=1\n");
  const ChildOutcome outcome = run_child(machine.request("nvml"));
  ASSERT_TRUE(outcome.failure);
  EXPECT_EQ(outcome.failure->kind, ChildFailureKind::signal);
  EXPECT_EQ(outcome.failure->signal_name, "SIGABRT");
  EXPECT_NE(outcome.stderr_tail.find("nvml.init crash"), std::string::npos) << outcome.stderr_tail;
}

TEST(NvmlProbe, HangInInitTimesOut) {
  FakeMachine machine("nvml.init_hang=1\n");
  ChildRequest request = machine.request("nvml");
  request.timeout = 400ms;
  const ChildOutcome outcome = run_child(request);
  ASSERT_TRUE(outcome.failure);
  EXPECT_EQ(outcome.failure->kind, ChildFailureKind::timeout);
}

TEST(NvmlProbe, EightGpusOneWithRowRemapPending) {
  FakeMachine machine(
      "gpu.count=8\ngpu.all.name=NVIDIA H100 80GB HBM3\ngpu.5.remapped_pending=1\n");
  const NvmlResult result = probe_nvml(machine);
  EXPECT_EQ(result.nvml.device_count, 8);
  ASSERT_EQ(result.gpus.size(), 8U);
  for (const GpuInfo& gpu : result.gpus) {
    EXPECT_EQ(gpu.name, "NVIDIA H100 80GB HBM3");
    EXPECT_EQ(gpu.remapped_rows_pending, gpu.index == 5) << gpu.index;
  }
}

TEST(NvmlProbe, LostGpuIsCountedButNotRead) {
  FakeMachine machine("gpu.count=3\ngpu.1.handle_rc=15\n");
  const NvmlResult result = probe_nvml(machine);
  EXPECT_EQ(result.nvml.device_count, 3);
  ASSERT_EQ(result.gpus.size(), 2U);
  EXPECT_EQ(result.gpus[0].index, 0);
  EXPECT_EQ(result.gpus[1].index, 2);
}

// Lost while being read (issue 35): its name, UUID and address answered, then a later query
// GPU_IS_LOST. It is not a GPU with facts missing but a lost one, with what was read of it; one
// lost from its first query has none of them. Any other error of one query is that fact missing
// (ReadsEveryFieldOfEveryGpu).
TEST(NvmlProbe, AGpuLostWhileItIsReadIsAHandleFailure) {
  FakeMachine machine("gpu.count=3\ngpu.1.temperature=err:15\ngpu.2.lost_after_handle=1\n");
  const NvmlResult result = probe_nvml(machine);
  ASSERT_EQ(result.gpus.size(), 1U);
  EXPECT_EQ(result.gpus[0].index, 0);
  ASSERT_EQ(result.nvml.handle_failures.size(), 2U);
  const NvmlHandleFailure& late = result.nvml.handle_failures[0];
  EXPECT_EQ(late.index, 1);
  EXPECT_EQ(late.result, 15);
  EXPECT_EQ(late.result_name, "GPU_IS_LOST");
  EXPECT_EQ(late.call, "a later nvmlDeviceGet* query");
  EXPECT_FALSE(late.uuid.empty());
  EXPECT_FALSE(late.pci_bus_id.empty());
  const NvmlHandleFailure& early = result.nvml.handle_failures[1];
  EXPECT_EQ(early.index, 2);
  EXPECT_EQ(early.call, "nvmlDeviceGetName");
  EXPECT_TRUE(early.uuid.empty());
  EXPECT_TRUE(early.pci_bus_id.empty());
}

TEST(NvmlProbe, OldDriverUsesUnversionedSymbols) {
  const uint32_t pid = static_cast<uint32_t>(::getpid());
  FakeMachine machine(fmt::format("gpu.0.memory_total=1000\ngpu.0.memory_used=100\n"
                                  "gpu.0.memory_reserved=50\ngpu.0.temperature=71\n"
                                  "gpu.0.clock_events=0x20\ngpu.0.compute_processes={}:777\n",
                                  pid),
                      gpucheck::testing::fake_lib_path("nvml-old"));
  const NvmlResult result = probe_nvml(machine);
  EXPECT_EQ(result.nvml.init_result, 0);
  EXPECT_NE(result.nvml.library.real_path.find("libnvidia-ml.so.470.256.02"), std::string::npos);
  const auto& missing = result.nvml.library.missing_symbols;
  for (const char* name : {"nvmlSystemGetCudaDriverVersion_v2", "nvmlDeviceGetMemoryInfo_v2",
                           "nvmlDeviceGetRemappedRows", "nvmlDeviceGetTemperatureV",
                           "nvmlDeviceGetNumaNodeId", "nvmlDeviceGetComputeRunningProcesses_v3"}) {
    EXPECT_NE(std::find(missing.begin(), missing.end(), name), missing.end()) << name;
  }
  EXPECT_FALSE(result.nvml.cuda_driver_version);
  EXPECT_EQ(result.nvml.cuda_driver_version_kernel, 13000);
  ASSERT_EQ(result.gpus.size(), 1U);
  const GpuInfo& gpu = result.gpus[0];
  EXPECT_EQ(gpu.pci_bus_id, "0000:18:00.0"); // through nvmlDeviceGetPciInfo_v2
  EXPECT_EQ(gpu.memory_total_bytes, 1000U);
  EXPECT_EQ(gpu.memory_used_bytes, 150U); // the v1 struct counts reserved memory as used
  EXPECT_EQ(gpu.memory_free_bytes, 850U);
  EXPECT_EQ(gpu.temperature_c, 71);
  EXPECT_EQ(gpu.clock_event_reasons, 0x20U); // through ...ClocksThrottleReasons
  EXPECT_FALSE(gpu.remapped_rows_pending);
  EXPECT_FALSE(gpu.numa_node);
  ASSERT_EQ(gpu.processes.size(), 1U); // the 16-byte v1 process struct
  EXPECT_EQ(gpu.processes[0].pid, pid);
  EXPECT_EQ(gpu.processes[0].used_memory_bytes, 777U);
}

TEST(NvmlProbe, MissingLibraryIsReportedNotFatal) {
  gpucheck::testing::TempDir empty;
  FakeMachine machine("", empty.path().string());
  const NvmlResult result = probe_nvml(machine);
  if (result.nvml.library.loaded) {
    GTEST_SKIP() << "this machine has its own libnvidia-ml.so.1: " << result.nvml.library.real_path;
  }
  EXPECT_EQ(result.nvml.library.name, "libnvidia-ml.so.1");
  EXPECT_NE(result.nvml.library.error.find("libnvidia-ml.so.1"), std::string::npos);
  EXPECT_TRUE(result.nvml.library.missing_symbols.empty());
  EXPECT_FALSE(result.nvml.init_result);
  EXPECT_TRUE(result.gpus.empty());
}

TEST(GpuCensus, AProcessOnItsWayOutIsNotATenant) {
  // A zombie (exited, not yet reaped: as an earlier run's GPU child whose result was taken
  // before its exit) holds nothing and runs nothing; a live process of someone else counts.
  const pid_t zombie = ::fork();
  ASSERT_GE(zombie, 0);
  if (zombie == 0) {
    ::_exit(0);
  }
  std::this_thread::sleep_for(100ms); // it is a zombie now: nothing reaps it yet
  FakeMachine machine(fmt::format("gpu.0.uuid=GPU-census-zombie\n"
                                  "gpu.0.compute_processes={}:1000,1:2000\n",
                                  zombie));
  process::ChildRequest request = machine.request("gpu-census");
  request.args = {"999999"}; // not this test's pid: its children are no one's own
  const nlohmann::json payload = run_ok(request);
  ::waitpid(zombie, nullptr, 0);
  ASSERT_TRUE(payload.contains("gpus")) << payload.dump();
  ASSERT_EQ(payload["gpus"].size(), 1U);
  std::vector<uint32_t> pids;
  for (const nlohmann::json& p : payload["gpus"][0]["processes"]) {
    pids.push_back(p.value("pid", 0U));
  }
  EXPECT_EQ(pids, std::vector<uint32_t>{1}) << payload.dump();
}

TEST(NvmlErrorName, NamesTheCodesADiagnosisNeeds) {
  EXPECT_EQ(nvml_error_name(0), "SUCCESS");
  EXPECT_EQ(nvml_error_name(3), "NOT_SUPPORTED");
  EXPECT_EQ(nvml_error_name(9), "DRIVER_NOT_LOADED");
  EXPECT_EQ(nvml_error_name(15), "GPU_IS_LOST");
  EXPECT_EQ(nvml_error_name(18), "LIB_RM_VERSION_MISMATCH");
  EXPECT_EQ(nvml_error_name(25), "ARGUMENT_VERSION_MISMATCH");
  EXPECT_EQ(nvml_error_name(999), "UNKNOWN");
  EXPECT_EQ(nvml_error_name(4242), "NVML_ERROR_4242");
}

} // namespace
} // namespace gpucheck::platform
