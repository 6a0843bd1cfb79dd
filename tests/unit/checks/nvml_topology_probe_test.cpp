// The NVML probe's topology, NVLink and fabric facts against the fake libnvidia-ml
// (tests/fakes/README.md), and the passive checks judging what it read: HGX boards healthy and
// with faults, a bridged PCIe pair, an old driver without the newer calls.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include "checks/checks.hpp"
#include "fakes/fake_gpu.hpp"
#include "gpucheck/model/json_io.hpp"

namespace gpucheck::platform {
namespace {

using gpucheck::testing::FakeMachine;
using gpucheck::testing::run_ok;

constexpr const char* k_hgx = R"(
gpu.count=8
gpu.all.name=NVIDIA H100 80GB HBM3
gpu.all.nvlinks=18
gpu.all.fabric_state=3
gpu.all.fabric_clique=7
gpu.all.fabric_cluster=00112233445566778899aabbccddeeff
gpu.4.numa_node=1
gpu.5.numa_node=1
gpu.6.numa_node=1
gpu.7.numa_node=1
gpu.4.cpu_affinity=0xFFFF0000
gpu.5.cpu_affinity=0xFFFF0000
gpu.6.cpu_affinity=0xFFFF0000
gpu.7.cpu_affinity=0xFFFF0000
)";

/// The probe's facts as a snapshot the checks can judge.
SystemSnapshot probe_topology(const FakeMachine& machine) {
  const nlohmann::json payload = run_ok(machine.request("nvml"));
  SystemSnapshot s;
  if (!payload.is_null()) {
    s.nvml = payload.at("nvml").get<NvmlInfo>();
    s.gpus = payload.at("gpus").get<std::vector<GpuInfo>>();
    s.gpu_paths = payload.at("gpu_paths").get<std::vector<GpuPath>>();
  }
  return s;
}

/// Each result's codes, "gpu N: code" (or "node: code"), for whole-machine comparisons.
std::vector<std::string> all_codes(const SystemSnapshot& s) {
  std::vector<std::string> out;
  for (const CheckDef& check :
       {checks::gpu_topology_check(), checks::gpu_nvlink_check(), checks::gpu_fabric_check()}) {
    for (const CheckResult& result : check.run(CheckContext{s, {}, nullptr})) {
      for (const Finding& finding : result.findings) {
        out.push_back(fmt::format("{} gpu {}: {}", check.info.id, finding.gpu_index.value_or(-1),
                                  finding.code));
      }
      EXPECT_NE(to_string(result.status), "error") << check.info.id << ": " << result.summary;
    }
  }
  return out;
}

TEST(NvmlTopologyProbe, ReadsAnHgxBoard) {
  FakeMachine machine(k_hgx);
  const SystemSnapshot s = probe_topology(machine);
  ASSERT_EQ(s.gpus.size(), 8U);
  for (const GpuInfo& gpu : s.gpus) {
    SCOPED_TRACE(gpu.index);
    ASSERT_EQ(gpu.nvlinks.size(), 18U);
    for (const NvLinkInfo& link : gpu.nvlinks) {
      EXPECT_TRUE(link.active);
      EXPECT_EQ(link.version, 6); // NVML_NVLINK_VERSION_4_0, as an H100 answers
      EXPECT_EQ(link.remote_bus_id, "0000:F0:00.0");
      EXPECT_EQ(link.crc_flit_errors, 0U);
      EXPECT_EQ(link.crc_errors, 0U);
      EXPECT_EQ(link.recovery_errors, 0U);
    }
    ASSERT_TRUE(gpu.fabric);
    EXPECT_EQ(gpu.fabric->state, "completed");
    EXPECT_EQ(gpu.fabric->status_name, "SUCCESS");
    EXPECT_EQ(gpu.fabric->clique_id, 7U);
    EXPECT_EQ(gpu.fabric->cluster_uuid, "00112233445566778899aabbccddeeff");
    EXPECT_EQ(gpu.fabric->health_mask, 0U); // through the V form
    EXPECT_EQ(gpu.cpu_affinity, gpu.index < 4 ? "0-15" : "16-31");
  }
  ASSERT_EQ(s.gpu_paths.size(), 28U);
  for (const GpuPath& path : s.gpu_paths) {
    EXPECT_LT(path.gpu_a, path.gpu_b);
    EXPECT_EQ(path.p2p_nvlink, "ok");
    EXPECT_EQ(path.p2p_read, "ok");
    EXPECT_EQ(path.nvlinks, 0); // through the switches, not direct
    EXPECT_EQ(path.pcie_path, (path.gpu_a < 4) == (path.gpu_b < 4) ? "numa_node" : "system");
  }
  EXPECT_TRUE(all_codes(s).empty());
}

TEST(NvmlTopologyProbe, FaultsOnAnHgxBoardAreFoundOnTheirGpu) {
  FakeMachine machine(std::string(k_hgx) + R"(
gpu.3.nvlink_down=4,11
gpu.2.nvlink.5.crc=12
gpu.2.nvlink.5.replay=3
gpu.1.nvlink.0.recovery=1
gpu.6.fabric_state=1
gpu.7.fabric_clique=9
p2p.0.5.read=1
)");
  const SystemSnapshot s = probe_topology(machine);
  ASSERT_EQ(s.gpus.size(), 8U);
  EXPECT_FALSE(s.gpus[3].nvlinks[4].active);
  EXPECT_EQ(s.gpus[2].nvlinks[5].crc_errors, 12U);
  EXPECT_EQ(s.gpus[6].fabric->state, "not_started");
  const std::vector<std::string> expected{
      "gpu.topology gpu 0: topology.p2p_unsupported", "gpu.nvlink gpu 1: nvlink.recovery_errors",
      "gpu.nvlink gpu 2: nvlink.crc_errors",          "gpu.nvlink gpu 3: nvlink.links_down",
      "gpu.fabric gpu 6: fabric.not_ready",           "gpu.fabric gpu 7: fabric.clique_split"};
  EXPECT_EQ(all_codes(s), expected);
}

// A counter whose total over the links reads 0 is not read link by link (four calls a link):
// here the link-by-link call fails, and the counters still read 0 from the totals.
TEST(NvmlTopologyProbe, ErrorTotalsOfZeroSpareTheLinkByLinkCalls) {
  FakeMachine machine(std::string(k_hgx) + "gpu.all.nvlink_counters=err:999\n");
  const SystemSnapshot s = probe_topology(machine);
  ASSERT_EQ(s.gpus.size(), 8U);
  for (const NvLinkInfo& link : s.gpus[0].nvlinks) {
    EXPECT_EQ(link.replay_errors, 0U);
    EXPECT_EQ(link.recovery_errors, 0U);
    EXPECT_EQ(link.crc_flit_errors, 0U);
    EXPECT_EQ(link.crc_data_errors, 0U);
  }
  EXPECT_TRUE(all_codes(s).empty());
}

// Its twin: where neither the totals nor the per-link fields can be read (an older driver), each
// link's counters are read, and where nothing answers the counters are unknown, never 0.
TEST(NvmlTopologyProbe, LinkByLinkWhereTheTotalsCannotBeRead) {
  FakeMachine faulty(std::string(k_hgx) + R"(
gpu.all.nvlink_totals=na
gpu.all.nvlink_scoped=na
gpu.2.nvlink.5.crc_flit=12
gpu.1.nvlink.0.recovery=1
gpu.1.nvlink.3.crc_data=7
)");
  const SystemSnapshot s = probe_topology(faulty);
  ASSERT_EQ(s.gpus.size(), 8U);
  EXPECT_EQ(s.gpus[2].nvlinks[5].crc_flit_errors, 12U);
  EXPECT_EQ(s.gpus[1].nvlinks[3].crc_data_errors, 7U);
  EXPECT_EQ(s.gpus[1].nvlinks[4].crc_data_errors, 0U);
  const std::vector<std::string> expected{"gpu.nvlink gpu 1: nvlink.recovery_errors",
                                          "gpu.nvlink gpu 1: nvlink.crc_errors",
                                          "gpu.nvlink gpu 2: nvlink.crc_errors"};
  EXPECT_EQ(all_codes(s), expected);

  FakeMachine unreadable(std::string(k_hgx) + "gpu.all.nvlink_totals=na\ngpu.all.nvlink_scoped=na\n"
                                              "gpu.all.nvlink_counters=err:999\n");
  const SystemSnapshot u = probe_topology(unreadable);
  ASSERT_EQ(u.gpus.size(), 8U);
  EXPECT_FALSE(u.gpus[0].nvlinks.at(0).replay_errors.has_value());
  EXPECT_FALSE(u.gpus[0].nvlinks.at(0).crc_data_errors.has_value());
}

// Replay, recovery and the DL CRC count come from one call of per-link fields: the link-by-link
// call fails here, and those are still read; the CRC flit and data counters are then unread.
TEST(NvmlTopologyProbe, ReplayAndRecoveryComeFromPerLinkFields) {
  FakeMachine machine(std::string(k_hgx) + R"(
gpu.all.nvlink_counters=err:999
gpu.1.nvlink.0.recovery=1
gpu.2.nvlink.5.replay=3
gpu.2.nvlink.5.crc_flit=12
)");
  const SystemSnapshot s = probe_topology(machine);
  ASSERT_EQ(s.gpus.size(), 8U);
  EXPECT_EQ(s.gpus[1].nvlinks[0].recovery_errors, 1U);
  EXPECT_EQ(s.gpus[1].nvlinks[1].recovery_errors, 0U);
  EXPECT_EQ(s.gpus[2].nvlinks[5].replay_errors, 3U);
  EXPECT_EQ(s.gpus[2].nvlinks[4].replay_errors, 0U);
  EXPECT_FALSE(s.gpus[2].nvlinks[5].crc_flit_errors.has_value());
  EXPECT_EQ(s.gpus[2].nvlinks[5].crc_errors, 0U);
  EXPECT_EQ(s.gpus[0].nvlinks[5].crc_flit_errors, 0U); // its total is 0
  const std::vector<std::string> expected{"gpu.nvlink gpu 1: nvlink.recovery_errors",
                                          "gpu.nvlink gpu 2: nvlink.crc_errors"};
  EXPECT_EQ(all_codes(s), expected);
}

// Its twin: without those fields (an older driver), replay and recovery are read link by link.
TEST(NvmlTopologyProbe, ReplayAndRecoveryLinkByLinkWithoutTheFields) {
  FakeMachine machine(std::string(k_hgx) + R"(
gpu.all.nvlink_scoped=na
gpu.1.nvlink.0.recovery=1
gpu.2.nvlink.5.replay=3
)");
  const SystemSnapshot s = probe_topology(machine);
  ASSERT_EQ(s.gpus.size(), 8U);
  EXPECT_EQ(s.gpus[1].nvlinks[0].recovery_errors, 1U);
  EXPECT_EQ(s.gpus[2].nvlinks[5].replay_errors, 3U);
  const std::vector<std::string> expected{"gpu.nvlink gpu 1: nvlink.recovery_errors",
                                          "gpu.nvlink gpu 2: nvlink.crc_errors"};
  EXPECT_EQ(all_codes(s), expected);
}

// Without the per-link fields, a total that is not 0 sends only its own counter to the links: the
// others stay 0 from theirs.
TEST(NvmlTopologyProbe, OnlyACounterWithErrorsIsReadLinkByLink) {
  FakeMachine machine(std::string(k_hgx) +
                      "gpu.all.nvlink_scoped=na\ngpu.0.nvlink.2.crc_data=31\n");
  const SystemSnapshot s = probe_topology(machine);
  ASSERT_EQ(s.gpus.size(), 8U);
  EXPECT_EQ(s.gpus[0].nvlinks[2].crc_data_errors, 31U);
  EXPECT_EQ(s.gpus[0].nvlinks[3].crc_data_errors, 0U);
  EXPECT_EQ(s.gpus[0].nvlinks[2].replay_errors, 0U);
  EXPECT_FALSE(s.gpus[0].nvlinks[2].crc_errors.has_value());
  const std::vector<std::string> expected{"gpu.nvlink gpu 0: nvlink.crc_errors"};
  EXPECT_EQ(all_codes(s), expected);
}

// Its twin, as on a healthy H200: the CRC data counter grows with traffic while the DL CRC count
// (what nvidia-smi nvlink -e shows) reads 0. The latter decides, and the former is not read.
TEST(NvmlTopologyProbe, TheDlCrcCountStandsForTheFlitAndDataCounters) {
  FakeMachine healthy(std::string(k_hgx) + "gpu.0.nvlink.2.crc_data=31\n");
  const SystemSnapshot s = probe_topology(healthy);
  ASSERT_EQ(s.gpus.size(), 8U);
  EXPECT_EQ(s.gpus[0].nvlinks[2].crc_errors, 0U);
  EXPECT_FALSE(s.gpus[0].nvlinks[2].crc_data_errors.has_value());
  EXPECT_TRUE(all_codes(s).empty());

  FakeMachine faulty(std::string(k_hgx) + "gpu.0.nvlink.2.crc_data=31\ngpu.0.nvlink.2.crc=4\n");
  const SystemSnapshot f = probe_topology(faulty);
  ASSERT_EQ(f.gpus.size(), 8U);
  EXPECT_EQ(f.gpus[0].nvlinks[2].crc_errors, 4U);
  const std::vector<std::string> expected{"gpu.nvlink gpu 0: nvlink.crc_errors"};
  EXPECT_EQ(all_codes(f), expected);
}

TEST(NvmlTopologyProbe, BridgedPairIsDirectNvlink) {
  FakeMachine machine(R"(
gpu.count=2
gpu.all.name=NVIDIA H100 NVL
gpu.all.nvlinks=4
gpu.all.nvlink_remote=peer
gpu.all.fabric=na
topology.0.1=10
)");
  const SystemSnapshot s = probe_topology(machine);
  ASSERT_EQ(s.gpu_paths.size(), 1U);
  EXPECT_EQ(s.gpu_paths[0].nvlinks, 4);
  EXPECT_EQ(s.gpu_paths[0].pcie_path, "single_switch");
  EXPECT_FALSE(s.gpus[0].fabric);
  EXPECT_TRUE(all_codes(s).empty());
  const CheckResult topology = checks::gpu_topology_check().run(CheckContext{s, {}, nullptr}).at(0);
  EXPECT_EQ(topology.summary, "2 GPUs, 1 pair: 1 NV4");
  const CheckResult nvlink = checks::gpu_nvlink_check().run(CheckContext{s, {}, nullptr}).at(1);
  EXPECT_EQ(nvlink.summary, "4 of 4 NVLinks up (NVLink 4.0): 4 to GPU 0");
}

TEST(NvmlTopologyProbe, PcieMachineWithoutNvlinkSkipsNvlinkAndFabric) {
  FakeMachine machine("gpu.count=2\ngpu.all.name=NVIDIA L40S\n");
  const SystemSnapshot s = probe_topology(machine);
  EXPECT_TRUE(s.gpus[0].nvlinks.empty());
  EXPECT_EQ(s.gpu_paths.at(0).p2p_nvlink, "not_supported");
  for (const CheckDef& check : {checks::gpu_nvlink_check(), checks::gpu_fabric_check()}) {
    const CheckResult result = check.run(CheckContext{s, {}, nullptr}).at(0);
    EXPECT_EQ(to_string(result.status), "skip") << check.info.id;
  }
  EXPECT_EQ(to_string(checks::gpu_topology_check().run(CheckContext{s, {}, nullptr}).at(0).status),
            "pass");
}

TEST(NvmlTopologyProbe, OldDriverWithoutFabricCallsSkipsWithTheReason) {
  FakeMachine machine("gpu.count=2\ngpu.all.nvlinks=18\ngpu.all.fabric_state=3\n",
                      gpucheck::testing::fake_lib_path("nvml-old"));
  const SystemSnapshot s = probe_topology(machine);
  ASSERT_EQ(s.gpus.size(), 2U);
  const auto& missing = s.nvml.library.missing_symbols;
  for (const char* name : {"nvmlDeviceGetGpuFabricInfo", "nvmlDeviceGetGpuFabricInfoV",
                           "nvmlDeviceGetNvLinkRemotePciInfo_v2"}) {
    EXPECT_NE(std::find(missing.begin(), missing.end(), name), missing.end()) << name;
  }
  EXPECT_FALSE(s.gpus[0].fabric);
  ASSERT_EQ(s.gpus[0].nvlinks.size(), 18U); // the link state is old enough
  EXPECT_EQ(s.gpus[0].nvlinks[0].remote_bus_id, "");
  const CheckResult fabric = checks::gpu_fabric_check().run(CheckContext{s, {}, nullptr}).at(0);
  EXPECT_EQ(to_string(fabric.status), "skip");
  EXPECT_NE(fabric.summary.find("nvmlDeviceGetGpuFabricInfo"), std::string::npos);
  EXPECT_TRUE(all_codes(s).empty());
}

TEST(NvmlTopologyProbe, UnreadableLinkCallsLeaveNoLinks) {
  FakeMachine machine("gpu.count=2\ngpu.all.nvlinks=18\ngpu.1.nvlink=err:999\n");
  const SystemSnapshot s = probe_topology(machine);
  EXPECT_EQ(s.gpus[0].nvlinks.size(), 18U);
  EXPECT_TRUE(s.gpus[1].nvlinks.empty());
  const CheckResult gpu1 = checks::gpu_nvlink_check().run(CheckContext{s, {}, nullptr}).at(1);
  EXPECT_EQ(to_string(gpu1.status), "skip");
}

} // namespace
} // namespace gpucheck::platform
