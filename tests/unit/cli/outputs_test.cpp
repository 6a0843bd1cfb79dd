// Output plumbing: --output parsing, the plan's rules, redaction per format, atomic writes.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/outputs.hpp"
#include "support/fixture_tree.hpp"
#include "support/text_and_processes.hpp"

namespace gpucheck::testing {
namespace {

using cli::OutputOptions;
using cli::OutputPlan;
using cli::OutputTarget;
using cli::parse_output;
using cli::plan_outputs;
using cli::ReportFormat;

TEST(ParseOutput, FormatPrefixWinsOverTheExtension) {
  EXPECT_EQ(*parse_output("json:out/r.txt"), (OutputTarget{ReportFormat::json, "out/r.txt"}));
  EXPECT_EQ(*parse_output("junit:-"), (OutputTarget{ReportFormat::junit, "-"}));
  EXPECT_EQ(*parse_output("md:ticket"), (OutputTarget{ReportFormat::markdown, "ticket"}));
  // The drain reason has no extension of its own: only its prefix names it.
  EXPECT_EQ(*parse_output("reason:/var/log/gpucheck/reason"),
            (OutputTarget{ReportFormat::reason, "/var/log/gpucheck/reason"}));
  EXPECT_EQ(cli::format_from_string("reason"), ReportFormat::reason);
  EXPECT_EQ(cli::to_string(ReportFormat::reason), "reason");
}

TEST(ParseOutput, ExtensionNamesTheFormatOtherwise) {
  EXPECT_EQ(parse_output("r.json")->format, ReportFormat::json);
  EXPECT_EQ(parse_output("a/b/r.xml")->format, ReportFormat::junit);
  EXPECT_EQ(parse_output("r.md")->format, ReportFormat::markdown);
  EXPECT_EQ(parse_output("r.markdown")->format, ReportFormat::markdown);
  EXPECT_EQ(parse_output("r.txt")->format, ReportFormat::text);
  // "c:" is not a format: the whole spec is the path.
  EXPECT_EQ(*parse_output("c:/r.json"), (OutputTarget{ReportFormat::json, "c:/r.json"}));
}

TEST(ParseOutput, UnknownFormatOrEmptyPathIsAnErrorThatSaysWhatToDo) {
  const Expected<OutputTarget> unknown = parse_output("report.bin");
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.error().message.find("--output json:report.bin"), std::string::npos);
  EXPECT_FALSE(parse_output("json:"));
  EXPECT_FALSE(parse_output(""));
}

TEST(ParseOutput, AnUnknownFormatPrefixIsATypoNotAFileName) {
  const Expected<OutputTarget> typo = parse_output("jsn:x.xml");
  ASSERT_FALSE(typo);
  EXPECT_EQ(typo.error().message, "--output 'jsn:x.xml': 'jsn' is not a format (did you mean "
                                  "'json'?); to write a file of that name, say ./jsn:x.xml");
  EXPECT_EQ(*parse_output("./jsn:x.xml"), (OutputTarget{ReportFormat::junit, "./jsn:x.xml"}));
  EXPECT_EQ(parse_output("zzzz:x.xml").error().message.find("did you mean"), std::string::npos);
}

TEST(PlanOutputs, AFileWhoseNameSaysAnotherFormatIsWarnedAbout) {
  FixtureTree dir;
  OutputOptions options;
  // gpucheck --output report.json --format junit --output json:r.md --output ok.xml
  //          --output prometheus:metrics.txt
  options.outputs = {dir.host("/report.json"), "json:" + dir.host("/r.md"), dir.host("/ok.xml"),
                     "prometheus:" + dir.host("/metrics.txt")};
  options.formats = {{"junit", 0}};
  const Expected<OutputPlan> plan = plan_outputs(options, false);
  ASSERT_TRUE(plan) << plan.error().message;
  ASSERT_EQ(plan->warnings.size(), 2U);
  EXPECT_EQ(plan->warnings[0],
            "'" + dir.host("/report.json") + "' gets the junit report, though its name says json");
  EXPECT_EQ(plan->warnings[1],
            "'" + dir.host("/r.md") + "' gets the json report, though its name says markdown");
}

TEST(PlanOutputs, TerminalGetsTheFormatFilesGetTheirs) {
  FixtureTree dir;
  OutputOptions options;
  options.outputs = {"json:" + dir.host("/r.json"), dir.host("/r.xml")};
  const Expected<OutputPlan> plan = plan_outputs(options, false);
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_EQ(plan->stdout_format, ReportFormat::text);
  ASSERT_EQ(plan->files.size(), 2u);
  EXPECT_EQ(plan->files[0].format, ReportFormat::json);
  EXPECT_EQ(plan->files[1].format, ReportFormat::junit);
}

/// The live run reads the names to redact only when some output is redacted.
TEST(PlanOutputs, RedactsAnyWhenMarkdownTheBundleOrRedactIsWritten) {
  FixtureTree dir;
  const auto redacts_any = [](const OutputOptions& options) {
    const Expected<OutputPlan> plan = plan_outputs(options, false);
    EXPECT_TRUE(plan) << plan.error().message;
    return plan && plan->redacts_any();
  };
  OutputOptions plain;
  plain.outputs = {"json:" + dir.host("/r.json")};
  EXPECT_FALSE(redacts_any(plain));
  OutputOptions markdown;
  markdown.outputs = {"markdown:" + dir.host("/r.md")};
  EXPECT_TRUE(redacts_any(markdown));
  OutputOptions bundle;
  bundle.bundle = dir.host("/b.tar.gz");
  EXPECT_TRUE(redacts_any(bundle));
  bundle.no_redact = true;
  EXPECT_FALSE(redacts_any(bundle));
  OutputOptions all;
  all.redact = true;
  EXPECT_TRUE(redacts_any(all));
}

TEST(PlanOutputs, JsonFlagIsFormatJsonAndContradictionsAreErrors) {
  OutputOptions options;
  options.json = true;
  EXPECT_EQ(plan_outputs(options, false)->stdout_format, ReportFormat::json);
  options.formats = {{"json", std::nullopt}};
  EXPECT_EQ(plan_outputs(options, false)->stdout_format, ReportFormat::json);
  options.formats = {{"junit", std::nullopt}};
  EXPECT_FALSE(plan_outputs(options, false));
  OutputOptions bad;
  bad.formats = {{"html", std::nullopt}};
  EXPECT_FALSE(plan_outputs(bad, false));
  OutputOptions both;
  both.redact = true;
  both.no_redact = true;
  EXPECT_FALSE(plan_outputs(both, false));
}

TEST(PlanOutputs, AFormatRightAfterAnUnprefixedOutputIsThatFilesFormat) {
  FixtureTree dir;
  OutputOptions options;
  // gpucheck --format json --output a.out --format junit --output b.txt --format markdown
  options.outputs = {dir.host("/a.out"), dir.host("/b.txt")};
  options.formats = {{"json", std::nullopt}, {"junit", 0}, {"markdown", 1}};
  const Expected<OutputPlan> plan = plan_outputs(options, false);
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_EQ(plan->stdout_format, ReportFormat::json);
  ASSERT_EQ(plan->files.size(), 2u);
  EXPECT_EQ(plan->files[0], (OutputTarget{ReportFormat::junit, dir.host("/a.out")}));
  EXPECT_EQ(plan->files[1], (OutputTarget{ReportFormat::markdown, dir.host("/b.txt")}));
}

TEST(PlanOutputs, AFormatAfterAPrefixedOutputIsTheTerminals) {
  FixtureTree dir;
  OutputOptions options;
  // gpucheck --output json:r.json --format markdown
  options.outputs = {"json:" + dir.host("/r.json")};
  options.formats = {{"markdown", 0}};
  const Expected<OutputPlan> plan = plan_outputs(options, false);
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_EQ(plan->stdout_format, ReportFormat::markdown);
  EXPECT_EQ(plan->files[0].format, ReportFormat::json);
  // A second format for the terminal is a mistake, not a silent override.
  options.formats = {{"markdown", std::nullopt}, {"text", 0}};
  EXPECT_FALSE(plan_outputs(options, false));
}

TEST(PlanOutputs, ReportCommandWritesMarkdownToStdoutOrOnlyToItsFiles) {
  FixtureTree dir;
  OutputOptions options;
  EXPECT_EQ(plan_outputs(options, true)->stdout_format, ReportFormat::markdown);
  options.outputs = {dir.host("/ticket.md")};
  const Expected<OutputPlan> plan = plan_outputs(options, true);
  ASSERT_TRUE(plan);
  EXPECT_FALSE(plan->stdout_format);
  EXPECT_EQ(plan->files.size(), 1u);
}

TEST(PlanOutputs, DashIsStdoutAndReplacesTheFormat) {
  OutputOptions options;
  options.outputs = {"junit:-"};
  const Expected<OutputPlan> plan = plan_outputs(options, false);
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->stdout_format, ReportFormat::junit);
  EXPECT_TRUE(plan->files.empty());
  options.outputs = {"junit:-", "json:-"};
  EXPECT_FALSE(plan_outputs(options, false));
}

