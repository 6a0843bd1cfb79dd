// The passive multi-GPU checks: gpu.nvlink, gpu.fabric, gpu.topology over synthetic
// HGX snapshots, each fault with its healthy twin; and their pure rules.
#include <gtest/gtest.h>

#include "checks/checks.hpp"
#include "checks/rules/interconnect.hpp"
#include "unit/check_case_runner.hpp"

namespace gpucheck::testing {
namespace {

constexpr const char* k_cluster = "5e1f0c3a9b7d4e2f8a6c1b0d3e5f7a9c";
constexpr const char* k_switch = "0000:F0:00.0";

/// An HGX H200 board of `count` GPUs: 18 NVLink 4 links each to the NVSwitches, no errors, the
/// fabric registered in clique 1, P2P over NVLink between every pair.
SystemSnapshot hgx(int count) {
  SystemSnapshot s = healthy_h200(count);
  for (GpuInfo& gpu : s.gpus) {
    gpu.numa_node = gpu.index < 4 ? 0 : 1;
    gpu.cpu_affinity = gpu.index < 4 ? "0-55,112-167" : "56-111,168-223";
    for (int link = 0; link < 18; ++link) {
      NvLinkInfo info;
      info.link = link;
      info.active = true;
      info.version = 6; // NVML_NVLINK_VERSION_4_0
      info.remote_bus_id = k_switch;
      info.replay_errors = 0;
      info.recovery_errors = 0;
      info.crc_flit_errors = 0;
      info.crc_data_errors = 0;
      gpu.nvlinks.push_back(info);
    }
    gpu.fabric = GpuFabricInfo{"completed", 0, "SUCCESS", 1, k_cluster, 0};
  }
  for (int a = 0; a < count; ++a) {
    for (int b = a + 1; b < count; ++b) {
      s.gpu_paths.push_back({a, b, (a < 4) == (b < 4) ? "numa_node" : "system", 0, "ok", "ok"});
    }
  }
  s.fabric_manager_running = true;
  return s;
}

std::function<void(SystemSnapshot&)> on_gpu(int index, std::function<void(GpuInfo&)> change) {
  return [index, change](SystemSnapshot& s) { change(s.gpus.at(static_cast<size_t>(index))); };
}

TEST(InterconnectChecks, HealthyBoardsPass) {
  for (const int count : {2, 8}) {
    SCOPED_TRACE(count);
    const SystemSnapshot s = hgx(count);
    for (const CheckDef& check : {checks::gpu_nvlink_check(), checks::gpu_fabric_check()}) {
      const std::vector<CheckResult> results = run_check(check, s);
      ASSERT_EQ(results.size(), static_cast<size_t>(count));
      for (const CheckResult& result : results) {
        EXPECT_EQ(to_string(result.status), "pass") << check.info.id << ": " << result.summary;
        EXPECT_TRUE(result.findings.empty());
      }
    }
    const std::vector<CheckResult> topology = run_check(checks::gpu_topology_check(), s);
    ASSERT_EQ(topology.size(), 1U);
    EXPECT_EQ(to_string(topology[0].status), "pass") << topology[0].summary;
    EXPECT_NE(topology[0].summary.find("NVLink"), std::string::npos) << topology[0].summary;
  }
  const CheckResult nvlink = run_check(checks::gpu_nvlink_check(), hgx(2)).at(0);
  EXPECT_EQ(nvlink.summary, "18 of 18 NVLinks up (NVLink 4.0): 18 to NVSwitch");
}

// Issue 36 item 1: figures an alert can read as they are. NVLink 4.0 is 4 (NVML's enumeration
// says 6); GPUs that meet through NVSwitches have no per-pair link count (every pair read 0),
// while a board with direct links keeps it.
TEST(InterconnectChecks, FiguresMeanWhatTheyAre) {
  const auto metric = [](const CheckResult& r, const std::string& name) -> const Metric* {
    for (const Metric& m : r.metrics) {
      if (m.name == name) {
        return &m;
      }
    }
    return nullptr;
  };
  const CheckResult nvlink = run_check(checks::gpu_nvlink_check(), hgx(2)).at(0);
  ASSERT_NE(metric(nvlink, "nvlink_version"), nullptr);
  EXPECT_EQ(metric(nvlink, "nvlink_version")->value, 4.0);
  const CheckResult switched = run_check(checks::gpu_topology_check(), hgx(8)).at(0);
  EXPECT_EQ(metric(switched, "path_0_1_nvlinks"), nullptr);
  SystemSnapshot direct = hgx(2);
  direct.gpu_paths[0].nvlinks = 4;
  const CheckResult bridged = run_check(checks::gpu_topology_check(), direct).at(0);
  ASSERT_NE(metric(bridged, "path_0_1_nvlinks"), nullptr);
  EXPECT_EQ(metric(bridged, "path_0_1_nvlinks")->value, 4.0);
}

TEST(InterconnectChecks, NvlinkFaults) {
  const std::vector<CheckCase> cases = {
      {"healthy twin", nullptr, Status::pass, {}},
      {"one link down",
       on_gpu(1, [](GpuInfo& g) { g.nvlinks[5].active = false; }),
       Status::warn,
       {"nvlink.links_down"}},
      {"NVML lists 12 of 18 links",
       on_gpu(1, [](GpuInfo& g) { g.nvlinks.resize(12); }),
       Status::warn,
       {"nvlink.links_down"}},
      {"recoveries",
       on_gpu(1, [](GpuInfo& g) { g.nvlinks[3].recovery_errors = 2; }),
       Status::warn,
       {"nvlink.recovery_errors"}},
      {"CRC errors counted",
       on_gpu(1, [](GpuInfo& g) { g.nvlinks[7].crc_flit_errors = 40; }),
       Status::pass,
       {"nvlink.crc_errors"}},
      {"DL CRC errors counted (NVLink 4)",
       on_gpu(1, [](GpuInfo& g) { g.nvlinks[7].crc_errors = 5; }),
       Status::pass,
       {"nvlink.crc_errors"}},
      {"CRC data counter beside a DL CRC count of 0 (a healthy H200)",
       on_gpu(1,
              [](GpuInfo& g) {
                for (NvLinkInfo& link : g.nvlinks) {
                  link.crc_errors = 0;
                  link.crc_data_errors = 180;
                }
              }),
       Status::pass,
       {}},
      {"replays counted",
       on_gpu(1, [](GpuInfo& g) { g.nvlinks[7].replay_errors = 3; }),
       Status::pass,
       {"nvlink.crc_errors"}},
      {"counters unreadable",
       on_gpu(1,
              [](GpuInfo& g) {
                for (NvLinkInfo& link : g.nvlinks) {
                  link.crc_flit_errors.reset();
                  link.replay_errors.reset();
                }
              }),
       Status::pass,
       {}},
      {"no NVLink listed", on_gpu(1, [](GpuInfo& g) { g.nvlinks.clear(); }), Status::skip, {}},
      {"bridged PCIe pair, both links up",
       [](SystemSnapshot& s) {
         for (GpuInfo& g : s.gpus) {
           g.name = "NVIDIA H100 NVL";
           g.nvlinks.resize(2);
         }
       },
       Status::pass,
       {}},
      {"bridged PCIe pair, one link down",
       [](SystemSnapshot& s) {
         for (GpuInfo& g : s.gpus) {
           g.name = "NVIDIA H100 NVL";
           g.nvlinks.resize(2);
         }
         s.gpus[1].nvlinks[1].active = false;
       },
       Status::warn,
       {"nvlink.links_down"}},
      {"PCIe card without a bridge",
       [](SystemSnapshot& s) {
         for (GpuInfo& g : s.gpus) {
           g.name = "NVIDIA H100 PCIe";
           for (NvLinkInfo& link : g.nvlinks) {
             link.active = false;
           }
         }
       },
       Status::skip,
       {}},
  };
  run_cases(checks::gpu_nvlink_check(), hgx(2), cases, 1);
}

TEST(InterconnectChecks, NvlinkFindingsNameTheLinkAndPeer) {
  SystemSnapshot s = hgx(2);
  s.gpus[1].nvlinks[5].active = false;
  s.gpus[1].nvlinks[9].active = false;
  s.gpus[0].nvlinks[2].remote_bus_id = s.gpus[1].pci_bus_id;
  s.gpus[0].nvlinks[2].recovery_errors = 4;
  const std::vector<CheckResult> results = run_check(checks::gpu_nvlink_check(), s);
  ASSERT_EQ(results.size(), 2U);
  ASSERT_EQ(results[1].findings.size(), 1U);
  EXPECT_NE(results[1].findings[0].message.find("16 of 18 NVLinks up; down: links 5, 9"),
            std::string::npos)
      << results[1].findings[0].message;
  ASSERT_EQ(results[0].findings.size(), 1U);
  EXPECT_NE(results[0].findings[0].message.find("link 2: 4 recovery events"), std::string::npos)
      << results[0].findings[0].message;
  EXPECT_NE(results[0].findings[0].message.find("(peer GPU 1)"), std::string::npos)
      << results[0].findings[0].message;
  EXPECT_EQ(results[0].findings[0].gpu_index, 0);
}

// The CRC count a message names: the DL count where the link has one, else flit and data.
TEST(InterconnectChecks, CrcFindingNamesTheCountersRead) {
  SystemSnapshot s = hgx(2);
  s.gpus[0].nvlinks[3].crc_errors = 3;
  s.gpus[0].nvlinks[3].crc_data_errors.reset();
  s.gpus[1].nvlinks[4].crc_flit_errors = 1;
  s.gpus[1].nvlinks[4].crc_data_errors = 2;
  s.gpus[1].nvlinks[4].replay_errors = 1;
  const std::vector<CheckResult> results = run_check(checks::gpu_nvlink_check(), s);
  ASSERT_EQ(results.size(), 2U);
  ASSERT_EQ(results[0].findings.size(), 1U);
  EXPECT_NE(results[0].findings[0].message.find("link 3: 3 CRC errors and 0 replays"),
            std::string::npos)
      << results[0].findings[0].message;
  ASSERT_EQ(results[1].findings.size(), 1U);
  EXPECT_NE(results[1].findings[0].message.find(
                "link 4: 1 CRC flit error, 2 CRC data errors and 1 replay since the driver"),
            std::string::npos)
      << results[1].findings[0].message;
}

TEST(InterconnectChecks, OneGpuOrOldDriverSkipsWithReason) {
  const SystemSnapshot one = hgx(1);
  for (const CheckDef& check : {checks::gpu_nvlink_check(), checks::gpu_topology_check()}) {
    const CheckResult result = run_check(check, one).at(0);
    EXPECT_EQ(to_string(result.status), "skip") << check.info.id;
    EXPECT_NE(result.summary.find("one GPU"), std::string::npos) << result.summary;
  }
  SystemSnapshot old = hgx(2);
  old.nvml.library.missing_symbols = {"nvmlDeviceGetNvLinkState", "nvmlDeviceGetGpuFabricInfoV",
                                      "nvmlDeviceGetGpuFabricInfo",
                                      "nvmlDeviceGetTopologyCommonAncestor"};
  old.gpu_paths.clear();
  for (GpuInfo& gpu : old.gpus) {
    gpu.nvlinks.clear();
    gpu.fabric.reset();
  }
  const auto reason = [&old](const CheckDef& check) { return run_check(check, old).at(0).summary; };
  EXPECT_NE(reason(checks::gpu_nvlink_check()).find("nvmlDeviceGetNvLinkState"), std::string::npos);
  EXPECT_NE(reason(checks::gpu_fabric_check()).find("nvmlDeviceGetGpuFabricInfo"),
            std::string::npos);
  EXPECT_NE(reason(checks::gpu_topology_check()).find("nvmlDeviceGetTopologyCommonAncestor"),
            std::string::npos);
  for (const CheckDef& check :
       {checks::gpu_nvlink_check(), checks::gpu_fabric_check(), checks::gpu_topology_check()}) {
    EXPECT_EQ(to_string(run_check(check, old).at(0).status), "skip") << check.info.id;
  }
}

TEST(InterconnectChecks, FabricFaults) {
  const auto all_gpus = [](std::function<void(GpuFabricInfo&)> change) {
    return [change](SystemSnapshot& s) {
      for (GpuInfo& g : s.gpus) {
        change(*g.fabric);
      }
    };
  };
  const std::vector<CheckCase> cases = {
      {"healthy twin", nullptr, Status::pass, {}},
      {"Fabric Manager down: not started",
       all_gpus([](GpuFabricInfo& f) { f.state = "not_started"; }),
       Status::fail,
       {"fabric.not_ready"}},
      {"registration in progress",
       all_gpus([](GpuFabricInfo& f) { f.state = "in_progress"; }),
       Status::warn,
       {"fabric.not_ready"}},
      {"registration failed",
       on_gpu(3,
              [](GpuInfo& g) {
                g.fabric->status = 27;
                g.fabric->status_name = "NOT_READY";
              }),
       Status::fail,
       {"fabric.registration_failed"}},
      {"GPU 3 in another clique",
       on_gpu(3, [](GpuInfo& g) { g.fabric->clique_id = 2; }),
       Status::warn,
       {"fabric.clique_split"}},
      {"GPU 3 in another cluster",
       on_gpu(3, [](GpuInfo& g) { g.fabric->cluster_uuid = std::string(32, '0'); }),
       Status::warn,
       {"fabric.clique_split"}},
      {"another GPU split off: GPU 3 is in the node's clique",
       on_gpu(5, [](GpuInfo& g) { g.fabric->clique_id = 2; }),
       Status::pass,
       {}},
      {"not an NVSwitch system",
       all_gpus([](GpuFabricInfo& f) { f.state = "not_supported"; }),
       Status::skip,
       {}},
  };
  run_cases(checks::gpu_fabric_check(), hgx(8), cases, 3);
}

// Found by fuzz_snapshot: a snapshot repeating a GPU index (a hand-made or corrupt one replayed)
// made the clique check look the other clique's member up by index, find a GPU without fabric
// facts and format an empty optional. The member itself is named now.
TEST(InterconnectChecks, ARepeatedGpuIndexNamesTheOtherCliquesMember) {
  SystemSnapshot s = hgx(2);
  s.gpus[1].fabric->clique_id = 2;
  GpuInfo twin = s.gpus[1];
  twin.fabric.reset(); // the same index again, without fabric facts
  s.gpus.push_back(twin);
  const std::vector<CheckResult> results = run_check(checks::gpu_fabric_check(), s);
  ASSERT_FALSE(results.empty());
  ASSERT_FALSE(results.at(0).findings.empty());
  const Finding& split = results.at(0).findings.at(0);
  EXPECT_EQ(split.code, "fabric.clique_split");
  EXPECT_NE(split.message.find("clique 2"), std::string::npos) << split.message;
}

TEST(InterconnectChecks, FabricNotReadySaysWhetherTheFabricManagerRuns) {
  SystemSnapshot s = hgx(2);
  s.gpus[0].fabric->state = "not_started";
  s.fabric_manager_running = false;
  const Finding finding = run_check(checks::gpu_fabric_check(), s).at(0).findings.at(0);
  EXPECT_NE(finding.message.find("fabric registration not_started"), std::string::npos);
  EXPECT_NE(finding.message.find("no nv-fabricmanager process"), std::string::npos);
  EXPECT_NE(finding.remedy.find("systemctl enable --now nvidia-fabricmanager"), std::string::npos);
}

TEST(InterconnectChecks, TopologyNamesPairsWithoutP2P) {
  const std::vector<CheckCase> cases = {
      {"healthy twin", nullptr, Status::pass, {}},
      {"pair 0-3 without P2P (ACS / IOMMU)",
       [](SystemSnapshot& s) { s.gpu_paths[2].p2p_read = "chipset_not_supported"; },
       Status::pass,
       {"topology.p2p_unsupported"}},
      {"paths unread", [](SystemSnapshot& s) { s.gpu_paths.clear(); }, Status::skip, {}},
  };
  run_cases(checks::gpu_topology_check(), hgx(4), cases);

  SystemSnapshot s = hgx(8);
  s.gpu_paths[2].p2p_read = "chipset_not_supported";
  const CheckResult result = run_check(checks::gpu_topology_check(), s).at(0);
  ASSERT_EQ(result.findings.size(), 1U);
  EXPECT_EQ(result.findings[0].message,
            "GPUs 0 and 3 (NVLink): NVML peer-to-peer read status chipset_not_supported");
  EXPECT_EQ(result.summary, "8 GPUs, 28 pairs: 28 NVLink");
  bool numa_metric = false;
  for (const Metric& metric : result.metrics) {
    if (metric.name == "gpu5_numa_node") {
      numa_metric = true;
      EXPECT_EQ(metric.value, 1.0);
      EXPECT_EQ(metric.note, "CPUs 56-111,168-223");
    }
  }
  EXPECT_TRUE(numa_metric);
}

TEST(InterconnectRules, ExpectedLinksByModel) {
  EXPECT_EQ(checks::expected_nvlinks("NVIDIA H200"), 18);
  EXPECT_EQ(checks::expected_nvlinks("NVIDIA H100 80GB HBM3"), 18);
  EXPECT_EQ(checks::expected_nvlinks("NVIDIA A100-SXM4-80GB"), 12);
  EXPECT_EQ(checks::expected_nvlinks("Tesla V100-SXM2-32GB"), 6);
  EXPECT_EQ(checks::expected_nvlinks("NVIDIA H800"), 8);
  EXPECT_EQ(checks::expected_nvlinks("NVIDIA H100 PCIe"), std::nullopt);
  EXPECT_EQ(checks::expected_nvlinks("NVIDIA H200 NVL"), std::nullopt);
  EXPECT_EQ(checks::expected_nvlinks("NVIDIA GeForce RTX 4090"), std::nullopt);
}

TEST(InterconnectRules, PathLabels) {
  EXPECT_EQ(checks::path_label({0, 1, "system", 18, "ok", "ok"}), "NV18");
  EXPECT_EQ(checks::path_label({0, 1, "system", 0, "ok", "ok"}), "NVLink");
  EXPECT_EQ(checks::path_label({0, 1, "single_switch", 0, "not_supported", "ok"}), "PIX");
  EXPECT_EQ(checks::path_label({0, 1, "multiple_switches", 0, "", ""}), "PXB");
  EXPECT_EQ(checks::path_label({0, 1, "host_bridge", 0, "", ""}), "PHB");
  EXPECT_EQ(checks::path_label({0, 1, "numa_node", 0, "", ""}), "NODE");
  EXPECT_EQ(checks::path_label({0, 1, "system", 0, "not_supported", ""}), "SYS");
  EXPECT_EQ(checks::path_label({0, 1, "", 0, "", ""}), "?");
}

} // namespace
} // namespace gpucheck::testing
