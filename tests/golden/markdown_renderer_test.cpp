// Markdown renderer: escaping, layout, and rendering through cmark-gfm (GitHub's own CommonMark
// implementation, with its table extension) to check that what a ticket shows is what we meant.
#include <gtest/gtest.h>

#include <regex>

#include "golden/scenarios.hpp"
#include "render/markdown.hpp"
#include "support/external_tool.hpp"
#include "support/text_and_processes.hpp"

namespace gpucheck::testing {
namespace {

using render::markdown_code;
using render::markdown_escape;
using render::render_markdown;

/// HTML as GitHub would make it: GFM tables, raw HTML (<details>, <br>) kept as GitHub keeps it.
std::string to_html(const std::string& markdown) {
  if (!tool_on_path("cmark-gfm")) {
    ADD_FAILURE() << "cmark-gfm is not installed (scripts/install-deps.sh installs it)";
    return "";
  }
  const ToolResult r = run_tool({"cmark-gfm", "-e", "table", "--unsafe"}, markdown);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return r.output;
}

/// The first <table>...</table> of the HTML.
std::string first_table(const std::string& html) {
  const size_t start = html.find("<table>");
  const size_t end = html.find("</table>", start);
  return start == std::string::npos || end == std::string::npos ? ""
                                                                : html.substr(start, end - start);
}

/// The HTML's text with tags removed: what a reader sees.
std::string visible_text(const std::string& html) {
  return std::regex_replace(html, std::regex("<[^>]*>"), "");
}

Report tricky_report() {
  Report report;
  report.context.tool_version = "0.1.0";
  report.context.mode = "replay";
  CheckResult r;
  r.check_id = "libs.cudnn";
  r.title = "cuDNN loads | matches";
  r.status = Status::fail;
  r.summary = "a|b *not bold* <script>x</script> `tick` _u_ $x$ [link](y) ~~s~~ # h \\ & "
              "snake_case_name __dunder__ done";
  r.findings.push_back(Finding{"libs.cudnn_missing", Severity::fail,
                               "no cuDNN | found in /opt/a_b/*", "pip install nvidia-cudnn-cu12",
                               std::nullopt});
  report.results.push_back(r);
  CheckResult ok;
  ok.check_id = "driver.kernel_module";
  ok.title = "NVIDIA kernel module";
  ok.status = Status::pass;
  ok.summary = "580.159.04 loaded";
  ok.gpu_index = 3;
  report.results.push_back(ok);
  report.snapshot.environment.variables["LD_LIBRARY_PATH"] = "/a|b:/c`d";
  report.summary = summarize(report.results);
  return report;
}

TEST(MarkdownEscape, EscapesWhatMarkdownOrHtmlWouldInterpret) {
  EXPECT_EQ(markdown_escape("a|b"), "a\\|b");
  EXPECT_EQ(markdown_escape("*x* _y_ `z` <t> [l] ~s~ $m$ #h \\"),
            "\\*x\\* \\_y\\_ \\`z\\` \\<t\\> \\[l\\] \\~s\\~ \\$m\\$ \\#h \\\\");
  EXPECT_EQ(markdown_escape("a & b\nc"), "a &amp; b c");
  EXPECT_EQ(markdown_escape("plain 1.2 (x) - y"), "plain 1.2 (x) - y");
  EXPECT_EQ(markdown_escape("nvidia_uvm x86_64 _lead trail_ a__b"),
            "nvidia_uvm x86_64 \\_lead trail\\_ a\\_\\_b");
}

TEST(MarkdownCode, PicksAFenceLongerThanAnyBacktickRun) {
  EXPECT_EQ(markdown_code("a"), "`a`");
  EXPECT_EQ(markdown_code("a`b"), "``a`b``");
  EXPECT_EQ(markdown_code("`a"), "`` `a ``");
  EXPECT_EQ(markdown_code("a|b", true), "`a\\|b`");
  EXPECT_EQ(markdown_code("a|b"), "`a|b`");
  EXPECT_EQ(markdown_code(""), "");
}

// Issue 36 item 8: the ticket starts with the problems; every result's row (90 on eight GPUs)
// comes after them.
TEST(MarkdownRenderer, ProblemsThenTheTableOfAllResultsThenInventoryInDetails) {
  const std::string md = render_markdown(tricky_report());
  const size_t problems = md.find("### Problems (1)");
  const size_t all = md.find("### All results (");
  const size_t table = md.find("| Check | Subject | Status | Summary |");
  const size_t details = md.find("<details>");
  ASSERT_NE(table, std::string::npos) << md;
  ASSERT_NE(problems, std::string::npos) << md;
  ASSERT_NE(all, std::string::npos) << md;
  ASSERT_NE(details, std::string::npos) << md;
  EXPECT_LT(problems, all);
  EXPECT_LT(all, table);
  EXPECT_LT(table, details);
  EXPECT_NE(md.find("- **Finding:** `libs.cudnn_missing` (fail)"), std::string::npos) << md;
  EXPECT_NE(md.find("  - **Remedy:** pip install nvidia-cudnn-cu12"), std::string::npos) << md;
  EXPECT_EQ(md.find("driver.kernel_module` on GPU"), std::string::npos)
      << "a passing result got a problem section:\n"
      << md;
}

TEST(MarkdownRenderer, RendersWithCmarkGfmExactlyAsWritten) {
  const Report report = tricky_report();
  const std::string html = to_html(render_markdown(report));
  ASSERT_FALSE(html.empty());
  const std::string table = first_table(html);
  // One header row and one row per result; four cells each (a stray pipe would make five).
  EXPECT_EQ(count(table, "<tr>"), report.results.size() + 1) << table;
  EXPECT_EQ(count(table, "<td>"), 4 * report.results.size()) << table;
  // The summary shows character for character: nothing became emphasis, a link or a tag.
  EXPECT_NE(table.find("<td>a|b *not bold* &lt;script&gt;x&lt;/script&gt; `tick` _u_ $x$ "
                       "[link](y) ~~s~~ # h \\ &amp; snake_case_name __dunder__ done</td>"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("<td><code>libs.cudnn</code></td>"), std::string::npos) << table;
  EXPECT_NE(table.find("<td><strong>FAIL</strong></td>"), std::string::npos) << table;
  EXPECT_NE(html.find("<td><code>/a|b:/c`d</code></td>"), std::string::npos) << html;
  EXPECT_EQ(count(html, "<details>"), 1u);
  EXPECT_EQ(count(html, "<summary>"), 1u);
  EXPECT_EQ(count(html, "<script>"), 0u);
  EXPECT_EQ(count(html, "<em>"), 0u) << html;
  EXPECT_EQ(count(html, "<del>"), 0u) << html;
  EXPECT_EQ(count(html, "<a "), 0u) << html;
}

class MarkdownOfRecordedSnapshots : public ::testing::TestWithParam<Scenario> {};

TEST_P(MarkdownOfRecordedSnapshots, RendersTablesDetailsAndNoStrayMarkup) {
  const Report& report = GetParam().report;
  const std::string html = to_html(render_markdown(report));
  ASSERT_FALSE(html.empty());
  const std::string summary = first_table(html);
  EXPECT_EQ(count(summary, "<tr>"), report.results.size() + 1) << summary;
  EXPECT_EQ(count(summary, "<td>"), 4 * report.results.size()) << summary;
  EXPECT_EQ(count(html, "<details>"), 1u);
  EXPECT_EQ(count(html, "</details>"), 1u);
  EXPECT_EQ(count(html, "<summary>Inventory"), 1u);
  // The inventory's tables are inside <details>: GitHub needs the blank line after <summary>.
  const std::string inside = html.substr(html.find("<details>"));
  EXPECT_GE(count(inside, "<table>"), 1u) << inside;
  if (!report.snapshot.gpus.empty()) {
    EXPECT_NE(inside.find("<th>UUID</th>"), std::string::npos);
    EXPECT_EQ(count(inside, "<tr>"), count(inside, "</tr>"));
  }
  const std::string text = visible_text(html);
  for (const char* stray : {"**", "\\|", "|---", "&lt;details", "&lt;br", "``"}) {
    EXPECT_EQ(text.find(stray), std::string::npos) << "stray '" << stray << "' in:\n" << text;
  }
  // One section per failing, erroring or warning result.
  const size_t problems =
      static_cast<size_t>(report.summary.fail + report.summary.warn + report.summary.error);
  EXPECT_EQ(count(html, "<h4>FAIL ") + count(html, "<h4>WARN ") + count(html, "<h4>ERROR "),
            problems);
}

INSTANTIATE_TEST_SUITE_P(Reports, MarkdownOfRecordedSnapshots,
                         ::testing::ValuesIn(golden_scenarios()),
                         [](const ::testing::TestParamInfo<Scenario>& param_info) {
                           return param_info.param.name;
                         });

} // namespace
} // namespace gpucheck::testing
