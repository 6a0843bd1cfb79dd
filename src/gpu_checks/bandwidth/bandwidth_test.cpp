// gpu.bandwidth: its one registration line reaching the engine (three works, each with its copy
// rule), the children (its runners, what one keeps for the next), the runner's order of checks,
// the catalogue and the gates; and its judge on a child whose kernels did not load. Its judge on
// typed payloads is tested in tests/unit/checks/gpu_judges_test.cpp with the other judges.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>

#include "engine/plan.hpp"
#include "findings/catalog.hpp"
#include "gates/metric_names.hpp"
#include "gpu/gpu_children.hpp"
#include "gpu_checks/bandwidth/bandwidth.hpp"
#include "gpu_checks/registry.hpp"
#include "gpucheck/registry.hpp"
#include "support/registered_judge.hpp"

namespace gpucheck::gpu_checks::bandwidth {
namespace {

const gpu::WorkRunner* runner_of(engine::Work work) {
  for (const gpu::WorkRunner& r : gpu::work_runners()) {
    if (r.work == work) {
      return &r;
    }
  }
  return nullptr;
}

TEST(Bandwidth, OneRegistrationLineReachesEveryTable) {
  install(); // the test main did; a second call changes nothing
  const std::optional<engine::Work> host = engine::work_named(k_work);
  const std::optional<engine::Work> together = engine::work_named(k_together_work);
  const std::optional<engine::Work> local = engine::work_named(k_local_work);
  ASSERT_TRUE(host && together && local);
  EXPECT_EQ(engine::work_for_check("gpu.bandwidth"), host);
  EXPECT_EQ(engine::copies_of(*host), protocol::Copies::host_alone);
  EXPECT_EQ(engine::copies_of(*together), protocol::Copies::host_together);
  EXPECT_EQ(engine::copies_of(*local), protocol::Copies::device_local);
  // The host copies on every GPU at once only on several GPUs (the engine adds them then).
  const std::vector<engine::Work> standard = engine::all_works();
  EXPECT_EQ(std::count(standard.begin(), standard.end(), *together), 0);
  EXPECT_EQ(std::count(standard.begin(), standard.end(), *local), 1);

  // Its own mode runs the host copies and the device-local copy; the parts run in gpu-device.
  const gpu::WorkRunner* own = gpu::runner_of_mode("gpu-bandwidth");
  ASSERT_NE(own, nullptr);
  EXPECT_EQ(own->work, *host);
  EXPECT_NE(own->own_child, nullptr);
  EXPECT_NE(own->release_kept, nullptr);
  EXPECT_FALSE(own->needs_kernels);
  EXPECT_TRUE(own->alone);
  const gpu::WorkRunner* together_runner = runner_of(*together);
  const gpu::WorkRunner* local_runner = runner_of(*local);
  ASSERT_NE(together_runner, nullptr);
  ASSERT_NE(local_runner, nullptr);
  EXPECT_TRUE(together_runner->on_kept); // on the host copies' kept buffers
  EXPECT_FALSE(local_runner->on_kept);   // after they are freed: the whole budget
  EXPECT_TRUE(together_runner->alone && local_runner->alone);

  // Listed right after gpu.compute, as when it was built in.
  const std::span<const CheckDef> checks = all_checks();
  const auto at = [&checks](std::string_view id) {
    return std::find_if(checks.begin(), checks.end(),
                        [id](const CheckDef& c) { return c.info.id == id; });
  };
  ASSERT_NE(at("gpu.bandwidth"), checks.end());
  EXPECT_EQ(at("gpu.bandwidth") - at("gpu.compute"), 1);

  for (const char* code : {"gpu.bandwidth_low", "gpu.bandwidth_outlier", "gpu.copy_gate_timeout"}) {
    EXPECT_NE(find_finding_spec(code), nullptr) << code;
  }
  for (const char* metric :
       {"h2d_gbps", "d2d_gbps", "h2d_together_gbps", "host_d2h_all_gpus_gbps"}) {
    EXPECT_TRUE(gates::is_known_metric(metric)) << metric;
  }
}

/// A child's JSON of the host copies, through the structs the child writes.
nlohmann::json copies_json(const std::optional<protocol::KernelModuleReport>& module) {
  protocol::ChildEnvelope envelope;
  envelope.metrics = {{"h2d_gbps", 55.1, "GB/s", "pinned"}, {"d2h_gbps", 55.2, "GB/s", "pinned"}};
  envelope.verify = {{"copy", "pinned host->device", 16777216, 0, 0, "", ""}};
  nlohmann::json out = nlohmann::json::object();
  protocol::write_envelope(envelope, out);
  if (module) {
    out["module"] = protocol::to_json(*module);
  }
  protocol::BandwidthPayload own;
  own.link = protocol::PcieLinkReading{"32.0 GT/s PCIe", "16", "32.0 GT/s PCIe", "16"};
  own.gated = !module || module->loaded;
  protocol::write_bandwidth(own, out);
  return out;
}

checks::Judgement judge_json(const nlohmann::json& json) {
  return test::registered_judge("gpu.bandwidth", checks::GpuTarget{}, json);
}

// The copies need no kernel of gpucheck's (they run ungated): a module that did not load is
// gpu.compute's finding, and the copies are still judged (the healthy twin: a loaded module).
TEST(Bandwidth, CopiesAreJudgedWhenTheKernelsDidNotLoad) {
  protocol::KernelModuleReport failed;
  failed.loaded = false;
  failed.code = 209;
  failed.name = "CUDA_ERROR_NO_BINARY_FOR_GPU";
  failed.call = "cuModuleLoadDataEx";
  const checks::Judgement ungated = judge_json(copies_json(failed));
  EXPECT_TRUE(ungated.findings.empty());
  EXPECT_NE(ungated.summary.find("host->device 55.1 GB/s"), std::string::npos) << ungated.summary;

  protocol::KernelModuleReport loaded = failed;
  loaded.loaded = true;
  loaded.code = 0;
  loaded.name = "CUDA_SUCCESS";
  const checks::Judgement gated = judge_json(copies_json(loaded));
  EXPECT_TRUE(gated.findings.empty());
  EXPECT_EQ(gated.summary, ungated.summary);
}

/// Three GPUs of one model and their host->device rates, each result a pass so far.
std::vector<CheckResult> results_of(const std::vector<double>& h2d, checks::GpuTargets& targets) {
  std::vector<CheckResult> results;
  for (size_t i = 0; i < h2d.size(); ++i) {
    checks::GpuTarget gpu;
    gpu.gpu_index = static_cast<int>(i);
    gpu.name = "NVIDIA H200";
    gpu.pci_bus_id = "0000:1" + std::to_string(i) + ":00.0";
    targets.gpus.push_back(gpu);
    CheckResult result;
    result.status = Status::pass;
    Metric metric;
    metric.name = "h2d_gbps";
    metric.value = h2d[i];
    metric.unit = "GB/s";
    result.metrics.push_back(metric);
    results.push_back(std::move(result));
  }
  return results;
}

TEST(Bandwidth, ASiblingWellBelowTheMedianIsAnOutlier) {
  checks::GpuTargets targets;
  std::vector<CheckResult> results = results_of({55.2, 54.9, 30.1}, targets);
  add_outliers(results, targets);
  EXPECT_TRUE(results[0].findings.empty());
  EXPECT_TRUE(results[1].findings.empty());
  ASSERT_EQ(results[2].findings.size(), 1U);
  EXPECT_EQ(results[2].findings[0].code, "gpu.bandwidth_outlier");
  EXPECT_EQ(results[2].findings[0].severity, Severity::warn);
  EXPECT_EQ(results[2].status, Status::warn);
  // The healthy twin: siblings alike.
  checks::GpuTargets alike_targets;
  std::vector<CheckResult> alike = results_of({55.2, 54.9, 55.0}, alike_targets);
  add_outliers(alike, alike_targets);
  for (const CheckResult& r : alike) {
    EXPECT_TRUE(r.findings.empty());
    EXPECT_EQ(r.status, Status::pass);
  }
}

// A tenant's copies beside it slowed the GPU: a note, not a warning that drains the node.
TEST(Bandwidth, AnOutlierMeasuredUnderContentionIsANote) {
  checks::GpuTargets targets;
  std::vector<CheckResult> results = results_of({55.2, 54.9, 30.1}, targets);
  results[2].findings.push_back(
      make_finding(codes::k_gpu_contention, 2, 2, "1 other process", "4242 (python3)"));
  add_outliers(results, targets);
  ASSERT_EQ(results[2].findings.size(), 2U);
  const Finding& outlier = results[2].findings[1];
  EXPECT_EQ(outlier.code, "gpu.bandwidth_outlier");
  EXPECT_EQ(outlier.severity, Severity::info);
  EXPECT_NE(outlier.message.find("(measured under contention)"), std::string::npos);
  EXPECT_EQ(results[2].status, Status::pass);
}

} // namespace
} // namespace gpucheck::gpu_checks::bandwidth
