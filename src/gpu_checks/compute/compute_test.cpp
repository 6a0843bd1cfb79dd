// gpu.compute: its judge on typed payloads and reports (the kernel image's notes among them),
// its judge as the runner calls it on a child's JSON, and its one registration line: the first
// work of each shared child and the first active check of a report, as before it had a folder.
#include <gtest/gtest.h>

#include <algorithm>

#include "engine/plan.hpp"
#include "findings/catalog.hpp"
#include "gates/metric_names.hpp"
#include "gpu/gpu_children.hpp"
#include "gpu_checks/compute/compute.hpp"
#include "gpu_checks/registry.hpp"
#include "gpucheck/registry.hpp"
#include "support/registered_judge.hpp"

namespace gpucheck::gpu_checks::compute {
namespace {

checks::GpuTarget target() {
  checks::GpuTarget gpu;
  gpu.gpu_index = 1;
  gpu.name = "Test GPU";
  return gpu;
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

ChildReport report(std::optional<protocol::KernelModuleReport> kernels) {
  ChildReport child;
  child.envelope.metrics = {{"kernel_load_ms", 4.0, "ms", "sass"},
                            {"fp32_fma_gflops", 51234.4, "GFLOP/s", "median of 5"}};
  child.envelope.verify = {{"compute", "fma", 1000, 0, 0, "", ""},
                           {"compute", "sum", 1, 0, 0, "", ""}};
  protocol::DeviceDescription d;
  d.name = "NVIDIA H200";
  d.cc_major = 9;
  d.cc_minor = 0;
  d.sm_count = 132;
  child.device = d;
  child.module = std::move(kernels);
  return child;
}

constexpr Payload k_measured{51234.4, 1U << 21, 4096};

std::vector<std::string> codes(const checks::Judgement& judgement) {
  std::vector<std::string> out;
  for (const Finding& f : judgement.findings) {
    out.push_back(f.code);
  }
  return out;
}

/// A child's JSON as the shared child writes it: its report's parts, then the payload.
nlohmann::json child_json(const ChildReport& child, const Payload& payload) {
  nlohmann::json out = nlohmann::json::object();
  protocol::write_envelope(child.envelope, out);
  if (child.device) {
    out["device"] = protocol::to_json(*child.device);
  }
  if (child.module) {
    out["module"] = protocol::to_json(*child.module);
  }
  out.update(nlohmann::json(payload));
  return out;
}

/// gpu.compute's judge as the runner calls it, through its registration.
checks::Judgement judge_json(const nlohmann::json& json) {
  return test::registered_judge("gpu.compute", target(), json);
}

TEST(Compute, SummarisesWhatWasCheckedAndTheRate) {
  const checks::Judgement j = judge(target(), k_measured, report(module("sass")));
  EXPECT_TRUE(j.findings.empty());
  EXPECT_EQ(j.summary, "GPU 1 (NVIDIA H200): 1001 results checked against the CPU; 51234 "
                       "GFLOP/s FP32 FMA");
}

TEST(Compute, PtxJitIsANoteNamingTheImage) {
  const checks::Judgement j = judge(target(), k_measured, report(module("ptx-jit")));
  ASSERT_EQ(codes(j), std::vector<std::string>{"gpu.kernel_jit_used"});
  EXPECT_EQ(j.findings[0].message, "GPU 1 (Test GPU, sm_9.0) has no SASS in this build "
                                   "(compute_75); its kernels were JIT-compiled from PTX");
}

protocol::KernelModuleReport older_image() {
  protocol::KernelModuleReport older = module("sass");
  older.image_name = "cuda12.9";
  older.toolkit = "12.9";
  older.fallback = true;
  older.reason = "cuda12.9 has SASS sm_90 for this sm_90 GPU and driver 12020 (CUDA 12.2) loads "
                 "CUDA 12 code";
  return older;
}

TEST(Compute, AnOlderImageIsANoteNamingItAndWhy) {
  protocol::KernelModuleReport older = older_image();
  const checks::Judgement j = judge(target(), k_measured, report(older));
  ASSERT_EQ(codes(j), std::vector<std::string>{"gpu.kernel_image_fallback"});
  EXPECT_EQ(j.findings[0].message,
            "GPU 1 (Test GPU): gpucheck's kernels came from its CUDA 12.9 image (sass): " +
                older.reason);
  // Its twin: the newest image, no note.
  older.fallback = false;
  EXPECT_TRUE(judge(target(), k_measured, report(older)).findings.empty());
}

TEST(Compute, ForcedPtxJitIsNoSignOfAnOldBuild) {
  protocol::KernelModuleReport forced = module("ptx-jit");
  forced.reason = "cuda13.0 has PTX compute_75 (ISA 9.0) that driver 13000 (CUDA 13.0) can JIT for "
                  "this sm_90 GPU (CUDA_FORCE_PTX_JIT=1: the driver ignores SASS)";
  EXPECT_TRUE(judge(target(), k_measured, report(forced)).findings.empty());
}

TEST(Compute, AnOlderImageIsNotedWhenTheWorkFailedToo) {
  ChildReport child = report(older_image());
  child.envelope.failure =
      protocol::PayloadFailure{"fma throughput", "cuLaunchKernel", 700, "X", "x", "m"};
  const checks::Judgement j = judge_json(child_json(child, Payload{}));
  EXPECT_EQ(codes(j), std::vector<std::string>{"gpu.kernel_image_fallback"});
  EXPECT_EQ(j.summary, "GPU 1: failed during fma throughput");
  // Its twin: the newest image that failed the same way adds nothing.
  child.module = module("sass");
  EXPECT_TRUE(judge_json(child_json(child, Payload{})).findings.empty());
}

TEST(Compute, AModuleThatDidNotLoadIsTheLoadFinding) {
  protocol::KernelModuleReport failed = module("ptx-jit");
  failed.loaded = false;
  failed.code = 222;
  failed.name = "CUDA_ERROR_UNSUPPORTED_PTX_VERSION";
  ChildReport child = report(failed);
  child.envelope = {};
  const checks::Judgement j = judge_json(child_json(child, Payload{}));
  EXPECT_EQ(codes(j), std::vector<std::string>{"gpu.kernel_load_failed"});
  EXPECT_EQ(j.summary, "GPU 1: gpucheck's kernels did not load");
}

TEST(Compute, ThroughItsRegistrationTheJsonIsJudgedAsTheTypes) {
  const nlohmann::json json = child_json(report(module("ptx-jit")), k_measured);
  const checks::Judgement j = judge_json(json);
  EXPECT_EQ(codes(j), std::vector<std::string>{"gpu.kernel_jit_used"});
  EXPECT_EQ(j.summary, judge(target(), k_measured, report(module("ptx-jit"))).summary);
}

TEST(Compute, ARenamedKeyIsAChildFailureNamingIt) {
  const nlohmann::json good = child_json(report(module("sass")), k_measured);
  for (const char* key : {"/device/name", "/device/cc", "/module/route", "/module/loaded",
                          "/module/image", "/fma_gflops", "/fma_chains", "/fma_steps"}) {
    SCOPED_TRACE(key);
    const nlohmann::json::json_pointer at(key);
    nlohmann::json renamed = good;
    nlohmann::json& parent = renamed[at.parent_pointer()];
    parent[at.back() + "_renamed"] = parent[at.back()];
    parent.erase(at.back());
    const checks::Judgement j = judge_json(renamed);
    ASSERT_EQ(codes(j), std::vector<std::string>{"gpu.child_failed"});
    EXPECT_NE(j.findings[0].message.find(at.back() + " is missing"), std::string::npos)
        << j.findings[0].message;
  }
}

TEST(Compute, AWrongResultIsItsOwnFinding) {
  nlohmann::json payload = {{"work", "compute"}, {"metrics", nlohmann::json::array()}};
  protocol::PayloadVerification v{
      std::string(k_verify_kind), "sum of 4194304 random 32-bit words", 1, 1, 0, "7", "8"};
  payload["verify"].push_back(protocol::to_json(v));
  const std::vector<Finding> found = checks::common_findings("test", target(), payload);
  ASSERT_EQ(found.size(), 1U);
  EXPECT_EQ(found[0].code, k_mismatch.text()) << found[0].message;
  EXPECT_EQ(found[0].severity, Severity::fail);
  // Its healthy twin.
  v.mismatches = 0;
  payload["verify"] = nlohmann::json::array({protocol::to_json(v)});
  EXPECT_TRUE(checks::common_findings("test", target(), payload).empty());
}

TEST(Compute, RunsAndIsListedWhereItWasBeforeItHadAFolder) {
  const std::optional<engine::Work> work = engine::work_named("compute");
  ASSERT_TRUE(work);
  EXPECT_EQ(engine::check_id(*work), "gpu.compute");
  EXPECT_EQ(engine::child_mode(*work), "gpu-compute");
  const gpu::WorkRunner* runner = gpu::runner_of_mode("gpu-compute");
  ASSERT_NE(runner, nullptr);
  EXPECT_EQ(runner->work, *work);
  EXPECT_TRUE(runner->needs_kernels);
  // The first work of each GPU's shared child, the first active check of a report.
  EXPECT_EQ(engine::child_groups(engine::all_works()).front().front(), *work);
  const std::span<const CheckDef> checks = all_checks();
  const auto first_active = std::find_if(checks.begin(), checks.end(), [](const CheckDef& c) {
    return c.info.kind == CheckKind::active;
  });
  ASSERT_NE(first_active, checks.end());
  EXPECT_EQ(first_active->info.id, "gpu.compute");
  EXPECT_EQ((first_active - 1)->info.id, "gpu.display");
  EXPECT_EQ((first_active + 1)->info.id, "gpu.bandwidth");
  for (const FindingSpec& spec : findings()) {
    EXPECT_NE(find_finding_spec(spec.code), nullptr) << spec.code;
  }
  EXPECT_TRUE(gates::is_known_metric("fp32_fma_gflops"));
  EXPECT_TRUE(gates::is_known_metric("kernel_load_ms"));
}

TEST(Compute, ItsFmaRateHasTheFloorItDeclares) {
  const std::optional<checks::Expectation> floor =
      checks::expected_floor("NVIDIA H200", "fp32_fma_gflops", 132);
  ASSERT_TRUE(floor);
  EXPECT_DOUBLE_EQ(floor->min, 0.35 * 67.0 * 1000.0);
  EXPECT_TRUE(floor->words.starts_with("0.35 of the datasheet's FP32 67 TFLOPS: ")) << floor->words;
  EXPECT_FALSE(checks::expected_floor("NVIDIA H200", "kernel_load_ms", 132));
  const std::vector<std::string_view>& siblings = checks::sibling_metrics();
  EXPECT_NE(std::find(siblings.begin(), siblings.end(), "fp32_fma_gflops"), siblings.end());
  EXPECT_EQ(std::find(siblings.begin(), siblings.end(), "kernel_load_ms"), siblings.end());
}

TEST(Compute, ThePayloadIsReadAsItWasWritten) {
  Output<Payload> out;
  out.payload = k_measured;
  nlohmann::json json = {{"work", "compute"}};
  write_output(out, json);
  const Expected<Payload> back = read_payload<Payload>(json);
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back.value(), k_measured);
}

} // namespace
} // namespace gpucheck::gpu_checks::compute
