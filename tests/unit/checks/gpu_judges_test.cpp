// The judges of gpu.streams, gpu.bandwidth and gpu.cudnn on payloads built from the
// typed structs the children write (protocol/payloads.hpp), never from hand-written keys: a key
// renamed in the payload code changes what both sides use, and a key renamed by hand in a payload
// fails here.
#include "checks/active/judging.hpp"
#include "gpu_checks/registry.hpp"
#include "gpu_checks/streams/streams.hpp"
#include "protocol/payloads.hpp"
#include "support/registered_judge.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <functional>
#include <stdexcept>

namespace gpucheck::checks {
namespace {

using test::registered_judge;
Judgement judge_gpu_streams(const GpuTarget& gpu, const nlohmann::json& json) {
  return registered_judge("gpu.streams", gpu, json);
}
Judgement judge_gpu_compute(const GpuTarget& gpu, const nlohmann::json& json) {
  return registered_judge("gpu.compute", gpu, json);
}
Judgement judge_gpu_burn(const GpuTarget& gpu, const nlohmann::json& json) {
  return registered_judge("gpu.burn", gpu, json);
}
Judgement judge_gpu_memtest(const GpuTarget& gpu, const nlohmann::json& json) {
  return registered_judge("gpu.memtest", gpu, json);
}
Judgement judge_gpu_cudnn(const GpuTarget& gpu, const nlohmann::json& json) {
  return registered_judge("gpu.cudnn", gpu, json);
}
Judgement judge_gpu_bandwidth(const GpuTarget& gpu, const nlohmann::json& json) {
  return registered_judge("gpu.bandwidth", gpu, json);
}

GpuTarget target() {
  GpuTarget gpu;
  gpu.gpu_index = 1;
  gpu.name = "Test GPU";
  return gpu;
}

protocol::DeviceDescription device() {
  protocol::DeviceDescription d;
  d.name = "NVIDIA H200";
  d.cc_major = 9;
  d.cc_minor = 0;
  d.sm_count = 132;
  return d;
}

protocol::KernelModuleReport module(std::string route) {
  protocol::KernelModuleReport m;
  m.loaded = true;
  m.toolkit = "13.0";
  m.image = {"compute_75"};
  m.route = std::move(route);
  m.call = "cuModuleLoadDataEx";
  m.name = "CUDA_SUCCESS";
  m.load_ms = 4.0;
  return m;
}

/// A child's payload as the child writes it: envelope, device and module through the structs.
nlohmann::json payload(const protocol::ChildEnvelope& envelope,
                       const std::optional<protocol::KernelModuleReport>& kernels) {
  nlohmann::json out = nlohmann::json::object();
  protocol::write_envelope(envelope, out);
  out["device"] = protocol::to_json(device());
  if (kernels) {
    out["module"] = protocol::to_json(*kernels);
  }
  return out;
}

std::vector<std::string> codes(const Judgement& judgement) {
  std::vector<std::string> out;
  for (const Finding& f : judgement.findings) {
    out.push_back(f.code);
  }
  return out;
}

/// The judgement of a payload with the key at `pointer` renamed: gpu.child_failed naming it.
void expect_renamed_key_named(
    const std::function<Judgement(const GpuTarget&, const nlohmann::json&)>& judge,
    nlohmann::json good, const std::string& pointer) {
  SCOPED_TRACE(pointer);
  const nlohmann::json::json_pointer at(pointer);
  nlohmann::json& parent = good[at.parent_pointer()];
  parent[at.back() + "_renamed"] = parent[at.back()];
  parent.erase(at.back());
  const Judgement judgement = judge(target(), good);
  ASSERT_EQ(codes(judgement), std::vector<std::string>{"gpu.child_failed"});
  EXPECT_NE(judgement.findings[0].message.find(at.back() + " is missing"), std::string::npos)
      << judgement.findings[0].message;
  EXPECT_EQ(judgement.summary, "GPU 1: its result cannot be read");
}

TEST(GpuKernelJudges, NoImageThatFitsSkipsWithTheReason) {
  protocol::KernelModuleReport none = module("none");
  none.loaded = false;
  none.call = "choose";
  none.code = -3;
  none.name = "no image fits";
  none.reason = "this sm_37 GPU is older than Maxwell (sm_50)";
  none.load_ms.reset();
  for (const auto& judge : {&judge_gpu_compute, &judge_gpu_streams}) {
    const Judgement judgement = judge(target(), payload({}, none));
    EXPECT_TRUE(judgement.skipped);
    EXPECT_TRUE(judgement.findings.empty());
    EXPECT_EQ(judgement.summary,
              "GPU 1: gpucheck's kernels cannot run here: this sm_37 GPU is older than Maxwell "
              "(sm_50)");
  }
}

nlohmann::json streams_payload(const gpu_checks::streams::Payload& streams) {
  protocol::ChildEnvelope envelope;
  envelope.verify = {{"graph", "graph replays", 1024, 0, 0, "", ""}};
  nlohmann::json out = payload(envelope, module("sass"));
  out.update(nlohmann::json(streams));
  return out;
}

TEST(GpuStreamsJudge, HonouredPrioritiesPass) {
  const Judgement judgement =
      judge_gpu_streams(target(), streams_payload({{0, -5, -5, 0}, 0.0125}));
  EXPECT_TRUE(judgement.findings.empty());
  EXPECT_EQ(judgement.summary,
            "GPU 1: stream priorities 0..-5, event-timed kernel 12.5 us, graph replay verified");
}

TEST(GpuStreamsJudge, IgnoredPrioritiesAreAWarning) {
  const Judgement judgement = judge_gpu_streams(target(), streams_payload({{0, -5, 0, 0}, 0.01}));
  ASSERT_EQ(codes(judgement), std::vector<std::string>{"gpu.stream_priority_ignored"});
  EXPECT_EQ(judgement.findings[0].message,
            "GPU 1: streams created with priorities -5 and 0 report 0 and 0");
}

TEST(GpuStreamsJudge, ARenamedKeyIsAChildFailureNamingIt) {
  const nlohmann::json good = streams_payload({{0, -5, -5, 0}, 0.0125});
  for (const char* key : {"/event_ms", "/priorities", "/priorities/least", "/priorities/greatest",
                          "/priorities/high_stream", "/priorities/low_stream"}) {
    expect_renamed_key_named(&judge_gpu_streams, good, key);
  }
}

nlohmann::json bandwidth_payload(double h2d, double d2h, const protocol::BandwidthPayload& own) {
  protocol::ChildEnvelope envelope;
  envelope.metrics = {{"h2d_gbps", h2d, "GB/s", "pinned"},
                      {"d2h_gbps", d2h, "GB/s", "pinned"},
                      {"d2d_gbps", 1460.0, "GB/s", "device-local"}};
  envelope.verify = {{"copy", "pinned host->device", 16777216, 0, 0, "", ""}};
  nlohmann::json out = payload(envelope, std::nullopt);
  protocol::write_bandwidth(own, out);
  return out;
}

protocol::BandwidthPayload gen5_x16() {
  protocol::BandwidthPayload b;
  b.numa = protocol::NumaPlacement{"0", "0-15", true};
  b.sizes = protocol::CopySizes{64ULL << 20, 256ULL << 20, 32ULL << 20};
  b.link = protocol::PcieLinkReading{"32.0 GT/s PCIe", "16", "32.0 GT/s PCIe", "16"};
  b.bidirectional = protocol::BidirectionalCounts{{9, 9}, {6, 7}, 0};
  b.gate_timeouts = 0;
  b.gated = true;
  return b;
}

// Found by fuzz_child_output: a payload that is no object, or whose failure or metrics have the
// wrong type, threw json's type_error out of gpu.bandwidth's judge into the parent. No judge
// throws; the envelope's own reader (run_per_gpu's common part) reports such a payload, and
// gpu.bandwidth's judge, which reads the metrics itself, says it cannot be read.
TEST(GpuKernelJudges, APayloadOfTheWrongShapeIsUnreadableNotAnException) {
  for (const char* text : {"2147483648", "[]", R"({"failure": 7})", R"({"metrics": {"a": 1}})",
                           R"({"metrics": [7], "verify": "x"})"}) {
    SCOPED_TRACE(text);
    const nlohmann::json payload = nlohmann::json::parse(text);
    for (const auto& judge : {&judge_gpu_compute, &judge_gpu_streams, &judge_gpu_bandwidth,
                              &judge_gpu_cudnn, &judge_gpu_memtest, &judge_gpu_burn}) {
      ASSERT_NO_THROW((void)judge(target(), payload));
    }
    EXPECT_EQ(codes(judge_gpu_bandwidth(target(), payload)),
              std::vector<std::string>{"gpu.child_failed"});
    EXPECT_FALSE(protocol::read_envelope(payload).has_value());
  }
}

TEST(GpuBandwidthJudge, FullRateOnTheLinkPasses) {
  const Judgement judgement =
      judge_gpu_bandwidth(target(), bandwidth_payload(55.1, 55.2, gen5_x16()));
  EXPECT_TRUE(judgement.findings.empty());
  EXPECT_EQ(judgement.summary, "GPU 1: host->device 55.1 GB/s, device->host 55.2 GB/s, "
                               "device-local 1460 GB/s; all copies verified (PCIe Gen5 x16 "
                               "carries 63.0 GB/s)");
}

TEST(GpuBandwidthJudge, TheLinkThePayloadReadJudgesTheRate) {
  // 14 GB/s is low on the Gen5 x16 link the child read, and fine on a Gen3 x16 one.
  const Judgement low = judge_gpu_bandwidth(target(), bandwidth_payload(14.0, 55.0, gen5_x16()));
  ASSERT_EQ(codes(low), std::vector<std::string>{"gpu.bandwidth_low"});
  EXPECT_EQ(low.findings[0].severity, Severity::warn);
  protocol::BandwidthPayload gen3 = gen5_x16();
  gen3.link->current_link_speed = "8.0 GT/s PCIe";
  EXPECT_TRUE(judge_gpu_bandwidth(target(), bandwidth_payload(14.0, 14.0, gen3)).findings.empty());
  // Beside another process: labelled, not a warning.
  GpuTarget shared = target();
  shared.other_processes = {"4242 (python3)"};
  const Judgement contended =
      judge_gpu_bandwidth(shared, bandwidth_payload(14.0, 55.0, gen5_x16()));
  ASSERT_EQ(codes(contended), std::vector<std::string>{"gpu.bandwidth_low"});
  EXPECT_EQ(contended.findings[0].severity, Severity::info);
}

TEST(GpuBandwidthJudge, GateTimeoutsAreAFinding) {
  protocol::BandwidthPayload timed_out = gen5_x16();
  timed_out.gate_timeouts = 2;
  EXPECT_EQ(codes(judge_gpu_bandwidth(target(), bandwidth_payload(55.0, 55.0, timed_out))),
            std::vector<std::string>{"gpu.copy_gate_timeout"});
}

TEST(GpuBandwidthJudge, ARenamedKeyIsAChildFailureNamingIt) {
  const nlohmann::json good = bandwidth_payload(55.1, 55.2, gen5_x16());
  for (const char* key : {"/numa/pinned", "/sizes/host_copy_bytes", "/sizes/d2d_bytes",
                          "/bidirectional/uncovered", "/bidirectional/copies"}) {
    expect_renamed_key_named(&judge_gpu_bandwidth, good, key);
  }
}

protocol::ConvRecord timed_conv(double heuristic_ms, double found_ms) {
  protocol::ConvRecord r;
  r.label = "fp16_nhwc_32x256x56x56";
  r.shape = "32x256x56x56 fp16";
  r.gflop = 100.0;
  r.heuristic = {"IMPLICIT_GEMM", heuristic_ms, 0.1 / heuristic_ms};
  r.found = protocol::ConvAlgoTiming{"WINOGRAD", found_ms, 0.1 / found_ms};
  r.graph = protocol::ConvGraph{false, std::nullopt, std::nullopt, std::nullopt};
  r.best = protocol::ConvBest{"legacy", "legacy API WINOGRAD", found_ms, 0.1 / found_ms * 1000};
  return r;
}

protocol::CudnnPayload cudnn_ok() {
  protocol::CudnnPayload c;
  c.library = protocol::CudnnLibrary{"/lib/libcudnn.so.9", 91002, 13000, true, {}};
  protocol::ConvRecord small;
  small.label = "fp32_nchw_small";
  small.shape = "2x16x20x20";
  small.heuristic.algo = "IMPLICIT_GEMM";
  c.convolutions = {small, timed_conv(0.5, 0.4)};
  c.inputs_on = "gpu";
  c.determinism = protocol::CudnnDeterminism{"fp32", "IMPLICIT_GEMM", {"ab", "ab"}, true};
  return c;
}

nlohmann::json cudnn_payload(const protocol::CudnnPayload& cudnn,
                             const protocol::ChildEnvelope& envelope = {
                                 std::nullopt, {}, {{"cudnn_conv", "conv", 10, 0, 0, "", ""}}}) {
  nlohmann::json out = nlohmann::json::object();
  protocol::write_envelope(envelope, out);
  out["device"] = protocol::to_json(device());
  protocol::write_cudnn(cudnn, out);
  return out;
}

TEST(GpuCudnnJudge, SummarisesVersionVerificationAndRates) {
  const Judgement judgement = judge_gpu_cudnn(target(), cudnn_payload(cudnn_ok()));
  EXPECT_TRUE(judgement.findings.empty());
  EXPECT_FALSE(judgement.skipped);
  EXPECT_EQ(judgement.summary, "GPU 1: cuDNN 9.10.2: convolutions and activations match the CPU; "
                               "fp16_nhwc_32x256x56x56 250 TFLOP/s");
}

TEST(GpuCudnnJudge, SiblingsCompareTheHeuristicsFigure) {
  // The best is whichever algorithm cudnnFind ranked first on this GPU; the heuristic's
  // algorithm is the one every GPU of the model times alike.
  const Judgement judgement = judge_gpu_cudnn(target(), cudnn_payload(cudnn_ok()));
  ASSERT_EQ(judgement.sibling_bases.size(), 1U);
  EXPECT_EQ(judgement.sibling_bases[0].first, "conv_fp16_nhwc_32x256x56x56_tflops");
  EXPECT_DOUBLE_EQ(judgement.sibling_bases[0].second.value, 0.1 / 0.5);
  EXPECT_EQ(judgement.sibling_bases[0].second.method, "cuDNN's heuristic algorithm IMPLICIT_GEMM");
}

TEST(GpuCudnnJudge, GraphBestIsLabelled) {
  protocol::CudnnPayload c = cudnn_ok();
  c.convolutions[1].best = protocol::ConvBest{"graph", "graph API engine 3", 0.3, 333.0};
  EXPECT_NE(judge_gpu_cudnn(target(), cudnn_payload(c)).summary.find("333 TFLOP/s (graph API)"),
            std::string::npos);
}

TEST(GpuCudnnJudge, SlowHeuristicAndNondeterminismAreFindings) {
  protocol::CudnnPayload c = cudnn_ok();
  c.convolutions[1] = timed_conv(1.0, 0.4);
  c.determinism->equal = false;
  c.determinism->hashes = {"ab", "cd"};
  const Judgement judgement = judge_gpu_cudnn(target(), cudnn_payload(c));
  ASSERT_EQ(codes(judgement),
            (std::vector<std::string>{"cudnn.heuristic_slow", "cudnn.nondeterministic"}));
  EXPECT_NE(judgement.findings[0].message.find("IMPLICIT_GEMM (1.000 ms)"), std::string::npos)
      << judgement.findings[0].message;
  EXPECT_NE(judgement.findings[1].message.find("hashes ab and cd"), std::string::npos)
      << judgement.findings[1].message;
}

TEST(GpuCudnnJudge, MissingCudnnIsASkipAndAFailedCallAFinding) {
  protocol::CudnnPayload missing;
  missing.missing = "libcudnn.so.9: not found";
  const Judgement skipped = judge_gpu_cudnn(target(), cudnn_payload(missing));
  EXPECT_TRUE(skipped.skipped);
  EXPECT_EQ(skipped.summary,
            "GPU 1: cuDNN not loadable (libcudnn.so.9: not found); see the libraries checks");
  protocol::CudnnPayload failed = cudnn_ok();
  failed.failure = protocol::CudnnFailure{"cudnnConvolutionForward", 8, "EXECUTION_FAILED", "bad",
                                          "cudnn timing x"};
  const Judgement judgement = judge_gpu_cudnn(target(), cudnn_payload(failed));
  ASSERT_EQ(codes(judgement), std::vector<std::string>{"cudnn.call_failed"});
  EXPECT_EQ(judgement.findings[0].message,
            "cudnnConvolutionForward failed on GPU 1 during cudnn timing x: status 8 "
            "(EXECUTION_FAILED): bad");
  EXPECT_EQ(judgement.summary, "GPU 1: cuDNN 9.10.2 failed");
}

TEST(GpuCudnnJudge, ARenamedKeyIsAChildFailureNamingIt) {
  const nlohmann::json good = cudnn_payload(cudnn_ok());
  for (const char* key : {"/convolutions", "/cudnn/version", "/convolutions/1/found/algo",
                          "/convolutions/1/heuristic", "/convolutions/1/best/tflops",
                          "/convolutions/0/label", "/determinism/equal", "/determinism/hashes"}) {
    expect_renamed_key_named(&judge_gpu_cudnn, good, key);
  }
}

} // namespace
} // namespace gpucheck::checks
