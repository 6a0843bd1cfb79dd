// GitHub Actions annotations: one workflow command per problem, escaped as the runner reads them.
#include <gtest/gtest.h>

#include <sstream>

#include "render/github.hpp"
#include "support/text_and_processes.hpp"

namespace gpucheck::render {
namespace {

CheckResult github_result(std::string id, Status status, std::optional<int> gpu,
                          std::vector<Finding> findings) {
  CheckResult r;
  r.check_id = std::move(id);
  r.title = "title of " + r.check_id;
  r.status = status;
  r.summary = "summary of " + r.check_id;
  r.gpu_index = gpu;
  r.findings = std::move(findings);
  return r;
}

Report report_of(std::vector<CheckResult> results) {
  Report report;
  report.results = std::move(results);
  report.summary = summarize(report.results);
  return report;
}

using testing::lines_of;

TEST(GithubRenderer, OneLinePerProblemFindingThenTheVerdict) {
  const Report report = report_of({
      github_result("driver.nvml", Status::pass, std::nullopt,
                    {{"libs.cudnn_sublibraries_ok", Severity::info, "all load", "", std::nullopt}}),
      github_result(
          "gpu.ecc", Status::fail, 3,
          {{"gpu.ecc_uncorrected", Severity::fail, "2 uncorrected errors", "drain the node", 3},
           {"gpu.persistence_off", Severity::warn, "persistence off", "nvidia-smi -pm 1", 3}}),
      github_result("gpu.clocks", Status::warn, 1,
                    {{"gpu.clocks_throttled", Severity::warn, "thermal", "", 1, true}}),
      github_result("cuda.init", Status::error, std::nullopt, {}),
      github_result("gpu.memtest", Status::skip, 0, {}),
  });
  const std::vector<std::string> lines = lines_of(render_github(report));
  ASSERT_EQ(lines.size(), 4u) << render_github(report);
  EXPECT_EQ(lines[0], "::error title=gpu.ecc_uncorrected (gpu.ecc%2C GPU 3)::2 uncorrected "
                      "errors%0Afix: drain the node");
  EXPECT_EQ(lines[1],
            "::warning title=gpu.persistence_off (gpu.ecc%2C GPU 3)::persistence off%0Afix: "
            "nvidia-smi -pm 1");
  // The ignored warning writes nothing; an error without a finding writes its summary.
  EXPECT_EQ(lines[2], "::error title=error (cuda.init)::summary of cuda.init");
  EXPECT_EQ(lines[3], "::notice title=gpucheck::Result: error (1 passed, 1 warning, 1 failed, 1 "
                      "error, 1 skipped)");
}

TEST(GithubRenderer, DataAndPropertiesAreEscaped) {
  EXPECT_EQ(github_escape_data("100% done\r\nnext: a,b"), "100%25 done%0D%0Anext: a,b");
  EXPECT_EQ(github_escape_property("100% done\r\nnext: a,b"), "100%25 done%0D%0Anext%3A a%2Cb");
  EXPECT_EQ(github_escape_data("bad\xff byte"), "bad\\xff byte");
  // A message cannot end the command early or start another one.
  const Report report = report_of({github_result(
      "gpu.ecc", Status::fail, 0,
      {{"gpu.ecc_uncorrected", Severity::fail, "x\n::error title=forged::y", "", 0}})});
  const std::vector<std::string> lines = lines_of(render_github(report));
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], "::error title=gpu.ecc_uncorrected (gpu.ecc%2C GPU 0)::x%0A::error "
                      "title=forged::y");
}

} // namespace
} // namespace gpucheck::render
