// Golden tests: fixed reports rendered to text (colour off, on, verbose, quiet), JSON, Markdown
// (plain and redacted), JUnit, Prometheus and GitHub annotations, compared with the files in
// tests/golden/. GPUCHECK_UPDATE_GOLDEN=1 rewrites them (review the diff!).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include "findings/catalog.hpp"
#include "golden/scenarios.hpp"
#include "gpucheck/registry.hpp"
#include "render/github.hpp"
#include "render/json.hpp"
#include "render/junit.hpp"
#include "render/markdown.hpp"
#include "render/prometheus.hpp"
#include "render/redact.hpp"
#include "render/text.hpp"
#include "support/json_schema.hpp"

namespace gpucheck::testing {
namespace {

std::string golden_path(const std::string& file) {
  return std::string(GPUCHECK_TEST_DATA_DIR) + "/golden/" + file;
}

bool updating() {
  const char* value = std::getenv("GPUCHECK_UPDATE_GOLDEN");
  return value != nullptr && std::string(value) == "1";
}

/// "line N: expected ... / actual ..." for the first line that differs.
std::string first_difference(const std::string& expected, const std::string& actual) {
  std::istringstream e(expected);
  std::istringstream a(actual);
  std::string el;
  std::string al;
  for (int line = 1;; ++line) {
    const bool more_e = static_cast<bool>(std::getline(e, el));
    const bool more_a = static_cast<bool>(std::getline(a, al));
    if (!more_e && !more_a) {
      return "only in trailing bytes";
    }
    if (el != al || more_e != more_a) {
      return "line " + std::to_string(line) + ":\n  golden: " + (more_e ? el : "<end>") +
             "\n  actual: " + (more_a ? al : "<end>");
    }
  }
}

void expect_golden(const std::string& file, const std::string& actual) {
  const std::string path = golden_path(file);
  if (updating()) {
    std::ofstream out(path, std::ios::binary);
    out << actual;
    ASSERT_TRUE(out.good()) << "cannot write " << path;
    return;
  }
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in.good()) << "missing golden file " << path
                         << " (run with GPUCHECK_UPDATE_GOLDEN=1 to create it)";
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string expected = buffer.str();
  EXPECT_EQ(expected, actual) << file << " differs at " << first_difference(expected, actual)
                              << "\n(GPUCHECK_UPDATE_GOLDEN=1 rewrites the goldens)";
}

class Golden : public ::testing::TestWithParam<Scenario> {};

} // namespace

/// gtest prints a failing parameter with this: the scenario's name, not its bytes.
void PrintTo(const Scenario& scenario, std::ostream* os) {
  *os << scenario.name;
}

namespace {

TEST_P(Golden, TextWithoutColour) {
  expect_golden(GetParam().name + ".txt",
                render::render_text(GetParam().report, render::TextStyle{}));
}

TEST_P(Golden, TextWithColour) {
  render::TextStyle style;
  style.color = true;
  expect_golden(GetParam().name + ".color.txt", render::render_text(GetParam().report, style));
}

TEST_P(Golden, VerboseText) {
  render::TextStyle style;
  style.verbose = true;
  expect_golden(GetParam().name + ".verbose.txt", render::render_text(GetParam().report, style));
}

TEST_P(Golden, JsonMatchesAndValidatesAgainstThePublishedSchema) {
  const std::string text = render::render_json(GetParam().report);
  expect_golden(GetParam().name + ".json", text);
  const std::vector<std::string> violations = report_schema().validate(nlohmann::json::parse(text));
  EXPECT_TRUE(violations.empty()) << describe(violations);
}

TEST_P(Golden, Markdown) {
  expect_golden(GetParam().name + ".md", render::render_markdown(GetParam().report));
}

TEST_P(Golden, RedactedMarkdown) {
  render::Redactor redactor;
  expect_golden(GetParam().name + ".redacted.md",
                render::render_markdown(redactor.redact(GetParam().report)));
}

TEST_P(Golden, Junit) {
  expect_golden(GetParam().name + ".junit.xml", render::render_junit(GetParam().report));
}

TEST_P(Golden, QuietText) {
  render::TextStyle style;
  style.quiet = true;
  expect_golden(GetParam().name + ".quiet.txt", render::render_text(GetParam().report, style));
}

TEST_P(Golden, Prometheus) {
  // tests/prometheus/check_exposition.py parses these files with prometheus_client too.
  expect_golden(GetParam().name + ".prom",
                render::render_prometheus(
                    GetParam().report, render::PrometheusOptions{std::chrono::milliseconds(1234)}));
}

TEST_P(Golden, GithubAnnotations) {
  expect_golden(GetParam().name + ".github.txt", render::render_github(GetParam().report));
}

INSTANTIATE_TEST_SUITE_P(Reports, Golden, ::testing::ValuesIn(golden_scenarios()),
                         [](const ::testing::TestParamInfo<Scenario>& param_info) {
                           return param_info.param.name;
                         });

// The hand-made results use the checks and codes gpucheck has, so every golden output (and the
// docs that quote them) shows what a real run could (issue 36 item 9: retired codes had stayed).
TEST(GoldenScenarios, UseOnlyRegisteredChecksAndCataloguedCodes) {
  std::set<std::string_view> checks;
  for (const CheckDef& check : all_checks()) {
    checks.insert(check.info.id);
  }
  for (const Scenario& scenario : golden_scenarios()) {
    for (const CheckResult& result : scenario.report.results) {
      EXPECT_TRUE(checks.contains(result.check_id)) << scenario.name << ": " << result.check_id;
      for (const Finding& finding : result.findings) {
        EXPECT_NE(find_finding_spec(finding.code), nullptr)
            << scenario.name << ": " << finding.code;
      }
    }
  }
}

TEST(GoldenScenarios, CoverEveryRecordedSnapshot) {
  std::vector<std::string> covered;
  for (const Scenario& scenario : golden_scenarios()) {
    covered.push_back(scenario.name);
  }
  std::sort(covered.begin(), covered.end());
  EXPECT_EQ(covered, recorded_snapshot_names());
}

} // namespace
} // namespace gpucheck::testing
