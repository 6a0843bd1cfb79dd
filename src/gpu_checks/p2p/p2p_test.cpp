// gpu.p2p's judge over payloads built from the typed struct (protocol/payloads.hpp) and snapshots
// with NVLink or PCIe paths; and the peers child against the fake libcuda's access matrix.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <map>

#include "checks/active/judging.hpp"
#include "fakes/fake_gpu.hpp"
#include "gpu_checks/nccl/nccl.hpp"
#include "gpu_checks/p2p/p2p.hpp"
#include "protocol/payloads.hpp"
#include "support/registered_judge.hpp"
#include "unit/snapshot_builder.hpp"

namespace gpucheck::testing {
namespace {

/// Two H200s joined by NVLink 4 through NVSwitches (18 links each), or over PCIe gen5 x16.
SystemSnapshot pair(bool nvlink) {
  SystemSnapshot s = healthy_h200(2);
  for (GpuInfo& gpu : s.gpus) {
    for (int link = 0; nvlink && link < 18; ++link) {
      gpu.nvlinks.push_back({link, true, 4, "0000:F0:00.0", 0, 0, 0, 0});
    }
  }
  s.gpu_paths = {{0, 1, "system", 0, nvlink ? "ok" : "not_supported", "ok"}};
  return s;
}

protocol::PeersPayload measured(double gbps) {
  protocol::PeersPayload p;
  p.devices = {{0, "NVIDIA H200", "0000:1B:00.0"}, {1, "NVIDIA H200", "0000:3B:00.0"}};
  p.access = {{0, 1, true, 0, true}, {1, 0, true, 0, true}};
  p.pairs = {{0, 1, 64ULL << 20, 12, gbps, gbps * 0.98, 2.5},
             {1, 0, 64ULL << 20, 12, gbps * 1.01, gbps * 0.97, 2.4}};
  p.gated = true;
  return p;
}

nlohmann::json payload_of(const protocol::PeersPayload& p) {
  nlohmann::json out = {{"metrics", nlohmann::json::array()}, {"verify", nlohmann::json::array()}};
  protocol::write_peers(p, out);
  return out;
}

std::vector<std::string> codes(const checks::Judgement& j) {
  std::vector<std::string> out;
  for (const Finding& f : j.findings) {
    out.push_back(f.code);
  }
  return out;
}

TEST(GpuP2pJudge, HealthyNvlinkPairPassesWithPerPairMetrics) {
  std::vector<Metric> metrics;
  const checks::Judgement j = test::registered_span_judge(
      "gpu.p2p", pair(true), payload_of(measured(371.0)), false, metrics);
  EXPECT_TRUE(j.findings.empty());
  EXPECT_EQ(j.summary, "2 GPUs: 0->1 371 GB/s (364 both ways), 2.5 us; 1->0 375 GB/s");
  std::vector<std::string> names;
  for (const Metric& m : metrics) {
    names.push_back(m.name);
  }
  for (const char* name : {"p2p_0_1_write_gbps", "p2p_0_1_bidir_gbps", "p2p_0_1_latency_us",
                           "p2p_1_0_write_gbps", "p2p_gbps"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
  }
  EXPECT_EQ(metrics.back().value, 371.0); // the slowest direction
}

TEST(GpuP2pJudge, LongLevelSweepIsAFigurePerSizeAndDirection) {
  protocol::PeersPayload p = measured(371.0);
  for (const uint64_t mib : {1, 4, 16, 64, 256}) {
    p.sweep.push_back({0, 1, mib << 20, 8, 100.0 + static_cast<double>(mib)});
    p.sweep.push_back({1, 0, mib << 20, 8, 101.0 + static_cast<double>(mib)});
  }
  std::vector<Metric> metrics;
  const checks::Judgement j =
      test::registered_span_judge("gpu.p2p", pair(true), payload_of(p), true, metrics);
  // Figures, never verdicts: 101 GB/s at 1 MiB is far below what NVLink carries at 64 MiB.
  EXPECT_TRUE(j.findings.empty());
  EXPECT_EQ(j.summary, "2 GPUs: 0->1 371 GB/s (364 both ways), 2.5 us; 1->0 375 GB/s; each way "
                       "at 5 sizes, 1-256 MiB");
  std::map<std::string, const Metric*> by_name;
  for (const Metric& m : metrics) {
    by_name[m.name] = &m;
  }
  ASSERT_TRUE(by_name.count("p2p_0_1_1mib_gbps"));
  ASSERT_TRUE(by_name.count("p2p_1_0_256mib_gbps"));
  EXPECT_EQ(by_name["p2p_1_0_256mib_gbps"]->value, 357.0);
  EXPECT_EQ(by_name["p2p_0_1_1mib_gbps"]->note,
            "size sweep (--level long): 1 MiB x 8, median of 3; measured under contention");
  EXPECT_EQ(metrics.size(), 6U + 1U + 10U);     // per pair 3 x 2, p2p_gbps, the sweep
  EXPECT_EQ(by_name["p2p_gbps"]->value, 371.0); // still the one size of the standard run
}

TEST(GpuP2pJudge, FarBelowThePathWarnsNamingThePair) {
  std::vector<Metric> metrics;
  // NVLink: 18 links x 25 GB/s; 60 GB/s is under 40% of it.
  checks::Judgement j = test::registered_span_judge("gpu.p2p", pair(true),
                                                    payload_of(measured(60.0)), false, metrics);
  ASSERT_EQ(codes(j), (std::vector<std::string>{"p2p.bandwidth_low", "p2p.bandwidth_low"}));
  EXPECT_EQ(j.findings[0].severity, Severity::warn);
  EXPECT_EQ(j.findings[0].message,
            "GPU 0 -> GPU 1: 60.0 GB/s over NVLink (18 links), below 40% of the 450 GB/s that "
            "path carries");
  // PCIe gen5 x16 (63 GB/s one way): 50 GB/s is healthy, 6 GB/s is the ACS/IOMMU case.
  metrics.clear();
  EXPECT_TRUE(test::registered_span_judge("gpu.p2p", pair(false), payload_of(measured(50.0)), false,
                                          metrics)
                  .findings.empty());
  j = test::registered_span_judge("gpu.p2p", pair(false), payload_of(measured(6.0)), false,
                                  metrics);
  ASSERT_EQ(j.findings.size(), 2U);
  EXPECT_NE(j.findings[0].message.find("PCIe gen5 x16"), std::string::npos);
  EXPECT_NE(j.findings[0].remedy.find("iommu=pt"), std::string::npos);
  // Under contention the verdict is a note.
  j = test::registered_span_judge("gpu.p2p", pair(false), payload_of(measured(6.0)), true, metrics);
  EXPECT_EQ(j.findings[0].severity, Severity::info);
  EXPECT_NE(j.findings[0].message.find("measured under contention"), std::string::npos);
}

TEST(GpuP2pJudge, NoPeerAccessIsANoteOrAWarningOverNvlink) {
  protocol::PeersPayload p = measured(0.0);
  p.access = {{0, 1, false, 0, false}, {1, 0, false, 0, false}};
  p.pairs.clear();
  std::vector<Metric> metrics;
  checks::Judgement j =
      test::registered_span_judge("gpu.p2p", pair(false), payload_of(p), false, metrics);
  ASSERT_EQ(codes(j), (std::vector<std::string>{"p2p.no_access", "p2p.no_access"}));
  EXPECT_EQ(j.findings[0].severity, Severity::info);
  EXPECT_EQ(j.summary, "2 GPUs: no pair with peer access to measure");
  j = test::registered_span_judge("gpu.p2p", pair(true), payload_of(p), false, metrics);
  EXPECT_EQ(j.findings[0].severity, Severity::warn);
  EXPECT_EQ(j.findings[0].message,
            "GPU 0 cannot access GPU 1's memory directly (cuDeviceCanAccessPeer = 0; path NVLink)");
}

TEST(GpuP2pJudge, CorruptedPeerCopyFailsAndAnUnreadablePayloadIsAnError) {
  nlohmann::json payload = payload_of(measured(371.0));
  protocol::PayloadVerification v{
      "p2p", "0000:1B:00.0 -> 0000:3B:00.0", 16777216, 1, 1024, "0x000000a5", "0x3f1c2a9b"};
  payload["verify"].push_back(protocol::to_json(v));
  checks::GpuTarget gpu;
  const std::vector<Finding> findings =
      checks::common_findings("Peer-to-peer copies", gpu, payload);
  ASSERT_EQ(findings.size(), 1U);
  EXPECT_EQ(findings[0].code, "p2p.data_mismatch");
  EXPECT_EQ(findings[0].severity, Severity::fail);
  EXPECT_NE(findings[0].message.find("peer copy 0000:1B:00.0 -> 0000:3B:00.0: 1 of 16777216 words "
                                     "wrong"),
            std::string::npos)
      << findings[0].message;
  payload.erase("pairs");
  std::vector<Metric> metrics;
  const checks::Judgement j =
      test::registered_span_judge("gpu.p2p", pair(true), payload, false, metrics);
  ASSERT_EQ(codes(j), (std::vector<std::string>{"gpu.child_failed"}));
  EXPECT_NE(j.findings[0].message.find("pairs is missing"), std::string::npos);
  // A child that failed before its access matrix: its failure is the finding (common_findings),
  // the judge adds none.
  nlohmann::json early = {{"metrics", nlohmann::json::array()},
                          {"verify", nlohmann::json::array()},
                          {"failure", {{"stage", "context"}, {"message", "no context"}}}};
  const checks::Judgement quiet =
      test::registered_span_judge("gpu.p2p", pair(true), early, false, metrics);
  EXPECT_TRUE(quiet.findings.empty());
  EXPECT_TRUE(
      test::registered_span_judge("gpu.nccl", pair(true), early, false, metrics).findings.empty());
}

TEST(GpuPeersChild, ReadsTheAccessMatrixFromTheDriver) {
  // The fake driver gives contexts but no memory: the child reports the access matrix, then the
  // first call the fake does not implement.
  FakeMachine machine("gpu.count=3\ngpu.all.context_rc=0\np2p.0.2.access=0\np2p.1.2.access=0\n");
  process::ChildRequest request = machine.request("gpu-peers", {"0,1,2"});
  const nlohmann::json payload = run_ok(request);
  ASSERT_TRUE(payload.is_object()) << payload.dump();
  const auto peers = protocol::read_peers(payload);
  ASSERT_TRUE(peers) << peers.error().message << "\n" << payload.dump();
  ASSERT_EQ(peers.value().devices.size(), 3U);
  EXPECT_EQ(peers.value().devices[1].pci_bus_id, "0000:28:00.0");
  ASSERT_EQ(peers.value().access.size(), 6U);
  for (const protocol::PeerAccess& a : peers.value().access) {
    EXPECT_EQ(a.can_access, a.from != 2 && a.to != 2) << a.from << "->" << a.to;
  }
  EXPECT_TRUE(peers.value().pairs.empty());
  ASSERT_TRUE(payload.contains("failure"));
  EXPECT_EQ(payload["failure"]["call"], "cuCtxEnablePeerAccess");
  EXPECT_EQ(payload["failure"]["stage"], "peer access");
  // Both works in one child: a line each. The peer work failed and the fake's contexts cannot
  // synchronise (cuCtxSynchronize answers 801), so NCCL is not run and says why.
  process::ChildRequest both = machine.request("gpu-peers", {"0,1", "peers,nccl"});
  both.result_lines = true;
  const process::ChildOutcome outcome = process::run_child(both);
  ASSERT_TRUE(outcome.ok()) << outcome.stderr_tail;
  ASSERT_TRUE(outcome.payload->is_array()) << outcome.payload->dump();
  ASSERT_EQ(outcome.payload->size(), 3U) << outcome.payload->dump(); // and the child's summary
  EXPECT_EQ((*outcome.payload)[0]["work"], "peers");
  EXPECT_EQ((*outcome.payload)[1]["work"], "nccl");
  EXPECT_NE((*outcome.payload)[1].value("not_run", "").find("left a CUDA context unusable"),
            std::string::npos)
      << (*outcome.payload)[1].dump();
  // The plan left the all-reduce out (nccl_on_idle_gpus): its line says why, NCCL never loads.
  process::ChildRequest left_out = machine.request("gpu-peers", {"0,1", "peers,nccl"});
  left_out.result_lines = true;
  left_out.env.emplace_back("GPUCHECK_NCCL_NOT_RUN", "other processes use these GPUs (42)");
  const process::ChildOutcome skipped = process::run_child(left_out);
  ASSERT_TRUE(skipped.ok()) << skipped.stderr_tail;
  ASSERT_TRUE(skipped.payload->is_array()) << skipped.payload->dump();
  EXPECT_EQ((*skipped.payload)[1].value("not_run", ""), "other processes use these GPUs (42)");
  EXPECT_FALSE((*skipped.payload)[1].contains("nccl_library"));
  // One device is not a pair.
  const nlohmann::json one = run_ok(machine.request("gpu-peers", {"0"}));
  ASSERT_TRUE(one.contains("failure"));
  EXPECT_NE(one["failure"]["message"].get<std::string>().find("at least two"), std::string::npos);
}

} // namespace
} // namespace gpucheck::testing