TEST(PlanOutputs, UnwritablePathsAndDuplicatesAreRefusedBeforeTheRun) {
  FixtureTree dir;
  dir.dir("/sub");
  OutputOptions missing_dir;
  missing_dir.outputs = {dir.host("/no/such/dir/r.json")};
  const Expected<OutputPlan> missing = plan_outputs(missing_dir, false);
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("does not exist"), std::string::npos);
  OutputOptions a_directory;
  a_directory.outputs = {"json:" + dir.host("/sub")};
  EXPECT_FALSE(plan_outputs(a_directory, false));
  OutputOptions twice;
  twice.outputs = {dir.host("/r.json"), "json:" + dir.host("/./r.json")};
  EXPECT_FALSE(plan_outputs(twice, false));
  OutputOptions bundle;
  bundle.bundle = dir.host("/b.zip");
  EXPECT_FALSE(plan_outputs(bundle, false));
  bundle.bundle = dir.host("/b.tar.gz");
  EXPECT_TRUE(plan_outputs(bundle, false));
}

TEST(PlanOutputs, ReadOnlyDirectoryIsRefused) {
  if (::geteuid() == 0) {
    GTEST_SKIP() << "root may write into a read-only directory";
  }
  FixtureTree dir;
  dir.dir("/ro");
  std::filesystem::permissions(dir.host("/ro"), std::filesystem::perms::owner_read |
                                                    std::filesystem::perms::owner_exec);
  OutputOptions options;
  options.outputs = {dir.host("/ro/r.json")};
  const Expected<OutputPlan> plan = plan_outputs(options, false);
  std::filesystem::permissions(dir.host("/ro"), std::filesystem::perms::owner_all);
  ASSERT_FALSE(plan);
  EXPECT_NE(plan.error().message.find("not writable"), std::string::npos);
}

