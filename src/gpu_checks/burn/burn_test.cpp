// gpu.burn: its rules (rules.hpp) and judge over reports built as the children write them (the
// burn's NVML samples: a thermal slowdown mid-run, a power brake, a flat healthy run, a
// power-capped run; Xids, mismatches, the comparison across GPUs and with the model's
// reference), its judge as the runner calls it on a child's JSON, and its registration line.
#include "gpu_checks/burn/rules.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>

#include "checks/active/judging.hpp"
#include "checks/rules/xid_catalog.hpp"
#include "engine/plan.hpp"
#include "findings/catalog.hpp"
#include "gates/metric_names.hpp"
#include "gpu/gpu_children.hpp"
#include "gpu_checks/burn/burn.hpp"
#include "gpucheck/registry.hpp"
#include "protocol/payloads.hpp"
#include "support/registered_judge.hpp"

namespace gpucheck::gpu_checks::burn {
namespace {

using checks::find_xid;
using checks::k_xid_catalogue_url;
using checks::XidClass;
using checks::XidInfo;

/// gpu.burn's judge as the runner calls it, on a child's JSON.
checks::Judgement judge_gpu_burn(const checks::GpuTarget& gpu, const nlohmann::json& json) {
  return test::registered_judge("gpu.burn", gpu, json);
}

GpuTarget h200(int index = 0) {
  GpuTarget gpu;
  gpu.gpu_index = index;
  gpu.ordinal = index;
  gpu.name = "NVIDIA H200";
  gpu.pci_bus_id = "00000000:1B:00.0";
  return gpu;
}

std::vector<std::string> codes(const std::vector<Finding>& findings) {
  std::vector<std::string> out;
  for (const Finding& f : findings) {
    out.push_back(f.code);
  }
  return out;
}

// ---- gpu.burn: the NVML watch --------------------------------------------------------------

/// A watch of `n` samples 100 ms apart at 1980 MHz, 60 C, 500 W, no reason.
protocol::BurnWatch flat_watch(size_t n) {
  protocol::BurnWatch w;
  w.available = true;
  w.period_ms = 100;
  w.max_sm_mhz = 1980;
  for (size_t i = 0; i < n; ++i) {
    w.t_ms.push_back(static_cast<int64_t>(i) * 100);
    w.sm_mhz.push_back(1980);
    w.mem_mhz.push_back(2619);
    w.temp_c.push_back(60);
    w.power_w.push_back(500.0);
    w.reasons.push_back(0);
  }
  return w;
}

TEST(BurnClocks, AFlatHealthyRunHasNoFinding) {
  const ClockVerdict v = judge_burn_clocks(h200(), flat_watch(600));
  EXPECT_TRUE(v.findings.empty());
  EXPECT_EQ(v.summary, "max 60 C, 500 W; SM clock median 1980 MHz (max 1980 MHz) over 600 "
                       "samples; no clock-event reason");
}

TEST(BurnClocks, OnlySwPowerCapIsNormalAndSaidInTheSummary) {
  protocol::BurnWatch w = flat_watch(600);
  for (size_t i = 0; i < w.reasons.size(); ++i) {
    w.reasons[i] = k_reason_sw_power_cap;
    w.sm_mhz[i] = 1755;
    w.power_w[i] = 699.5;
  }
  const ClockVerdict v = judge_burn_clocks(h200(), w);
  EXPECT_TRUE(v.findings.empty());
  EXPECT_NE(v.summary.find("SW power cap in 100% of samples (normal at full load)"),
            std::string::npos)
      << v.summary;
}

TEST(BurnClocks, ThermalSlowdownMidRunWarnsWithItsStart) {
  // From 30 s on the driver slows the GPU down for heat: half the run, clocks down to 1410 MHz.
  protocol::BurnWatch w = flat_watch(600);
  for (size_t i = 300; i < 600; ++i) {
    w.reasons[i] = k_reason_sw_thermal;
    w.sm_mhz[i] = 1410;
    w.temp_c[i] = 88;
  }
  const ClockVerdict v = judge_burn_clocks(h200(), w);
  ASSERT_EQ(codes(v.findings), std::vector<std::string>{"gpu.burn_thermal"});
  EXPECT_EQ(v.findings[0].severity, Severity::warn);
  EXPECT_EQ(v.findings[0].message,
            "GPU 0: SW thermal slowdown held the clocks down in 50.0% of the burn's 600 NVML "
            "samples, from 30.0 s into it (up to 88 C); SM clock then 1410 MHz, max 1980 MHz");
  // Its twin: the same slowdown in 5% of the samples (30 of 600) is not over the line.
  protocol::BurnWatch brief = flat_watch(600);
  for (size_t i = 300; i < 330; ++i) {
    brief.reasons[i] = k_reason_sw_thermal;
  }
  EXPECT_TRUE(judge_burn_clocks(h200(), brief).findings.empty());
}

TEST(BurnClocks, HwThermalSlowdownFailsAndHidesTheHwSlowdownItCarries) {
  protocol::BurnWatch w = flat_watch(600);
  for (size_t i = 420; i < 600; ++i) {
    w.reasons[i] = k_reason_hw_thermal | k_reason_hw_slowdown;
    w.sm_mhz[i] = 990;
  }
  const ClockVerdict v = judge_burn_clocks(h200(), w);
  ASSERT_EQ(codes(v.findings), std::vector<std::string>{"gpu.burn_throttled_hw"});
  EXPECT_EQ(v.findings[0].severity, Severity::fail);
  EXPECT_EQ(v.findings[0].message,
            "GPU 0: HW thermal slowdown (0x40) held the clocks down in 30.0% of the burn's 600 "
            "NVML samples, from 42.0 s into it; SM clock then 990 MHz, max 1980 MHz");
}

TEST(BurnClocks, APowerBrakeFails) {
  protocol::BurnWatch w = flat_watch(200);
  for (size_t i = 50; i < 60; ++i) {
    w.reasons[i] = k_reason_hw_power_brake | k_reason_hw_slowdown;
    w.sm_mhz[i] = 345;
  }
  w.max_sm_mhz = 0; // NVML did not say: the highest clock seen stands in
  const ClockVerdict v = judge_burn_clocks(h200(), w);
  ASSERT_EQ(codes(v.findings), std::vector<std::string>{"gpu.burn_throttled_hw"});
  EXPECT_EQ(v.findings[0].message,
            "GPU 0: HW power brake (0x80) held the clocks down in 5.0% of the burn's 200 NVML "
            "samples, from 5.0 s into it; SM clock then 345 MHz, highest seen 1980 MHz");
}

TEST(BurnClocks, OneStraySampleOfHwSlowdownIsNoThrottle) {
  // One sample in 100 (1%) and a single sample in a short run: neither is over the line.
  protocol::BurnWatch w = flat_watch(100);
  w.reasons[40] = k_reason_hw_slowdown;
  EXPECT_TRUE(judge_burn_clocks(h200(), w).findings.empty());
  protocol::BurnWatch short_run = flat_watch(20);
  short_run.reasons[10] = k_reason_hw_slowdown;
  EXPECT_TRUE(judge_burn_clocks(h200(), short_run).findings.empty());
  // Its twin: two samples of 100 (2%) fail, HW slowdown named alone.
  w.reasons[41] = k_reason_hw_slowdown;
  const ClockVerdict v = judge_burn_clocks(h200(), w);
  ASSERT_EQ(codes(v.findings), std::vector<std::string>{"gpu.burn_throttled_hw"});
  EXPECT_NE(v.findings[0].message.find("HW slowdown (0x8)"), std::string::npos);
}

TEST(BurnClocks, NoWatchIsSaidNotJudged) {
  protocol::BurnWatch w;
  w.why = "libnvidia-ml.so.1 could not be loaded";
  const ClockVerdict v = judge_burn_clocks(h200(), w);
  EXPECT_TRUE(v.findings.empty());
  EXPECT_EQ(v.summary, "no NVML watch (libnvidia-ml.so.1 could not be loaded)");
}

// ---- gpu.burn: one GPU ---------------------------------------------------------------------

protocol::BurnType burn_type(std::string type, double tflops, std::string hash = "aaaa") {
  protocol::BurnType t;
  t.type = std::move(type);
  t.n = 8192;
  t.iterations = 1000;
  t.tflops_median = tflops;
  t.tflops_min = tflops * 0.97;
  t.elapsed_s = 15.0;
  t.result_hash = std::move(hash);
  return t;
}

protocol::BurnReport healthy_burn() {
  protocol::BurnReport b;
  b.duration_s = 60.0;
  b.elapsed_s = 60.2;
  b.cublas = "13.0.2";
  b.types = {burn_type("bf16", 800.0), burn_type("fp16", 790.0), burn_type("fp32", 50.0),
             burn_type("fp64", 60.0)};
  b.watch = flat_watch(600);
  b.xid_watch = "nvml";
  return b;
}

TEST(BurnJudge, AHealthyBurnPassesWithPerTypeFigures) {
  const Judgement j = judge_burn(h200(), healthy_burn());
  EXPECT_TRUE(j.findings.empty());
  EXPECT_EQ(j.summary,
            "GPU 0 (NVIDIA H200): 60 s burn, cuBLAS 13.0.2: bf16 800.0 TFLOP/s x1000, fp16 790.0 "
            "TFLOP/s x1000, fp32 50.0 TFLOP/s x1000, fp64 60.0 TFLOP/s x1000; every iteration "
            "identical to the first; max 60 C, 500 W; SM clock median 1980 MHz (max 1980 MHz) "
            "over 600 samples; no clock-event reason; no Xid (NVML events)");
}

TEST(BurnJudge, AMismatchedIterationIsSilentDataCorruption) {
  protocol::BurnReport b = healthy_burn();
  b.types[2].mismatched_iterations = 1;
  b.types[2].first_mismatch = protocol::BurnMismatch{5, 1};
  const Judgement j = judge_burn(h200(), b);
  ASSERT_EQ(codes(j.findings), std::vector<std::string>{"gpu.burn_mismatch"});
  EXPECT_EQ(j.findings[0].severity, Severity::fail);
  EXPECT_EQ(j.findings[0].message, "GPU 0: fp32 GEMM 8192^3: 1 of 1000 iterations differ bit for "
                                   "bit from the first, first in iteration 5 (1 words differ)");
  EXPECT_NE(j.summary.find("1 iteration DIFFERS from the first"), std::string::npos);
}

TEST(BurnJudge, AnyXidFailsWithItsMeaning) {
  protocol::BurnReport b = healthy_burn();
  b.xids = {{12000, 79}, {12100, 48}};
  const Judgement j = judge_burn(h200(), b);
  ASSERT_EQ(codes(j.findings), std::vector<std::string>{"gpu.burn_xid"});
  const Finding& f = j.findings[0];
  EXPECT_EQ(f.severity, Severity::fail);
  const XidInfo* fell_off = find_xid(79);
  ASSERT_NE(fell_off, nullptr);
  EXPECT_NE(f.message.find("GPU 0: 2 Xid events during the burn: Xid 79 at 12.0 s (" +
                           std::string(fell_off->meaning) + ")"),
            std::string::npos)
      << f.message;
  EXPECT_NE(f.message.find("Xid 48 at 12.1 s"), std::string::npos);
  EXPECT_NE(f.remedy.find(k_xid_catalogue_url), std::string::npos);
}

TEST(BurnJudge, AnApplicationXidOnASharedGpuIsOnlyAWarning) {
  protocol::BurnReport b = healthy_burn();
  b.xids = {{500, 13}};
  ASSERT_NE(find_xid(13), nullptr);
  ASSERT_EQ(find_xid(13)->weight, XidClass::application);
  GpuTarget shared = h200();
  shared.other_processes = {"4242 (python3)"};
  const Judgement j = judge_burn(shared, b);
  ASSERT_EQ(codes(j.findings), std::vector<std::string>{"gpu.burn_xid"});
  EXPECT_EQ(j.findings[0].severity, Severity::warn);
  // Its twin: the same Xid on a GPU the burn had alone fails.
  EXPECT_EQ(judge_burn(h200(), b).findings[0].severity, Severity::fail);
}

TEST(BurnJudge, NoXidWatchIsSaidNotAFinding) {
  protocol::BurnReport b = healthy_burn();
  b.xid_watch = "unavailable: this NVML has no event API";
  const Judgement j = judge_burn(h200(), b);
  EXPECT_TRUE(j.findings.empty());
  EXPECT_NE(j.summary.find("Xids not watched (this NVML has no event API)"), std::string::npos);
}

TEST(BurnJudge, AnInterruptedBurnIsNeverAPass) {
  protocol::BurnReport b = healthy_burn();
  b.interrupted = true;
  b.elapsed_s = 20.4;
  b.types.resize(2);
  const Judgement j = judge_burn(h200(), b);
  ASSERT_EQ(codes(j.findings), std::vector<std::string>{"gpu.long_interrupted"});
  EXPECT_EQ(j.findings[0].message, "GPU 0: the burn was stopped by the user (SIGINT) after 20.4 "
                                   "of 60 s: bf16, fp16 burned; the rest was not run");
  b.types.clear(); // stopped before any type: still a warning, not a pass
  EXPECT_EQ(codes(judge_burn(h200(), b).findings),
            std::vector<std::string>{"gpu.long_interrupted"});
}

TEST(BurnJudge, MissingCublasIsASkip) {
  nlohmann::json payload = nlohmann::json::object();
  protocol::ChildEnvelope envelope;
  envelope.failure = protocol::PayloadFailure{
      "load cuBLAS", "", 0, "", "", "cuBLAS (libcublas.so.13 or .12) could not be loaded: none"};
  protocol::write_envelope(envelope, payload);
  const Judgement j = judge_gpu_burn(h200(), payload);
  EXPECT_TRUE(j.skipped);
  EXPECT_NE(j.summary.find("no usable cuBLAS"), std::string::npos);
  // Its twin: a failure in the burn itself is no skip.
  envelope.failure->stage = "burn bf16";
  envelope.failure->call = "cuMemAlloc";
  payload = nlohmann::json::object();
  protocol::write_envelope(envelope, payload);
  EXPECT_FALSE(judge_gpu_burn(h200(), payload).skipped);
}

TEST(BurnJudge, ThePayloadIsReadThroughTheTypedReader) {
  nlohmann::json payload = nlohmann::json::object();
  protocol::write_envelope(protocol::ChildEnvelope{}, payload);
  protocol::write_burn(healthy_burn(), payload);
  EXPECT_TRUE(judge_gpu_burn(h200(), payload).findings.empty());
  payload["burn"]["watch"].erase("reasons");
  const Judgement broken = judge_gpu_burn(h200(), payload);
  ASSERT_EQ(codes(broken.findings), std::vector<std::string>{"gpu.child_failed"});
  EXPECT_NE(broken.findings[0].message.find("burn.watch.reasons is missing"), std::string::npos);
}

// ---- gpu.burn: across GPUs and against the reference ---------------------------------------

BurnPeer peer(int index, std::vector<protocol::BurnType> types, std::string model = "NVIDIA H200") {
  BurnPeer p;
  p.gpu_index = index;
  p.model = std::move(model);
  p.sm_count = 132;
  p.cublas = "13.0.2";
  p.types = std::move(types);
  return p;
}

TEST(GemmReferences, EveryRowHasASourceAndAFigure) {
  ASSERT_FALSE(gemm_references().empty());
  for (const GemmReference& row : gemm_references()) {
    EXPECT_FALSE(row.model.empty());
    EXPECT_FALSE(row.source.empty()) << row.model << " " << row.type;
    EXPECT_GT(row.tflops, 0.0);
    EXPECT_GT(row.n, 0);
  }
  const GemmReference* bf16 = find_gemm_reference("NVIDIA H200", "bf16", 8192);
  ASSERT_NE(bf16, nullptr);
  EXPECT_EQ(bf16->tflops, 812.0);
  EXPECT_EQ(find_gemm_reference("NVIDIA H200", "bf16", 4096), nullptr); // another size
  EXPECT_EQ(find_gemm_reference("NVIDIA H200 NVL", "bf16", 8192), nullptr);
}

TEST(BurnPeers, OneGpuAtItsReferencePassesAndSaysSo) {
  const auto v = judge_burn_peers({peer(0, {burn_type("bf16", 800.0), burn_type("fp32", 50.0)})});
  ASSERT_EQ(v.size(), 1U);
  EXPECT_TRUE(v[0].findings.empty());
  EXPECT_EQ(v[0].note, "TFLOP/s against NVIDIA H200's measured reference: bf16 99%, fp32 98%");
}

TEST(BurnPeers, BelowTheReferenceIsSlow) {
  const auto v = judge_burn_peers({peer(0, {burn_type("bf16", 600.0)})});
  ASSERT_EQ(codes(v[0].findings), std::vector<std::string>{"gpu.burn_slow"});
  EXPECT_EQ(v[0].findings[0].severity, Severity::warn);
  EXPECT_NE(v[0].findings[0].message.find("GPU 0 (NVIDIA H200): bf16 GEMM 8192^3 median 600.0 "
                                          "TFLOP/s is 74% of the 812 TFLOP/s this model reaches"),
            std::string::npos)
      << v[0].findings[0].message;
  // A GPU shared with other processes is not judged slow: a note, labelled.
  BurnPeer shared = peer(0, {burn_type("bf16", 600.0)});
  shared.contended = true;
  const auto labelled = judge_burn_peers({shared});
  ASSERT_EQ(codes(labelled[0].findings), std::vector<std::string>{"gpu.burn_slow"});
  EXPECT_EQ(labelled[0].findings[0].severity, Severity::info);
  EXPECT_NE(labelled[0].findings[0].message.find("(measured under contention)"), std::string::npos);
}

TEST(BurnPeers, NoRowAndNoSiblingIsNoJudgement) {
  const auto v = judge_burn_peers({peer(0, {burn_type("bf16", 10.0)}, "NVIDIA A2")});
  EXPECT_TRUE(v[0].findings.empty());
  EXPECT_EQ(v[0].note, "no TFLOP/s reference for this model");
}

TEST(BurnPeers, OneGpuBelowItsSiblingsIsAnOutlier) {
  // A model without a row: the siblings are the only reference.
  std::vector<BurnPeer> peers;
  for (int i = 0; i < 4; ++i) {
    peers.push_back(peer(i, {burn_type("fp16", i == 2 ? 300.0 : 400.0)}, "NVIDIA L40S"));
  }
  const auto v = judge_burn_peers(peers);
  for (int i = 0; i < 4; ++i) {
    SCOPED_TRACE(i);
    if (i == 2) {
      ASSERT_EQ(codes(v[i].findings), std::vector<std::string>{"gpu.burn_outlier"});
      EXPECT_EQ(v[i].findings[0].message,
                "GPU 2 (NVIDIA L40S): fp16 GEMM 8192^3 median 300.0 TFLOP/s is 75% of the median "
                "of the 3 other GPUs of this model (400.0 TFLOP/s); the floor is 80%");
    } else {
      EXPECT_TRUE(v[i].findings.empty());
    }
    EXPECT_EQ(v[i].note, "TFLOP/s compared with 3 other GPUs of this model");
  }
  // Its twin: at 85% of the others it is no outlier.
  peers[2].types[0].tflops_median = 340.0;
  EXPECT_TRUE(judge_burn_peers(peers)[2].findings.empty());
}

TEST(BurnPeers, ContendedSiblingsAreNoYardstick) {
  // GPU 1 shares its GPU and runs slow: it neither is judged slow nor makes GPU 0 look fast.
  BurnPeer slow = peer(1, {burn_type("fp16", 200.0)}, "NVIDIA L40S");
  slow.contended = true;
  const auto v = judge_burn_peers({peer(0, {burn_type("fp16", 400.0)}, "NVIDIA L40S"), slow});
  EXPECT_TRUE(v[0].findings.empty());
  EXPECT_EQ(v[0].note, "no TFLOP/s reference for this model");
  ASSERT_EQ(codes(v[1].findings), std::vector<std::string>{"gpu.burn_outlier"});
  EXPECT_EQ(v[1].findings[0].severity, Severity::info);
}

TEST(BurnPeers, TheMinorityHashFails) {
  std::vector<BurnPeer> peers;
  for (int i = 0; i < 4; ++i) {
    peers.push_back(peer(i, {burn_type("bf16", 800.0, i == 3 ? "bad0" : "good")}));
  }
  const auto v = judge_burn_peers(peers);
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(v[i].findings.empty()) << i;
  }
  ASSERT_EQ(codes(v[3].findings), std::vector<std::string>{"gpu.burn_gpus_disagree"});
  EXPECT_EQ(v[3].findings[0].severity, Severity::fail);
  EXPECT_EQ(v[3].findings[0].message,
            "GPU 3 (NVIDIA H200): the bf16 GEMM 8192^3 of the same inputs gave result hash bad0; "
            "GPUs 0, 1, 2 of this model gave good: this GPU is in the minority");
}

TEST(BurnPeers, TwoGpusThatDisagreeAreBothNamed) {
  const auto v = judge_burn_peers(
      {peer(0, {burn_type("fp64", 60.0, "aaaa")}), peer(1, {burn_type("fp64", 60.0, "bbbb")})});
  ASSERT_EQ(codes(v[0].findings), std::vector<std::string>{"gpu.burn_gpus_disagree"});
  ASSERT_EQ(codes(v[1].findings), std::vector<std::string>{"gpu.burn_gpus_disagree"});
  EXPECT_NE(v[0].findings[0].message.find("GPU 1 gave bbbb: with no majority gpucheck cannot "
                                          "tell which GPU is wrong"),
            std::string::npos)
      << v[0].findings[0].message;
  EXPECT_NE(v[1].findings[0].message.find("GPU 0 gave aaaa"), std::string::npos);
}

TEST(BurnPeers, HashesAreComparedOnlyWithinOneModelSizeAndCublas) {
  BurnPeer other_cublas = peer(1, {burn_type("bf16", 800.0, "bbbb")});
  other_cublas.cublas = "12.9.1";
  BurnPeer other_sms = peer(2, {burn_type("bf16", 800.0, "cccc")});
  other_sms.sm_count = 114;
  BurnPeer other_size = peer(3, {burn_type("bf16", 800.0, "dddd")});
  other_size.types[0].n = 4096; // less free memory: a smaller GEMM, another result
  const auto v = judge_burn_peers(
      {peer(0, {burn_type("bf16", 800.0, "aaaa")}), other_cublas, other_sms, other_size});
  for (const PeerVerdict& verdict : v) {
    EXPECT_TRUE(verdict.findings.empty()) << verdict.findings[0].message;
  }
}

nlohmann::json burn_payload(const protocol::BurnReport& burn, const std::string& model) {
  nlohmann::json payload = nlohmann::json::object();
  protocol::write_envelope(protocol::ChildEnvelope{}, payload);
  protocol::DeviceDescription device;
  device.name = model;
  device.cc_major = 9;
  device.sm_count = 132;
  payload["device"] = protocol::to_json(device);
  protocol::write_burn(burn, payload);
  return payload;
}

TEST(BurnPeers, PayloadsToResultsAcrossTheRun) {
  // Two H200s whose BF16 results differ, the second also slow: both results fail, the second
  // also warns; each summary ends with the reference used.
  protocol::BurnReport first = healthy_burn();
  protocol::BurnReport second = healthy_burn();
  second.types[0].result_hash = "bbbb";
  second.types[0].tflops_median = 500.0;
  std::vector<BurnPeer> peers;
  for (const auto& [index, burn] : {std::pair{0, first}, std::pair{1, second}}) {
    const std::optional<BurnPeer> peer = burn_peer(index, burn_payload(burn, "NVIDIA H200"), false);
    ASSERT_TRUE(peer);
    EXPECT_EQ(peer->model, "NVIDIA H200");
    EXPECT_EQ(peer->sm_count, 132);
    EXPECT_EQ(peer->cublas, "13.0.2");
    EXPECT_EQ(peer->types, burn.types);
    peers.push_back(*peer);
  }
  constexpr CheckInfo k_burn_info{"gpu.burn", "burn", "", CheckKind::active, Level::long_};
  std::vector<CheckResult> results = {make_result(k_burn_info, "GPU 0", {}, 0),
                                      skip_result(k_burn_info, "GPU 5: busy", 5),
                                      make_result(k_burn_info, "GPU 1", {}, 1)};
  for (const char* type : {"bf16", "fp16", "fp32", "fp64"}) {
    results[0].metrics.push_back({fmt::format("burn_{}_tflops", type), 800.0, "TFLOP/s", "x"});
  }
  add_peer_verdicts(results, {0, 2}, peers);
  // Each type's floor from the typed report: bf16 and fp32 have an H200 reference at 8192^3.
  ASSERT_TRUE(results[0].metrics[0].expected_min);
  EXPECT_DOUBLE_EQ(*results[0].metrics[0].expected_min, k_burn_slow_fraction * 812.0);
  EXPECT_TRUE(results[0].metrics[0].expected.starts_with("0.8 of 812 TFLOP/s measured on this "
                                                         "model: PyTorch 2.11"))
      << results[0].metrics[0].expected;
  EXPECT_FALSE(results[0].metrics[1].expected_min); // no H200 FP16 reference
  ASSERT_TRUE(results[0].metrics[2].expected_min);
  EXPECT_DOUBLE_EQ(*results[0].metrics[2].expected_min, k_burn_slow_fraction * 51.0);
  EXPECT_FALSE(results[0].metrics[3].expected_min);
  EXPECT_EQ(results[0].status, Status::fail);
  EXPECT_EQ(codes(results[0].findings), std::vector<std::string>{"gpu.burn_gpus_disagree"});
  EXPECT_EQ(results[0].summary,
            "GPU 0; TFLOP/s against NVIDIA H200's measured reference: bf16 99%, fp32 98%; "
            "TFLOP/s compared with 1 other GPU of this model");
  EXPECT_EQ(results[1].status, Status::skip); // not a peer: untouched
  EXPECT_EQ(results[1].summary, "GPU 5: busy");
  EXPECT_EQ(results[2].status, Status::fail);
  EXPECT_EQ(
      codes(results[2].findings),
      (std::vector<std::string>{"gpu.burn_gpus_disagree", "gpu.burn_slow", "gpu.burn_outlier"}));
  // A payload without its burn (the child failed first) is no peer.
  nlohmann::json failed = burn_payload(first, "NVIDIA H200");
  failed.erase("burn");
  EXPECT_FALSE(burn_peer(0, failed, false));
}

TEST(Burn, RunsAndIsListedWhereItWasBeforeItHadAFolder) {
  const std::optional<engine::Work> work = engine::work_named("burn");
  ASSERT_TRUE(work);
  EXPECT_EQ(engine::check_id(*work), "gpu.burn");
  EXPECT_EQ(engine::child_mode(*work), "gpu-burn");
  EXPECT_TRUE(engine::is_long(*work));
  EXPECT_TRUE(engine::work_row(*work).together);
  EXPECT_EQ(engine::work_row(*work).phase, "burn");
  const gpu::WorkRunner* runner = gpu::runner_of_mode("gpu-burn");
  ASSERT_NE(runner, nullptr);
  EXPECT_EQ(runner->work, *work);
  EXPECT_TRUE(runner->needs_kernels);
  EXPECT_TRUE(runner->alone);
  // The last check of the report, after the memory test, as before it had a folder.
  const std::span<const CheckDef> checks = all_checks();
  ASSERT_FALSE(checks.empty());
  EXPECT_EQ(checks.back().info.id, "gpu.burn");
  EXPECT_EQ(checks[checks.size() - 2].info.id, "gpu.memtest");
  EXPECT_EQ(checks.back().info.level, Level::long_);
  for (const FindingSpec& spec : findings()) {
    EXPECT_NE(find_finding_spec(spec.code), nullptr) << spec.code;
  }
  for (const char* name : {"burn_bf16_tflops", "burn_max_temp_c", "burn_max_power_w"}) {
    EXPECT_TRUE(gates::is_known_metric(name)) << name;
  }
}

TEST(Burn, ItsMismatchedIterationsAreItsJudgesNotACommonFinding) {
  nlohmann::json payload = {{"work", "burn"}, {"metrics", nlohmann::json::array()}};
  protocol::PayloadVerification v{std::string(k_verify_kind), "bf16 GEMM", 100, 3, 0, "", ""};
  payload["verify"].push_back(protocol::to_json(v));
  EXPECT_TRUE(checks::common_findings("test", h200(), payload).empty());
}

} // namespace
} // namespace gpucheck::gpu_checks::burn
