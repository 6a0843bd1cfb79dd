// The one-line drain reason (--format reason): which findings drain, the GPU's identity, the
// length limit and the bytes that reach scontrol.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "findings/catalog.hpp"
#include "render/reason.hpp"

namespace gpucheck::testing {
namespace {

using render::k_max_reason_bytes;
using render::render_reason;

/// The drain predicate of these tests: codes ending in "broken" drain.
bool drains(std::string_view code) {
  return code.ends_with("broken");
}

Finding finding(std::string code, Severity severity, std::optional<int> gpu = std::nullopt) {
  Finding f;
  f.code = std::move(code);
  f.severity = severity;
  f.message = "message";
  f.gpu_index = gpu;
  return f;
}

Report report_with(std::vector<Finding> findings, std::optional<int> result_gpu = std::nullopt) {
  Report report;
  CheckResult result;
  result.check_id = "gpu.ecc";
  result.status = Status::fail;
  result.gpu_index = result_gpu;
  result.findings = std::move(findings);
  report.results.push_back(std::move(result));
  GpuInfo gpu0;
  gpu0.index = 0;
  gpu0.serial = "1320221015632";
  gpu0.uuid = "GPU-aaaa";
  GpuInfo gpu1;
  gpu1.index = 1;
  gpu1.uuid = "GPU-bbbb"; // no serial: the UUID names it
  GpuInfo gpu2;
  gpu2.index = 2;
  gpu2.pci_bus_id = "0000:3B:00.0";
  report.snapshot.gpus = {gpu0, gpu1, gpu2};
  return report;
}

TEST(ReasonRenderer, NothingThatDrainsGivesAnEmptyReason) {
  EXPECT_EQ(render_reason(Report{}, &drains), "");
  // A failure whose code does not drain (a framework mismatch), info, and an ignored finding.
  Finding ignored = finding("gpu.ecc_broken", Severity::fail, 0);
  ignored.ignored = true;
  EXPECT_EQ(render_reason(report_with({finding("fw.cudnn_mismatch", Severity::fail),
                                       finding("log.xid_broken", Severity::info, 0), ignored}),
                          &drains),
            "");
}

// Issue 36 item 3: a node gpucheck could not see into is no verdict, never "healthy".
TEST(ReasonRenderer, BlindIsSaidWhenNothingDrains) {
  EXPECT_EQ(render_reason(report_with({finding("nvml.library_missing", Severity::warn),
                                       finding("cuda.library_missing", Severity::fail),
                                       finding("lib.cudnn_missing", Severity::warn)}),
                          &drains),
            "gpucheck-blind: cannot see the GPUs or the driver: nvml.library_missing, "
            "cuda.library_missing\n");
  // A drain wins: the node is broken whatever else could not be seen.
  EXPECT_EQ(render_reason(report_with({finding("driver.missing", Severity::fail),
                                       finding("gpu.lost_broken", Severity::fail, 1)}),
                          &drains),
            "gpucheck: gpu.lost_broken GPU 1 (GPU-bbbb)\n");
  // Ignored or lowered to info: not blind.
  Finding ignored = finding("driver.missing", Severity::fail);
  ignored.ignored = true;
  EXPECT_EQ(
      render_reason(report_with({ignored, finding("cuda.no_device", Severity::info)}), &drains),
      "");
}

// The blind codes are the catalogue's, and none of them drains (a blind node is no verdict).
TEST(ReasonRenderer, BlindCodesAreCatalogueCodesThatDoNotDrain) {
  for (const std::string_view code : render::k_blind_codes) {
    const FindingSpec* spec = find_finding_spec(code);
    ASSERT_NE(spec, nullptr) << code;
    EXPECT_EQ(spec->drain, Drain::no) << code;
  }
}

TEST(ReasonRenderer, NamesEachDrainingCodeWithItsGpu) {
  const Report report = report_with({finding("fw.cudnn_mismatch", Severity::fail),
                                     finding("gpu.row_broken", Severity::warn, 1),
                                     finding("gpu.ecc_broken", Severity::fail, 0),
                                     finding("driver.module_broken", Severity::fail),
                                     finding("gpu.pcie_broken", Severity::fail, 2),
                                     finding("gpu.lost_broken", Severity::fail, 7)});
  // fail before warn; GPU by serial, else UUID, else bus id; an unknown GPU by index only.
  EXPECT_EQ(render_reason(report, &drains),
            "gpucheck: gpu.ecc_broken GPU 0 (1320221015632), driver.module_broken, gpu.pcie_broken "
            "GPU 2 (0000:3B:00.0), gpu.lost_broken GPU 7, gpu.row_broken GPU 1 (GPU-bbbb)\n");
}

TEST(ReasonRenderer, ThePerGpuResultNamesTheGpuAndRepeatsCountOnce) {
  const Report report = report_with(
      {finding("gpu.ecc_broken", Severity::fail), finding("gpu.ecc_broken", Severity::fail)}, 0);
  EXPECT_EQ(render_reason(report, &drains), "gpucheck: gpu.ecc_broken GPU 0 (1320221015632)\n");
}

TEST(ReasonRenderer, ManyFindingsStopAtTheLimitWithACount) {
  std::vector<Finding> many;
  for (int i = 0; i < 40; ++i) {
    many.push_back(finding(fmt::format("gpu.number_{}_broken", i), Severity::fail, 0));
  }
  const std::string line = render_reason(report_with(many), &drains);
  ASSERT_TRUE(line.ends_with(" more\n")) << line;
  EXPECT_LE(line.size() - 1, k_max_reason_bytes) << line;
  EXPECT_TRUE(line.starts_with("gpucheck: gpu.number_0_broken GPU 0 (1320221015632), ")) << line;
  // Every finding is either named or counted.
  const size_t named = static_cast<size_t>(std::count(line.begin(), line.end(), ','));
  const size_t more = std::stoul(line.substr(line.rfind('+') + 1));
  EXPECT_EQ(named + more, 40U) << line;
}

TEST(ReasonRenderer, BytesFromTheMachineBecomePrintableAscii) {
  Report report = report_with({finding("gpu.ecc_broken", Severity::fail, 0)});
  report.snapshot.gpus[0].serial = std::string("13\n20\x1b[31m\xc3\xa9") + std::string(300, 'x');
  const std::string line = render_reason(report, &drains);
  ASSERT_TRUE(line.ends_with("\n"));
  EXPECT_EQ(line.size() - 1, k_max_reason_bytes) << line;
  for (size_t i = 0; i + 1 < line.size(); ++i) {
    EXPECT_TRUE(line[i] >= ' ' && line[i] <= '~') << "byte " << i << " of " << line;
  }
  EXPECT_TRUE(line.starts_with("gpucheck: gpu.ecc_broken GPU 0 (13?20?[31m??xxx")) << line;
}

} // namespace
} // namespace gpucheck::testing