// Issue 34: a FIFO nobody reads was refused only when the report was written, after the probes.
// The plan (made before any probe) refuses it; with a reader the plan holds it open.
TEST(PlanOutputs, AFifoWithoutAReaderIsRefusedBeforeTheRun) {
  FixtureTree dir;
  const std::string fifo = dir.host("/pipe");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  OutputOptions options;
  options.outputs = {"json:" + fifo};
  const Expected<OutputPlan> refused = plan_outputs(options, false);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("no process is reading this FIFO"), std::string::npos)
      << refused.error().message;
  const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0);
  EXPECT_TRUE(plan_outputs(options, false));
  ::close(reader);
}

TEST(PlanOutputs, MarkdownAndBundleAreRedactedByDefaultOthersOnRequest) {
  OutputPlan plan;
  EXPECT_TRUE(plan.redacts(ReportFormat::markdown));
  EXPECT_FALSE(plan.redacts(ReportFormat::text));
  EXPECT_FALSE(plan.redacts(ReportFormat::json));
  EXPECT_FALSE(plan.redacts(ReportFormat::junit));
  plan.redact_all = true;
  EXPECT_TRUE(plan.redacts(ReportFormat::json));
  EXPECT_TRUE(plan.redacts(ReportFormat::junit));
  plan.redact_all = false;
  plan.redact_none = true;
  EXPECT_FALSE(plan.redacts(ReportFormat::markdown));
}

TEST(PlanOutputs, LinksBlockDevicesAndSocketsAreRefusedBeforeTheRunDevicesAreNot) {
  FixtureTree dir;
  dir.file("/victim", "kept");
  dir.symlink("/link.json", dir.host("/victim"));
  OutputOptions link;
  link.outputs = {dir.host("/link.json")};
  const Expected<OutputPlan> refused = plan_outputs(link, false);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("symbolic link"), std::string::npos);
  OutputOptions bundle;
  bundle.bundle = dir.host("/b.tar.gz");
  dir.symlink("/b.tar.gz", dir.host("/victim"));
  EXPECT_FALSE(plan_outputs(bundle, false));
  OutputOptions devices;
  devices.outputs = {"json:/dev/null"};
  EXPECT_TRUE(plan_outputs(devices, false));
  EXPECT_EQ(read_file(dir.host("/victim")), "kept");
}

TEST(EpochSeconds, ParsesTheReportClock) {
  EXPECT_EQ(cli::epoch_seconds("2023-11-14T22:13:20Z"), 1700000000);
  EXPECT_EQ(cli::epoch_seconds("yesterday"), 0);
  EXPECT_EQ(cli::epoch_seconds(""), 0);
}

} // namespace
} // namespace gpucheck::testing
