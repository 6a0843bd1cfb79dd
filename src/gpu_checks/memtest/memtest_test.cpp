// gpu.memtest: its judge over reports built as the child writes them (memory errors, coverage,
// interruption), its judge as the runner calls it on a child's JSON (the typed reader, the skip
// beside other processes), and its one registration line: the long level's child before the
// burn, and the report before gpu.burn, as before it had a folder.
#include <gtest/gtest.h>

#include <algorithm>

#include "engine/plan.hpp"
#include "findings/catalog.hpp"
#include "gates/metric_names.hpp"
#include "gpu/gpu_children.hpp"
#include "gpu_checks/memtest/memtest.hpp"
#include "gpu_checks/registry.hpp"
#include "gpucheck/registry.hpp"
#include "support/registered_judge.hpp"

namespace gpucheck::gpu_checks::memtest {
namespace {

checks::GpuTarget h200(int index = 0) {
  checks::GpuTarget gpu;
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

checks::Judgement judge_report(const checks::GpuTarget& gpu, const Payload& report) {
  return judge(gpu, report, ChildReport{});
}

/// gpu.memtest's judge as the runner calls it, through its registration.
checks::Judgement judge_gpu_memtest(const checks::GpuTarget& gpu, const nlohmann::json& json) {
  return test::registered_judge("gpu.memtest", gpu, json);
}

constexpr uint64_t k_gib = 1ULL << 30;

protocol::MemtestReport healthy_memtest() {
  protocol::MemtestReport m;
  m.free_bytes = 140 * k_gib;
  m.tested_bytes = 134 * k_gib; // 95.7%
  m.chunks = 134;
  m.duration_s = 60.0;
  m.elapsed_s = 60.0;
  m.bytes_moved = 120000000000000ULL; // 2000 GB/s
  m.rounds = 3;
  for (const char* name :
       {"walking_ones", "walking_zeros", "moving_inversions", "random", "address", "modulo20"}) {
    m.patterns.push_back({name, 12});
  }
  return m;
}

TEST(Memtest, AHealthyRunPassesAndSaysWhatWasTested) {
  const checks::Judgement j = judge_report(h200(), healthy_memtest());
  EXPECT_TRUE(j.findings.empty());
  EXPECT_FALSE(j.skipped);
  EXPECT_EQ(j.summary, "GPU 0 (NVIDIA H200): 134.0 GiB tested (95.7% of 140.0 GiB free) under 6 "
                       "patterns (walking_ones, walking_zeros, moving_inversions, random, "
                       "address, modulo20), 3 full rounds in 60.0 s at 2000 GB/s; every word "
                       "read back right");
}

TEST(Memtest, ErrorsFailNamingRangePatternsAndValues) {
  protocol::MemtestReport m = healthy_memtest();
  m.error_count = 40;
  m.errors = {{"0x7f2a40001230", "moving_inversions", "0xffffffff", "0xfffffffe"},
              {"0x7f2a40000010", "moving_inversions", "0x00000000", "0x00000080"},
              {"0x7f2a40801000", "random", "0x12345678", "0x12345679"}};
  const checks::Judgement j = judge_report(h200(3), m);
  ASSERT_EQ(codes(j.findings), std::vector<std::string>{"gpu.memtest_errors"});
  const Finding& f = j.findings[0];
  EXPECT_EQ(f.severity, Severity::fail);
  EXPECT_EQ(f.gpu_index, 3);
  EXPECT_EQ(f.message, "GPU 3 (NVIDIA H200): 40 words (the first 3 recorded) read back wrong in "
                       "the memory test, at addresses 0x7f2a40000010 to 0x7f2a40801000, "
                       "patterns moving_inversions, random; first: expected 0xffffffff, "
                       "observed 0xfffffffe");
  EXPECT_NE(f.remedy.find("nvidia-smi -q -d ECC,ROW_REMAPPER -i 00000000:1B:00.0"),
            std::string::npos);
  EXPECT_NE(f.remedy.find("RMA"), std::string::npos);
  EXPECT_NE(j.summary.find("40 words read back WRONG"), std::string::npos) << j.summary;
}

TEST(Memtest, LowCoverageWarnsAndItsTwinAtTheFloorDoesNot) {
  protocol::MemtestReport m = healthy_memtest();
  m.tested_bytes = 100 * k_gib; // 71%
  const checks::Judgement low = judge_report(h200(), m);
  ASSERT_EQ(codes(low.findings), std::vector<std::string>{"gpu.memtest_coverage_low"});
  EXPECT_EQ(low.findings[0].severity, Severity::warn);
  EXPECT_EQ(low.findings[0].message, "GPU 0: the memory test covered 100.0 GiB, 71.4% of the "
                                     "140.0 GiB free; the floor is 95%");
  m.tested_bytes = 133 * k_gib; // 95.0%
  EXPECT_TRUE(judge_report(h200(), m).findings.empty());
}

TEST(Memtest, AnInterruptedTestIsNeverAPass) {
  protocol::MemtestReport m = healthy_memtest();
  m.interrupted = true;
  m.elapsed_s = 12.5;
  m.rounds = 0;
  m.tested_bytes = 10 * k_gib; // low coverage is not judged on top of the interruption
  const checks::Judgement j = judge_report(h200(), m);
  ASSERT_EQ(codes(j.findings), std::vector<std::string>{"gpu.long_interrupted"});
  EXPECT_EQ(j.findings[0].severity, Severity::warn);
  EXPECT_EQ(j.findings[0].message,
            "GPU 0: the memory test was stopped by the user (SIGINT) after 12.5 of 60 s: 10.0 GiB "
            "tested under 6 patterns in 0 full rounds; the rest of the time was not tested");
  EXPECT_NE(j.summary.find("stopped by the user after 12.5 of 60 s"), std::string::npos);
  // Errors found before the stop still fail.
  m.error_count = 1;
  m.errors = {{"0x1000", "random", "0x1", "0x0"}};
  EXPECT_EQ(codes(judge_report(h200(), m).findings),
            (std::vector<std::string>{"gpu.memtest_errors", "gpu.long_interrupted"}));
}

TEST(Memtest, ThePayloadIsReadThroughTheTypedReader) {
  nlohmann::json payload = nlohmann::json::object();
  protocol::write_envelope(protocol::ChildEnvelope{}, payload);
  protocol::write_memtest(healthy_memtest(), payload);
  EXPECT_TRUE(judge_gpu_memtest(h200(), payload).findings.empty());
  payload["memtest"].erase("rounds");
  const checks::Judgement broken = judge_gpu_memtest(h200(), payload);
  ASSERT_EQ(codes(broken.findings), std::vector<std::string>{"gpu.child_failed"});
  EXPECT_NE(broken.findings[0].message.find("memtest.rounds is missing"), std::string::npos);
}

TEST(Memtest, NoMemoryLeftBesideOtherProcessesIsASkip) {
  nlohmann::json payload = nlohmann::json::object();
  protocol::ChildEnvelope envelope;
  envelope.failure =
      protocol::PayloadFailure{"memtest allocate",
                               "",
                               0,
                               "",
                               "",
                               "no memory to test: 200 MiB free, none of it could be allocated"};
  protocol::write_envelope(envelope, payload);
  checks::GpuTarget shared = h200();
  shared.other_processes = {"4242 (python3)"};
  const checks::Judgement skipped = judge_gpu_memtest(shared, payload);
  EXPECT_TRUE(skipped.skipped);
  EXPECT_EQ(skipped.summary, "GPU 0: not tested beside other processes: no memory to test: 200 "
                             "MiB free, none of it could be allocated");
  // Its twin: the same on a GPU nobody else uses is no skip.
  EXPECT_FALSE(judge_gpu_memtest(h200(), payload).skipped);
}

TEST(Memtest, RunsAndIsListedWhereItWasBeforeItHadAFolder) {
  const std::optional<engine::Work> work = engine::work_named("memtest");
  ASSERT_TRUE(work);
  EXPECT_EQ(engine::check_id(*work), "gpu.memtest");
  EXPECT_EQ(engine::child_mode(*work), "gpu-memtest");
  EXPECT_TRUE(engine::is_long(*work));
  EXPECT_EQ(engine::work_row(*work).phase, "memory test");
  const gpu::WorkRunner* runner = gpu::runner_of_mode("gpu-memtest");
  ASSERT_NE(runner, nullptr);
  EXPECT_EQ(runner->work, *work);
  EXPECT_TRUE(runner->needs_kernels);
  // The long level's child: the memory test, then the burn.
  const std::optional<engine::Work> burn = engine::work_named("burn");
  ASSERT_TRUE(burn);
  EXPECT_EQ(engine::child_groups({*burn, *work}),
            (std::vector<std::vector<engine::Work>>{{*work, *burn}}));
  const std::span<const CheckDef> checks = all_checks();
  const auto at = std::find_if(checks.begin(), checks.end(),
                               [](const CheckDef& c) { return c.info.id == "gpu.memtest"; });
  ASSERT_NE(at, checks.end());
  ASSERT_NE(at + 1, checks.end());
  EXPECT_EQ((at - 1)->info.id, "gpu.nccl");
  EXPECT_EQ((at + 1)->info.id, "gpu.burn");
  EXPECT_EQ(at->info.level, Level::long_);
  for (const FindingSpec& spec : findings()) {
    EXPECT_NE(find_finding_spec(spec.code), nullptr) << spec.code;
  }
  EXPECT_TRUE(gates::is_known_metric("memtest_throughput_gbps"));
  EXPECT_TRUE(gates::is_known_metric("memtest_coverage_percent"));
  const std::optional<checks::Expectation> floor =
      checks::expected_floor("NVIDIA H200", "memtest_throughput_gbps", 132);
  ASSERT_TRUE(floor);
  EXPECT_DOUBLE_EQ(floor->min, 0.6 * 4800.0);
  EXPECT_TRUE(floor->words.starts_with("0.6 of the datasheet's memory bandwidth 4800 GB/s: "))
      << floor->words;
}

TEST(Memtest, ItsWrongWordsAreItsJudgesNotACommonFinding) {
  nlohmann::json payload = {{"work", "memtest"}, {"metrics", nlohmann::json::array()}};
  protocol::PayloadVerification v{std::string(k_verify_kind), "every word", 100, 3, 0, "", ""};
  payload["verify"].push_back(protocol::to_json(v));
  EXPECT_TRUE(checks::common_findings("test", h200(), payload).empty());
}

} // namespace
} // namespace gpucheck::gpu_checks::memtest
