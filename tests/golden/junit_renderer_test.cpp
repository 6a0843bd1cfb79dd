// JUnit renderer: structure, counts and escaping, validated with xmllint against the JUnit schema
// Jenkins reads (tests/data/junit.xsd).
#include <gtest/gtest.h>

#include "golden/scenarios.hpp"
#include "render/junit.hpp"
#include "support/external_tool.hpp"
#include "support/fixture_tree.hpp"
#include "support/text_and_processes.hpp"

namespace gpucheck::testing {
namespace {

using render::render_junit;
using render::xml_escape;

std::string schema_path() {
  return std::string(GPUCHECK_TEST_DATA_DIR) + "/data/junit.xsd";
}

/// xmllint's verdict on `xml` against the JUnit schema: exit code and messages.
ToolResult validate(const std::string& xml) {
  if (!tool_on_path("xmllint")) {
    ADD_FAILURE() << "xmllint is not installed (scripts/install-deps.sh installs libxml2-utils)";
    return {};
  }
  FixtureTree dir;
  dir.file("/report.xml", xml);
  return run_tool({"xmllint", "--noout", "--schema", schema_path(), dir.host("/report.xml")});
}

CheckResult junit_result(std::string id, Status status, std::string summary,
                         std::optional<int> gpu = std::nullopt,
                         std::vector<Finding> findings = {}) {
  CheckResult r;
  r.check_id = std::move(id);
  r.title = "title of " + r.check_id;
  r.status = status;
  r.summary = std::move(summary);
  r.gpu_index = gpu;
  r.findings = std::move(findings);
  r.duration = std::chrono::milliseconds(1234);
  return r;
}

Report one_of_each() {
  Report report;
  report.context.tool_version = "0.1.0";
  report.context.generated_at = "2026-11-21T12:00:00Z";
  report.context.mode = "standard";
  report.snapshot.host.hostname = "node-1";
  report.results.push_back(junit_result("driver.kernel_module", Status::pass, "loaded"));
  report.results.push_back(
      junit_result("gpu.ecc", Status::fail, "uncorrected errors", 1,
                   {Finding{"gpu.ecc_note", Severity::info, "ECC on", "", 1},
                    Finding{"gpu.ecc_uncorrected", Severity::fail, "2 uncorrected \"errors\" <now>",
                            "drain & replace", 1}}));
  report.results.push_back(
      junit_result("cuda.init", Status::error, "the probe crashed", std::nullopt,
                   {Finding{"probe.crashed", Severity::error, "child killed by SIGSEGV\x1b[0m",
                            "report a bug"}}));
  report.results.push_back(junit_result("gpu.bandwidth", Status::skip, "--quick: no GPU work", 0));
  report.results.push_back(junit_result(
      "libs.cudnn", Status::warn, "two copies", std::nullopt,
      {Finding{"libs.cudnn_multiple_copies", Severity::warn, "2 copies", "keep one"}}));
  report.summary = summarize(report.results);
  return report;
}

TEST(XmlEscape, EscapesMarkupAndDropsCharactersXmlForbids) {
  EXPECT_EQ(xml_escape("a<b>&\"c'", true), "a&lt;b&gt;&amp;&quot;c&apos;");
  EXPECT_EQ(xml_escape("a<b>&\"c'", false), "a&lt;b&gt;&amp;\"c'");
  EXPECT_EQ(xml_escape("x\ny\tz", true), "x&#10;y&#9;z");
  EXPECT_EQ(xml_escape("x\ny", false), "x\ny");
  EXPECT_EQ(xml_escape("\x1b[0m\x01", false), "\\x1b[0m\\x01");
  // Bytes that are not UTF-8 and the non-characters U+FFFE/U+FFFF stay visible, the XML valid.
  EXPECT_EQ(xml_escape("0\xff\xc3(", true), "0\\xff\\xc3(");
  EXPECT_EQ(xml_escape("caf\xc3\xa9 \xef\xbf\xbe", false), "caf\xc3\xa9 \\uFFFE");
}

TEST(JunitRenderer, OneTestcasePerResultWithOutcomeElements) {
  const std::string xml = render_junit(one_of_each());
  EXPECT_NE(
      xml.find("<testsuite name=\"gpucheck on node-1\" tests=\"5\" failures=\"1\" errors=\"1\" "
               "skipped=\"1\" time=\"6.170\" timestamp=\"2026-11-21T12:00:00Z\" "
               "hostname=\"node-1\">"),
      std::string::npos)
      << xml;
  EXPECT_EQ(count(xml, "<testcase "), 5u);
  // Named by check id and GPU (GitLab and GitHub list testcases by name), grouped by area.
  EXPECT_NE(xml.find("<testcase classname=\"gpu\" name=\"gpu.ecc[GPU 1]\" time=\"1.234\">"),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("<testcase classname=\"driver\" name=\"driver.kernel_module\""),
            std::string::npos);
  EXPECT_EQ(xml.find("name=\"system\""), std::string::npos);
  // The failure names the failing finding, not the info note before it.
  EXPECT_NE(xml.find("<failure message=\"gpu.ecc_uncorrected: 2 uncorrected &quot;errors&quot; "
                     "&lt;now&gt;\" type=\"gpu.ecc_uncorrected\">"),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("  remedy: drain &amp; replace"), std::string::npos) << xml;
  EXPECT_NE(xml.find("<error message=\"probe.crashed: child killed by SIGSEGV\\x1b[0m\" "
                     "type=\"probe.crashed\">"),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("<skipped message=\"--quick: no GPU work\"/>"), std::string::npos) << xml;
  EXPECT_NE(xml.find("<system-out>WARN: this check passed with warnings\ntwo copies\n"
                     "libs.cudnn_multiple_copies (warn): 2 copies\n  remedy: keep one\n"),
            std::string::npos)
      << xml;
  EXPECT_EQ(count(xml, "<failure "), 1u);
  EXPECT_EQ(count(xml, "<error "), 1u);
  // Only the pass and the warning add <system-out>: a failure's text is not repeated there.
  EXPECT_EQ(count(xml, "<system-out>"), 2u) << xml;
  EXPECT_EQ(count(xml, "<skipped "), 1u);
}

TEST(JunitRenderer, IsValidAgainstTheJenkinsSchema) {
  const ToolResult r = validate(render_junit(one_of_each()));
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

TEST(JunitRenderer, TheSchemaRejectsWhatJenkinsWouldReject) {
  // Proof the validation has teeth: a suite without its counts, and an unknown element.
  const ToolResult missing =
      validate("<testsuites><testsuite name=\"x\"><testcase name=\"a\"/></testsuite></testsuites>");
  EXPECT_NE(missing.exit_code, 0) << missing.output;
  EXPECT_NE(missing.output.find("fails to validate"), std::string::npos) << missing.output;
  const ToolResult unknown =
      validate("<testsuites><testsuite name=\"x\" tests=\"1\" failures=\"0\" errors=\"0\">"
               "<testcase name=\"a\"><warning/></testcase></testsuite></testsuites>");
  EXPECT_NE(unknown.exit_code, 0) << unknown.output;
  EXPECT_NE(unknown.output.find("fails to validate"), std::string::npos) << unknown.output;
}

TEST(JunitRenderer, AnEmptyReportIsAValidEmptySuite) {
  Report report;
  const std::string xml = render_junit(report);
  EXPECT_NE(xml.find("tests=\"0\" failures=\"0\" errors=\"0\" skipped=\"0\""), std::string::npos);
  const ToolResult r = validate(xml);
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

class JunitOfRecordedSnapshots : public ::testing::TestWithParam<Scenario> {};

TEST_P(JunitOfRecordedSnapshots, ValidAndCountsMatchTheSummary) {
  const Report& report = GetParam().report;
  const std::string xml = render_junit(report);
  const ToolResult r = validate(xml);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(count(xml, "<testcase "), report.results.size());
  EXPECT_EQ(count(xml, "<failure "), static_cast<size_t>(report.summary.fail));
  EXPECT_EQ(count(xml, "<error "), static_cast<size_t>(report.summary.error));
  EXPECT_EQ(count(xml, "<skipped "), static_cast<size_t>(report.summary.skip));
  EXPECT_NE(xml.find(fmt::format("tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\"",
                                 report.results.size(), report.summary.fail, report.summary.error,
                                 report.summary.skip)),
            std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Reports, JunitOfRecordedSnapshots, ::testing::ValuesIn(golden_scenarios()),
                         [](const ::testing::TestParamInfo<Scenario>& param_info) {
                           return param_info.param.name;
                         });

} // namespace
} // namespace gpucheck::testing
