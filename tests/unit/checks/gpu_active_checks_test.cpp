// The active GPU checks without a GPU: they skip with reasons, and every way their child can
// fail (no driver, crash, hang, garbage, a wrong result) becomes the right finding.
#include "checks/active/judging.hpp"
#include "engine/gpu_engine.hpp"
#include "gpu_checks/registry.hpp"
#include "protocol/payloads.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>

#include "findings/catalog.hpp"
#include "gpucheck/runner.hpp"

namespace gpucheck::checks {
namespace {

using namespace std::chrono_literals;

bool has_driver() {
  for (const char* path : {"/dev/nvidiactl", "/dev/nvidia0"}) {
    if (std::filesystem::exists(path)) {
      return true;
    }
  }
  return false;
}

SystemSnapshot snapshot_with_init(int result, std::string name) {
  SystemSnapshot snapshot;
  snapshot.cuda.library.loaded = true;
  snapshot.cuda.init_result = result;
  snapshot.cuda.init_result_name = std::move(name);
  return snapshot;
}

std::vector<CheckDef> all_gpu_checks() {
  std::vector<CheckDef> out;
  for (const gpu_checks::Registration& r : gpu_checks::registered()) {
    // gpu.memtest is the long level's; gpu.p2p and gpu.nccl, one result over every GPU, are
    // tested in their folders.
    if (r.check.info.level != Level::long_ && r.work.child != engine::WorkChild::spanning) {
      out.push_back(r.check); // gpu.compute, gpu.bandwidth, ... (src/gpu_checks/)
    }
  }
  return out;
}

TEST(GpuChecks, AreActiveAndNamedUnderGpu) {
  for (const CheckDef& check : all_gpu_checks()) {
    EXPECT_EQ(check.info.kind, CheckKind::active) << check.info.id;
    EXPECT_TRUE(check.info.id.starts_with("gpu.")) << check.info.id;
  }
}

TEST(GpuChecks, SkipWithTheInitFailureWhenCuInitFailed) {
  const SystemSnapshot snapshot = snapshot_with_init(100, "CUDA_ERROR_NO_DEVICE");
  const CheckContext context{snapshot, CheckOptions{}};
  for (const CheckDef& check : all_gpu_checks()) {
    const std::vector<CheckResult> results = check.run(context);
    ASSERT_EQ(results.size(), 1U) << check.info.id;
    EXPECT_EQ(results[0].status, Status::skip);
    EXPECT_EQ(results[0].summary, "cuInit failed (CUDA_ERROR_NO_DEVICE): see the cuda findings");
  }
}

TEST(GpuChecks, SkipWhenNoDeviceIsVisible) {
  const SystemSnapshot snapshot = snapshot_with_init(0, "CUDA_SUCCESS");
  const GpuTargets targets = gpu_targets(snapshot, 5s);
  EXPECT_TRUE(targets.gpus.empty());
  EXPECT_EQ(targets.skip_reason, "no CUDA device is visible");
}

TEST(GpuChecks, SkipWhenTheDriverProbeFailed) {
  SystemSnapshot snapshot;
  snapshot.cuda.failure =
      ChildFailure{ChildFailureKind::signal, 6, "SIGABRT", 0, 0.0, "killed by SIGABRT", ""};
  const GpuTargets targets = gpu_targets(snapshot, 5s);
  EXPECT_TRUE(targets.gpus.empty());
  EXPECT_EQ(targets.skip_reason, "the CUDA driver probe failed (killed by SIGABRT)");
}

TEST(GpuChecks, WithoutDriverFactsAskTheDriverInAChild) {
  if (has_driver()) {
    GTEST_SKIP() << "this machine has an NVIDIA driver; the no-driver path cannot be seen here";
  }
  const SystemSnapshot snapshot; // no CUDA probe ran at all
  const GpuTargets targets = gpu_targets(snapshot, 10s);
  EXPECT_TRUE(targets.gpus.empty());
  EXPECT_TRUE(targets.skip_reason.starts_with("no CUDA driver: cannot load libcuda.so.1: "))
      << targets.skip_reason;
}

TEST(GpuChecks, TargetsTakeNvmlIndexLinkAndOtherProcesses) {
  SystemSnapshot snapshot = snapshot_with_init(0, "CUDA_SUCCESS");
  CudaDevice device;
  device.ordinal = 0;
  device.name = "NVIDIA H200";
  device.pci_bus_id = "0000:3B:00.0";
  snapshot.cuda.devices = {device};
  GpuInfo gpu;
  gpu.index = 3;
  gpu.cuda_ordinal = 0;
  gpu.pcie_gen_max = 5;
  gpu.pcie_width_max = 16;
  gpu.processes = {GpuProcess{4242, 1 << 30, "python3"}};
  snapshot.gpus = {gpu};
  const GpuTargets targets = gpu_targets(snapshot, 5s);
  ASSERT_EQ(targets.gpus.size(), 1U);
  EXPECT_EQ(targets.gpus[0].gpu_index, 3);
  EXPECT_EQ(targets.gpus[0].pcie_gen, 5);
  EXPECT_EQ(targets.gpus[0].other_processes, std::vector<std::string>{"4242 (python3)"});
}

SystemSnapshot one_device_snapshot() {
  SystemSnapshot snapshot = snapshot_with_init(0, "CUDA_SUCCESS");
  CudaDevice device;
  device.ordinal = 0;
  device.name = "Test GPU";
  snapshot.cuda.devices = {device};
  return snapshot;
}

Judgement never_judge(const GpuTarget&, const nlohmann::json&) {
  ADD_FAILURE() << "the judge must not see a failed child";
  return {};
}

// run_per_gpu takes its outcomes from the GPU engine; a test engine runs a stand-in child mode
// for the work (the engine's job_override) with an idle GPU in its census.
constexpr CheckInfo k_test_info{"gpu.compute", "test check", "", CheckKind::active};

std::unique_ptr<engine::GpuEngine> test_engine(std::vector<std::string> mode_and_args,
                                               std::chrono::milliseconds timeout = 5000ms) {
  const engine::Work compute = *engine::work_for_check("gpu.compute");
  auto gpu_engine = std::make_unique<engine::GpuEngine>(std::vector<engine::Work>{compute}, "/",
                                                        std::nullopt, timeout);
  protocol::Census census;
  protocol::CensusGpu idle;
  idle.free_bytes = 80ULL << 30;
  census.gpus.push_back(idle);
  gpu_engine->options().census_override = census;
  gpu_engine->options().job_override = {{compute, std::move(mode_and_args)}};
  gpu_engine->probes_over();
  return gpu_engine;
}

TEST(GpuChecks, CrashingChildIsAFailWithTheSignalAndItsOutput) {
  const SystemSnapshot snapshot = one_device_snapshot();
  const auto gpu_engine = test_engine({"test-crash"});
  const CheckContext context{snapshot, CheckOptions{}, gpu_engine.get()};
  const auto results = run_per_gpu(k_test_info, context, &never_judge);
  ASSERT_EQ(results.size(), 1U);
  EXPECT_EQ(results[0].status, Status::fail);
  ASSERT_EQ(results[0].findings.size(), 1U);
  EXPECT_EQ(results[0].findings[0].code, "gpu.child_failed");
  EXPECT_NE(results[0].findings[0].message.find("SIGABRT"), std::string::npos)
      << results[0].findings[0].message;
  EXPECT_NE(results[0].findings[0].message.find("about to abort"), std::string::npos);
}

TEST(GpuChecks, HangingChildIsKilledAtTheCheckTimeout) {
  const SystemSnapshot snapshot = one_device_snapshot();
  const auto gpu_engine = test_engine({"test-hang"}, 300ms);
  const CheckContext context{snapshot, CheckOptions{}, gpu_engine.get()};
  const auto start = std::chrono::steady_clock::now();
  const auto results = run_per_gpu(k_test_info, context, &never_judge);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  ASSERT_EQ(results.size(), 1U);
  EXPECT_EQ(results[0].status, Status::fail);
  ASSERT_FALSE(results[0].findings.empty());
  EXPECT_EQ(results[0].findings[0].code, "gpu.child_failed");
  EXPECT_NE(results[0].findings[0].message.find("no result within 0.3 s"), std::string::npos)
      << results[0].findings[0].message;
}

TEST(GpuChecks, GarbageAndEarlyExitAreFailures) {
  const SystemSnapshot snapshot = one_device_snapshot();
  for (const char* mode : {"test-garbage", "test-exit"}) {
    const auto gpu_engine = test_engine({mode});
    const CheckContext context{snapshot, CheckOptions{}, gpu_engine.get()};
    const auto results = run_per_gpu(k_test_info, context, &never_judge);
    ASSERT_EQ(results.size(), 1U);
    EXPECT_EQ(results[0].status, Status::fail) << mode;
    ASSERT_FALSE(results[0].findings.empty()) << mode;
    EXPECT_EQ(results[0].findings[0].code, "gpu.child_failed") << mode;
  }
}

TEST(GpuChecks, NoRoomOnTheGpuIsAWarningNamingTheHoldersNeverAFail) {
  SystemSnapshot snapshot = one_device_snapshot();
  snapshot.cuda.devices[0].pci_bus_id = "0000:3B:00.0";
  const auto gpu_engine = test_engine({"test-ok"});
  protocol::Census census;
  protocol::CensusGpu full;
  full.bus_id = "0000:3b:00.0";
  full.free_bytes = 600ULL << 20;
  full.total_bytes = 80ULL << 30;
  full.processes = {{4242, "python3", 79ULL << 30}};
  census.gpus.push_back(full);
  gpu_engine->options().census_override = census;
  const CheckContext context{snapshot, CheckOptions{}, gpu_engine.get()};
  const auto results = run_per_gpu(k_test_info, context, &never_judge);
  ASSERT_EQ(results.size(), 1U);
  EXPECT_EQ(results[0].status, Status::warn);
  ASSERT_EQ(results[0].findings.size(), 1U);
  EXPECT_EQ(results[0].findings[0].code, "gpu.busy_not_tested");
  EXPECT_NE(results[0].findings[0].message.find("4242 (python3)"), std::string::npos)
      << results[0].findings[0].message;
  EXPECT_NE(results[0].findings[0].message.find("600 MiB"), std::string::npos)
      << results[0].findings[0].message;
}

TEST(GpuChecks, ALongWorkLeftOutOfABusyGpuIsASkipNamingTheProcessesNeverAWarning) {
  // The long level on a GPU that another process uses, without --force: the engine does not run
  // it (JobReport::Skip::busy) and the check is a skip with the engine's reason.
  SystemSnapshot snapshot = one_device_snapshot();
  snapshot.cuda.devices[0].pci_bus_id = "0000:3B:00.0";
  constexpr CheckInfo k_long_info{"gpu.memtest", "long test check", "", CheckKind::active,
                                  Level::long_};
  int judged = 0;
  const Judge count_judge = [&judged](const GpuTarget&, const nlohmann::json&) {
    ++judged;
    return Judgement{"judged", {}, false};
  };
  for (const bool force : {false, true}) {
    SCOPED_TRACE(force);
    auto gpu_engine = std::make_unique<engine::GpuEngine>(
        std::vector<engine::Work>{*engine::work_for_check("gpu.memtest")}, "/", std::nullopt,
        5000ms);
    protocol::Census census;
    protocol::CensusGpu shared;
    shared.bus_id = "0000:3b:00.0";
    shared.free_bytes = 70ULL << 30;
    shared.total_bytes = 80ULL << 30;
    shared.processes = {{4242, "python3", 2ULL << 30}};
    census.gpus.push_back(shared);
    gpu_engine->options().census_override = census;
    gpu_engine->options().job_override = {{*engine::work_for_check("gpu.memtest"), {"test-ok"}}};
    gpu_engine->options().force_long = force;
    gpu_engine->probes_over();
    const CheckContext context{snapshot, CheckOptions{}, gpu_engine.get()};
    const auto results = run_per_gpu(k_long_info, context, count_judge);
    ASSERT_EQ(results.size(), 1U);
    if (!force) {
      EXPECT_EQ(results[0].status, Status::skip);
      EXPECT_TRUE(results[0].findings.empty());
      EXPECT_NE(results[0].summary.find("4242"), std::string::npos) << results[0].summary;
      EXPECT_NE(results[0].summary.find("--force"), std::string::npos) << results[0].summary;
      EXPECT_EQ(judged, 0);
    } else {
      // Its twin: with --force the work runs beside the process and is judged, labelled.
      EXPECT_NE(results[0].status, Status::skip);
      EXPECT_EQ(judged, 1);
      EXPECT_TRUE(std::any_of(results[0].findings.begin(), results[0].findings.end(),
                              [](const Finding& f) { return f.code == "gpu.contention"; }));
    }
  }
}

TEST(GpuChecks, WithoutAnEngineTheActiveCheckSkips) {
  const SystemSnapshot snapshot = one_device_snapshot();
  const CheckContext context{snapshot, CheckOptions{}};
  const auto results = run_per_gpu(k_test_info, context, &never_judge);
  ASSERT_EQ(results.size(), 1U);
  EXPECT_EQ(results[0].status, Status::skip);
}

TEST(GpuChecks, ChecksReportTheMissingDriverAsAContextFailure) {
  if (has_driver()) {
    GTEST_SKIP() << "this machine has an NVIDIA driver";
  }
  // The snapshot claims a device, but libcuda cannot load here: each child says so.
  const SystemSnapshot snapshot = one_device_snapshot();
  const auto gpu_engine = engine::make_gpu_engine(Selection{}, "/", 20s);
  ASSERT_NE(gpu_engine, nullptr);
  gpu_engine->probes_over();
  const CheckContext context{snapshot, CheckOptions{}, gpu_engine.get()};
  for (const CheckDef& check : all_gpu_checks()) {
    const auto results = check.run(context);
    ASSERT_EQ(results.size(), 1U) << check.info.id;
    EXPECT_EQ(results[0].status, Status::fail) << check.info.id;
    ASSERT_FALSE(results[0].findings.empty()) << check.info.id;
    EXPECT_EQ(results[0].findings[0].code, "gpu.child_failed") << check.info.id;
    EXPECT_NE(results[0].findings[0].message.find("driver: cannot load libcuda.so.1"),
              std::string::npos)
        << results[0].findings[0].message;
  }
}

TEST(GpuChecks, TheEngineRunsTheProbesItIsHandedOnceAndReturnsTheirResult) {
  // A sysroot whose driver lists no GPU: nothing starts early; the probes still run, once,
  // with a hook that returns at once.
  const auto gpu_engine = engine::make_gpu_engine(Selection{}, "/nonexistent-sysroot", 20s);
  ASSERT_NE(gpu_engine, nullptr);
  for (const bool probes_use_gpu : {false, true}) {
    int calls = 0;
    const int got =
        gpu_engine->around_probes(probes_use_gpu, [&calls](const engine::ProbeHooks& hooks) {
          ++calls;
          EXPECT_TRUE(static_cast<bool>(hooks.before_cudnn_children));
          const auto began = std::chrono::steady_clock::now();
          hooks.before_cudnn_children();
          EXPECT_LT(std::chrono::steady_clock::now() - began, 1s);
          return 42;
        });
    EXPECT_EQ(got, 42);
    EXPECT_EQ(calls, 1);
  }
}

GpuTarget test_target() {
  GpuTarget gpu;
  gpu.gpu_index = 2;
  gpu.name = "Test GPU";
  return gpu;
}

/// A child's JSON as the child writes it: through the typed envelope (protocol/payloads.hpp).
nlohmann::json written(const protocol::ChildEnvelope& envelope) {
  nlohmann::json out = nlohmann::json::object();
  protocol::write_envelope(envelope, out);
  return out;
}

TEST(GpuChecks, VerificationMismatchesBecomeTheirFindings) {
  protocol::ChildEnvelope envelope;
  envelope.verify = {{"copy", "pinned host->device", 16, 1, 7, "0x1", "0x2"},
                     {"compute", "ok one", 5, 0, 0, "", ""},
                     {"cudnn_conv", "conv", 9, 3, 0, "", ""},
                     {"graph", "graph", 9, 1, 0, "", ""},
                     {"cudnn_activation", "relu", 9, 2, 0, "", ""}};
  const nlohmann::json payload = written(envelope);
  const std::vector<Finding> findings = common_findings("t", test_target(), payload);
  ASSERT_EQ(findings.size(), 4U);
  EXPECT_EQ(findings[0].code, "gpu.copy_corrupt");
  EXPECT_EQ(findings[0].message,
            "GPU 2: pinned host->device: 1 of 16 words wrong, first at word 7: got 0x1, "
            "expected 0x2");
  EXPECT_EQ(findings[0].gpu_index, 2);
  EXPECT_EQ(findings[1].code, "cudnn.conv_mismatch");
  EXPECT_EQ(findings[2].code, "gpu.graph_mismatch");
  EXPECT_EQ(findings[3].code, "cudnn.activation_mismatch");
  EXPECT_FALSE(all_verified(payload));
  protocol::ChildEnvelope clean;
  clean.verify = {{"compute", "ok", 5, 0, 0, "", ""}};
  EXPECT_TRUE(all_verified(written(clean)));
  EXPECT_FALSE(all_verified(written(protocol::ChildEnvelope{})));
}

TEST(GpuChecks, WrongResultsOfAnUnknownKindFailAsTheChild) {
  protocol::ChildEnvelope envelope;
  envelope.verify = {{"tensor_cores", "mma", 9, 2, 0, "", ""}};
  const std::vector<Finding> findings = common_findings("t", test_target(), written(envelope));
  ASSERT_EQ(findings.size(), 1U);
  EXPECT_EQ(findings[0].code, "gpu.child_failed");
  EXPECT_EQ(findings[0].severity, Severity::fail);
  EXPECT_NE(findings[0].message.find("2 of 9 results of an unknown kind 'tensor_cores'"),
            std::string::npos)
      << findings[0].message;
  // Its twin: none wrong is no finding.
  envelope.verify[0].mismatches = 0;
  EXPECT_TRUE(common_findings("t", test_target(), written(envelope)).empty());
}

TEST(GpuChecks, AResultWithARenamedKeyIsAFailureNamingIt) {
  protocol::ChildEnvelope envelope;
  envelope.verify = {{"copy", "pinned host->device", 16, 0, 0, "", ""}};
  nlohmann::json payload = written(envelope);
  payload["verify"][0].erase("mismatches");
  payload["verify"][0]["mismatch"] = 0;
  EXPECT_FALSE(all_verified(payload));
  const auto findings = common_findings("t", test_target(), payload);
  ASSERT_EQ(findings.size(), 1U);
  EXPECT_EQ(findings[0].code, "gpu.child_failed");
  EXPECT_NE(findings[0].message.find("verify[0].mismatches is missing"), std::string::npos)
      << findings[0].message;
}

TEST(GpuChecks, FailedCallsNameTheCallAndStage) {
  protocol::ChildEnvelope envelope;
  envelope.failure = protocol::PayloadFailure{"device-local copies",
                                              "cuMemcpyDtoDAsync",
                                              700,
                                              "CUDA_ERROR_ILLEGAL_ADDRESS",
                                              "an illegal memory access was encountered",
                                              "m"};
  const auto findings = common_findings("t", test_target(), written(envelope));
  ASSERT_EQ(findings.size(), 1U);
  EXPECT_EQ(findings[0].code, "gpu.cuda_call_failed");
  EXPECT_EQ(findings[0].message,
            "GPU 2: cuMemcpyDtoDAsync failed during device-local copies: "
            "CUDA_ERROR_ILLEGAL_ADDRESS (an illegal memory access was encountered)");
  envelope.failure =
      protocol::PayloadFailure{"context", "cuDevicePrimaryCtxRetain", 2, "", "", "m"};
  EXPECT_EQ(common_findings("t", test_target(), written(envelope))[0].code, "gpu.context_failed");
}

// Issue 35 item 2: a GPU CUDA cannot open because it stopped answering is lost, named by its
// address and UUID with the kernel log's Xid 79; a busy GPU in an exclusive compute mode is not.
TEST(GpuChecks, AGpuCudaCannotOpenIsLostUnlessItsComputeModeExplainsIt) {
  protocol::ChildEnvelope envelope;
  envelope.failure = protocol::PayloadFailure{"context",
                                              "cuDevicePrimaryCtxRetain",
                                              46,
                                              "CUDA_ERROR_DEVICE_UNAVAILABLE",
                                              "CUDA-capable device(s) is/are busy or unavailable",
                                              "m"};
  GpuTarget gpu = test_target();
  gpu.pci_bus_id = "0000:3b:00.0";
  gpu.uuid = "GPU-0ad92dd9-5994-5049-6202-74fd5c39d17d";
  gpu.compute_mode = "default";
  auto findings = common_findings("t", gpu, written(envelope));
  ASSERT_EQ(findings.size(), 1U);
  EXPECT_EQ(findings[0].code, "gpu.lost");
  EXPECT_EQ(findings[0].message,
            "GPU 2 at 0000:3b:00.0 is lost: CUDA's cuDevicePrimaryCtxRetain returned "
            "CUDA_ERROR_DEVICE_UNAVAILABLE (46) during context in compute mode default; its UUID "
            "GPU-0ad92dd9-5994-5049-6202-74fd5c39d17d");
  // Its healthy twin: exclusive-process mode with another process on it is a busy GPU.
  gpu.compute_mode = "exclusive_process";
  findings = common_findings("t", gpu, written(envelope));
  ASSERT_EQ(findings.size(), 1U);
  EXPECT_EQ(findings[0].code, "gpu.context_failed");
  // Once the kernel log has it falling off the bus, any failure to open it is the loss.
  gpu.fell_off_bus = true;
  envelope.failure = protocol::PayloadFailure{
      "context", "cuDevicePrimaryCtxRetain", 999, "CUDA_ERROR_UNKNOWN", "unknown error", "m"};
  findings = common_findings("t", gpu, written(envelope));
  ASSERT_EQ(findings.size(), 1U);
  EXPECT_EQ(findings[0].code, "gpu.lost");
  EXPECT_NE(findings[0].message.find("the kernel log says it fell off the bus (Xid 79)"),
            std::string::npos)
      << findings[0].message;
  // ... but not a copy that failed later for another reason (the GPU answered its context).
  envelope.failure = protocol::PayloadFailure{
      "host->device copies", "cuMemcpyHtoDAsync", 2, "CUDA_ERROR_OUT_OF_MEMORY", "oom", "m"};
  EXPECT_EQ(common_findings("t", gpu, written(envelope))[0].code, "gpu.cuda_call_failed");
}

protocol::KernelModuleReport module_failure(int code, std::string name) {
  protocol::KernelModuleReport module;
  module.code = code;
  module.name = std::move(name);
  module.text = "t";
  module.call = "cuModuleLoadDataEx";
  module.toolkit = "13.0";
  module.load_ms = 1.0;
  module.error_log = "ptxas fatal";
  module.image = {"compute_75", "sm_90"};
  return module;
}

const std::optional<protocol::DeviceDescription> k_sm90 =
    protocol::DeviceDescription{0, "Test GPU", 9, 0, 132, "", 0, 0, 13000, 1, 0};

TEST(GpuChecks, KernelLoadFailuresCarryTheLogAndTheExactRemedy) {
  auto ptx = kernel_load_finding(test_target(),
                                 module_failure(222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION"), k_sm90);
  ASSERT_TRUE(ptx);
  EXPECT_EQ(ptx->code, "gpu.kernel_load_failed");
  EXPECT_EQ(
      ptx->message,
      "GPU 2 (Test GPU, sm_90): cuModuleLoadDataEx returned "
      "CUDA_ERROR_UNSUPPORTED_PTX_VERSION (t); image: compute_75 sm_90; JIT log: ptxas fatal");
  EXPECT_NE(ptx->remedy.find("supports CUDA 13.0 (r580 or newer"), std::string::npos)
      << ptx->remedy;
  auto jit = kernel_load_finding(test_target(),
                                 module_failure(221, "CUDA_ERROR_JIT_COMPILER_NOT_FOUND"), k_sm90);
  ASSERT_TRUE(jit);
  EXPECT_NE(jit->remedy.find("NVIDIA_DRIVER_CAPABILITIES"), std::string::npos);
  auto none = kernel_load_finding(test_target(),
                                  module_failure(209, "CUDA_ERROR_NO_BINARY_FOR_GPU"), k_sm90);
  EXPECT_NE(none->remedy.find("no code for sm_90"), std::string::npos);
  auto image =
      kernel_load_finding(test_target(), module_failure(200, "CUDA_ERROR_INVALID_IMAGE"), k_sm90);
  EXPECT_NE(image->remedy.find("binary is damaged"), std::string::npos) << image->remedy;
  auto not_built =
      kernel_load_finding(test_target(), module_failure(-2, "no kernels built"), k_sm90);
  EXPECT_EQ(not_built->code, "gpu.kernels_not_built");
  protocol::KernelModuleReport loaded = module_failure(0, "CUDA_SUCCESS");
  loaded.loaded = true;
  EXPECT_FALSE(kernel_load_finding(test_target(), loaded, k_sm90));
  // Without a device (the child had none), the capability is unknown: sm_00.
  auto unknown = kernel_load_finding(test_target(), module_failure(209, "X"), std::nullopt);
  EXPECT_NE(unknown->message.find("sm_00"), std::string::npos) << unknown->message;
}

TEST(GpuChecks, MetricsAreLabelledUnderContention) {
  protocol::ChildEnvelope envelope;
  envelope.metrics = {{"h2d_gbps", 50.5, "GB/s", "pinned"}};
  const nlohmann::json payload = written(envelope);
  const auto quiet = payload_metrics(payload, false);
  ASSERT_EQ(quiet.size(), 1U);
  EXPECT_EQ(quiet[0], (Metric{"h2d_gbps", 50.5, "GB/s", "pinned"}));
  EXPECT_EQ(payload_metrics(payload, true)[0].note, "pinned; measured under contention");
  // A child's JSON holds names only: a pair's or a size's figure gets its labels as fields.
  envelope.metrics = {{"p2p_0_1_latency_us", 2.5, "us", ""}};
  const auto pair = payload_metrics(written(envelope), false);
  ASSERT_EQ(pair.size(), 1U);
  EXPECT_EQ(pair[0].labels.family, "p2p_latency_us");
  EXPECT_EQ(pair[0].labels.gpu_a, 0);
  EXPECT_EQ(pair[0].labels.gpu_b, 1);
}

TEST(GpuChecks, TheJudgesSiblingBasisReachesItsMetricOnly) {
  std::vector<Metric> metrics{{"conv_a_tflops", 66.0, "TFLOP/s", ""},
                              {"conv_b_tflops", 700.0, "TFLOP/s", ""}};
  Judgement judgement;
  judgement.sibling_bases.emplace_back("conv_a_tflops", SiblingBasis{40.0, "heuristic X"});
  apply_sibling_bases(judgement, metrics);
  ASSERT_TRUE(metrics[0].sibling_basis.has_value());
  EXPECT_EQ(*metrics[0].sibling_basis, (SiblingBasis{40.0, "heuristic X"}));
  EXPECT_FALSE(metrics[1].sibling_basis.has_value());
  // Reports do not carry it: the JSON of a metric with a basis is that of one without.
  Metric plain = metrics[0];
  plain.sibling_basis.reset();
  EXPECT_EQ(nlohmann::json(metrics[0]), nlohmann::json(plain));
}

TEST(GpuChecks, QuickRunsSkipThemInTheRunner) {
  const SystemSnapshot snapshot = one_device_snapshot();
  CheckOptions options;
  options.quick = true;
  const CheckContext context{snapshot, options};
  const std::vector<CheckDef> checks = all_gpu_checks();
  const auto results = run_checks(checks, context, Selection{});
  ASSERT_EQ(results.size(), checks.size());
  for (const CheckResult& result : results) {
    EXPECT_EQ(result.status, Status::skip);
    EXPECT_EQ(result.summary, "--quick: no GPU work");
  }
}

} // namespace
} // namespace gpucheck::checks
