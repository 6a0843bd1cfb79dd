// CLI tests of the report outputs: --format, --output, `gpucheck report`, --bundle, redaction
// defaults and the exit code 2 for outputs that cannot be written.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "cli/run_binary.hpp"
#include "cli/snapshots.hpp"
#include "support/external_tool.hpp"
#include "support/fixture_tree.hpp"
#include "support/json_schema.hpp"

namespace gpucheck::cli_test {
namespace {

using nlohmann::json;
using testing::FixtureTree;
using testing::run_tool;
using testing::ToolResult;

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

/// The recorded degraded-hardware snapshot (four GPUs with UUIDs and serials) with planted
/// identifiers of this run: a random host name and user, an address and a MAC in free text.
struct Planted {
  std::string path;
  std::string host;
  std::string user;
  std::string ipv4;
  std::string mac;
  std::vector<std::string> uuids;
  std::vector<std::string> serials;
};

Planted planted_snapshot(const FixtureTree& dir) {
  std::mt19937 rng(std::random_device{}());
  const auto n = [&rng](int high) { return std::uniform_int_distribution<int>(0, high)(rng); };
  Planted p;
  p.host = fmt::format("rack{}-node{}", n(90) + 10, n(900) + 100);
  p.user = fmt::format("user{}x", n(90000) + 10000);
  p.ipv4 = fmt::format("172.{}.{}.{}", n(15) + 16, n(255), n(253) + 1);
  p.mac =
      fmt::format("02:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}", n(255), n(255), n(255), n(255), n(255));
  json snapshot = json::parse(read_file(snapshot_file("degraded_hw")));
  snapshot["host"]["hostname"] = p.host;
  snapshot["environment"]["variables"]["LD_LIBRARY_PATH"] = "/home/" + p.user + "/venv/lib";
  snapshot["environment"]["container"]["evidence"] =
      json::array({"eth0 " + p.ipv4 + " ether " + p.mac});
  for (const json& gpu : snapshot["gpus"]) {
    p.uuids.push_back(gpu["uuid"].get<std::string>());
    p.serials.push_back(gpu["serial"].get<std::string>());
  }
  p.path = dir.host("/planted.json");
  std::ofstream(p.path) << snapshot.dump(2);
  return p;
}

std::vector<std::string> identifiers(const Planted& p) {
  std::vector<std::string> all = {p.host, p.user, p.ipv4, p.mac};
  all.insert(all.end(), p.uuids.begin(), p.uuids.end());
  all.insert(all.end(), p.serials.begin(), p.serials.end());
  return all;
}

void expect_redacted(const std::string& text, const Planted& p, const std::string& what) {
  for (const std::string& value : identifiers(p)) {
    EXPECT_EQ(text.find(value), std::string::npos) << value << " survives in " << what;
  }
}

// Issue 34, item 5: escape sequences in outside text (a GPU name holding a cursor move and an
// OSC 52 clipboard write, a variable's value holding a window title) reach no terminal: the
// text, Markdown and reason outputs show them as escapes; JSON keeps the value, escaped as JSON
// escapes it.
TEST(ReportOutputs, EscapeSequencesFromOutsideNeverReachTheTerminal) {
  FixtureTree dir;
  json snapshot = json::parse(read_file(snapshot_file("degraded_hw")));
  const std::string name = "NVIDIA H100\r\x1b[1A\x1b[2K\x1b]52;c;cm0gLXJmIH4=\x07";
  snapshot["gpus"][0]["name"] = name;
  snapshot["environment"]["variables"]["CUDA_VISIBLE_DEVICES"] = "\x1b]0;TITLE\x07\x1b[2J0";
  const std::string path = dir.host("/escapes.json");
  std::ofstream(path) << snapshot.dump(2);
  const auto raw_controls = [](const std::string& text) {
    return text.find_first_of(std::string("\x1b\x07\r", 3)) != std::string::npos;
  };
  const RunResult text = run_gpucheck({"--from-snapshot", path, "-v", "--color", "never"});
  EXPECT_FALSE(raw_controls(text.out)) << text.out;
  EXPECT_NE(text.out.find("\\x1b[2K"), std::string::npos) << text.out;
  const RunResult markdown = run_gpucheck({"report", "--from-snapshot", path, "--no-redact"});
  EXPECT_FALSE(raw_controls(markdown.out)) << markdown.out;
  const RunResult reason = run_gpucheck({"--from-snapshot", path, "--format", "reason"});
  EXPECT_FALSE(raw_controls(reason.out)) << reason.out;
  const RunResult as_json = run_gpucheck({"--from-snapshot", path, "--json"});
  EXPECT_EQ(json::parse(as_json.out)["snapshot"]["gpus"][0]["name"], name);
}

TEST(ReportOutputs, OneRunWritesTextToTheTerminalAndJsonAndJunitToFiles) {
  FixtureTree dir;
  const RunResult r = run_gpucheck({"--from-snapshot", snapshot_file("nvml_mismatch"), "--output",
                                    "json:" + dir.host("/r.json"), "--output", dir.host("/r.xml")});
  EXPECT_EQ(r.exit_code, 1) << r.err; // the mismatch fails: outputs never change the exit code
  EXPECT_NE(r.out.find("Result: FAIL"), std::string::npos) << r.out;
  const json report = json::parse(read_file(dir.host("/r.json")));
  EXPECT_EQ(testing::report_schema().validate(report), std::vector<std::string>{});
  const ToolResult valid =
      run_tool({"xmllint", "--noout", "--schema",
                std::string(GPUCHECK_TEST_DATA_DIR) + "/data/junit.xsd", dir.host("/r.xml")});
  EXPECT_EQ(valid.exit_code, 0) << valid.output;
  const std::string xml = read_file(dir.host("/r.xml"));
  EXPECT_NE(xml.find(fmt::format("failures=\"{}\"", report["summary"]["fail"].get<int>())),
            std::string::npos);
  // Not redacted unless asked: the CI artifacts keep the machine's name.
  EXPECT_NE(xml.find("train-a100-12"), std::string::npos);
}

TEST(ReportOutputs, OutputFormatPairsAsTheIssueWritesThem) {
  FixtureTree dir;
  // --output FILE --format F, twice: the files get those formats, the terminal stays text.
  const RunResult r = run_gpucheck({"--from-snapshot", snapshot_file("h200_healthy"), "--output",
                                    dir.host("/report.out"), "--format", "json", "--output",
                                    dir.host("/report.junit"), "--format", "junit"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("Result: PASS"), std::string::npos) << r.out;
  EXPECT_EQ(json::parse(read_file(dir.host("/report.out")))["summary"]["overall"], "pass");
  EXPECT_EQ(read_file(dir.host("/report.junit")).rfind("<?xml", 0), 0u);
}

/// A JSON report without what differs from run to run: the command line and each check's time.
json comparable(const std::string& text) {
  json report = json::parse(text);
  report["context"].erase("argv");
  for (json& result : report["results"]) {
    result["duration_ms"] = 0;
  }
  return report;
}

TEST(ReportOutputs, JsonFlagAndFormatJsonAreTheSame) {
  const RunResult flag = run_gpucheck({"--from-snapshot", snapshot_file("h200_healthy"), "--json"});
  const RunResult format =
      run_gpucheck({"--from-snapshot", snapshot_file("h200_healthy"), "--format", "json"});
  EXPECT_EQ(flag.exit_code, format.exit_code);
  EXPECT_EQ(format.err, "");
  // The same report but for the command line and the time each check took.
  EXPECT_EQ(comparable(flag.out), comparable(format.out));
}

TEST(ReportOutputs, JsonCompactIsTheSameReportOnOneLine) {
  const RunResult pretty =
      run_gpucheck({"--from-snapshot", snapshot_file("h100x8_healthy"), "--json"});
  const RunResult compact = run_gpucheck(
      {"--from-snapshot", snapshot_file("h100x8_healthy"), "--json", "--json-compact"});
  EXPECT_EQ(compact.exit_code, pretty.exit_code);
  ASSERT_FALSE(compact.out.empty());
  // One line: a log collector takes it as one event.
  EXPECT_EQ(compact.out.find('\n'), compact.out.size() - 1);
  EXPECT_GT(pretty.out.size(), compact.out.size());
  EXPECT_EQ(comparable(compact.out), comparable(pretty.out));
  // Files too.
  FixtureTree dir;
  const std::string file = dir.host("/r.json");
  const RunResult to_file = run_gpucheck({"--from-snapshot", snapshot_file("h200_healthy"),
                                          "--json-compact", "--output", "json:" + file});
  EXPECT_EQ(to_file.exit_code, 0) << to_file.err;
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  EXPECT_FALSE(line.empty());
  EXPECT_TRUE(json::accept(line));
}

TEST(ReportOutputs, ReportCommandWritesRedactedMarkdown) {
  FixtureTree dir;
  const Planted p = planted_snapshot(dir);
  const RunResult r = run_gpucheck({"report", "--from-snapshot", p.path});
  EXPECT_EQ(r.exit_code, 1) << r.err; // degraded hardware fails
  EXPECT_EQ(r.out.rfind("## gpucheck report: FAIL\n", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("<details>"), std::string::npos);
  EXPECT_NE(r.out.find("GPU-0"), std::string::npos);
  expect_redacted(r.out, p, "gpucheck report");

  const RunResult plain = run_gpucheck({"report", "--from-snapshot", p.path, "--no-redact"});
  EXPECT_NE(plain.out.find(p.host), std::string::npos);
  EXPECT_NE(plain.out.find(p.uuids[0]), std::string::npos);
}

TEST(ReportOutputs, ReportCommandWithOutputWritesOnlyTheFile) {
  FixtureTree dir;
  const Planted p = planted_snapshot(dir);
  const RunResult r =
      run_gpucheck({"report", "--from-snapshot", p.path, "--output", dir.host("/ticket.md")});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.out, "");
  const std::string md = read_file(dir.host("/ticket.md"));
  EXPECT_EQ(md.rfind("## gpucheck report", 0), 0u) << md;
  expect_redacted(md, p, "ticket.md");
}

TEST(ReportOutputs, RedactAppliesToEveryFormat) {
  FixtureTree dir;
  const Planted p = planted_snapshot(dir);
  const RunResult r = run_gpucheck(
      {"--from-snapshot", p.path, "--redact", "--output", "json:" + dir.host("/r.json"), "--output",
       "junit:" + dir.host("/r.xml"), "--output", "text:" + dir.host("/r.txt")});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  expect_redacted(r.out, p, "stdout");
  for (const char* file : {"/r.json", "/r.xml", "/r.txt"}) {
    expect_redacted(read_file(dir.host(file)), p, file);
  }
  // A redacted report is still a valid report.
  const std::vector<std::string> violations =
      testing::report_schema().validate(json::parse(read_file(dir.host("/r.json"))));
  EXPECT_TRUE(violations.empty()) << testing::describe(violations);
  // Without --redact the terminal text is the machine's own.
  const RunResult plain = run_gpucheck({"--from-snapshot", p.path, "-v"});
  EXPECT_NE(plain.out.find(p.host), std::string::npos);
}

TEST(ReportOutputs, BundleHoldsEveryFormatAndIsRedacted) {
  FixtureTree dir;
  const Planted p = planted_snapshot(dir);
  const RunResult r =
      run_gpucheck({"--from-snapshot", p.path, "--bundle", dir.host("/support.tar.gz")});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  dir.dir("/x");
  const ToolResult extract =
      run_tool({"tar", "-xzf", dir.host("/support.tar.gz"), "-C", dir.host("/x")});
  ASSERT_EQ(extract.exit_code, 0) << extract.output;
  for (const char* member :
       {"README.txt", "report.txt", "report.json", "report.md", "report.junit.xml", "report.prom",
        "report.github.txt", "snapshot.json", "sources/not-collected.txt"}) {
    const std::string text = read_file(dir.host(std::string("/x/gpucheck-bundle/") + member));
    EXPECT_FALSE(text.empty()) << member;
    expect_redacted(text, p, member);
  }
}

TEST(ReportOutputs, LiveBundleCarriesTheRawSources) {
  FixtureTree dir;
  const RunResult r = run_gpucheck({"--quick", "--bundle", dir.host("/live.tar.gz")});
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.err;
  const ToolResult listing = run_tool({"tar", "-tzf", dir.host("/live.tar.gz")});
  ASSERT_EQ(listing.exit_code, 0) << listing.output;
  for (const char* member :
       {"gpucheck-bundle/sources/proc-driver-nvidia-version.txt",
        "gpucheck-bundle/sources/dmesg-nvidia.txt", "gpucheck-bundle/sources/ldconfig-nvidia.txt",
        "gpucheck-bundle/sources/nvidia-smi-q.txt", "gpucheck-bundle/sources/lspci-vvv.txt"}) {
    EXPECT_NE(listing.output.find(member), std::string::npos) << listing.output;
  }
}

// The bundle is compressed by zlib (it was stored blocks, 98 KB where gzip -9
// made 12 KB), and gzip, tar and Python's tarfile read it.
TEST(ReportOutputs, ARecordedNodesBundleIsCompressedAndReadByGzipTarAndPython) {
  FixtureTree dir;
  const RunResult r = run_gpucheck(
      {"--from-snapshot", snapshot_file("h100x8_healthy"), "--bundle", dir.host("/b.tar.gz")});
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.err;
  const std::string gz = read_file(dir.host("/b.tar.gz"));
  EXPECT_EQ(run_tool({"gzip", "-t", dir.host("/b.tar.gz")}).exit_code, 0);
  const ToolResult tar = run_tool({"gzip", "-dc", dir.host("/b.tar.gz")});
  ASSERT_EQ(tar.exit_code, 0) << tar.output;
  // About 1 to 9 here (gzip -9 made 12 KB of 98 KB); the stored blocks of before were larger
  // than the tar.
  EXPECT_GT(tar.output.size(), 5 * gz.size()) << gz.size() << " bytes of " << tar.output.size();
  const ToolResult listing = run_tool({"tar", "-tzf", dir.host("/b.tar.gz")});
  ASSERT_EQ(listing.exit_code, 0) << listing.output;
  EXPECT_NE(listing.output.find("gpucheck-bundle/report.json\n"), std::string::npos);
  const ToolResult python =
      run_tool({"python3", "-c",
                "import json, sys, tarfile\n"
                "with tarfile.open(sys.argv[1], 'r:gz') as t:\n"
                "    r = json.load(t.extractfile('gpucheck-bundle/report.json'))\n"
                "    print(len(t.getnames()), len(r['snapshot']['gpus']))\n",
                dir.host("/b.tar.gz")});
  ASSERT_EQ(python.exit_code, 0) << python.output;
  EXPECT_EQ(python.output, "9 8\n"); // README, six report formats, the snapshot, a note; 8 GPUs
}

/// Usage errors: exit 2, nothing on stdout, the problem named on stderr.
void expect_output_error(const RunResult& r, const std::string& mentions) {
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err.rfind("gpucheck: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find(mentions), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("probing"), std::string::npos) << "refused only after the run: " << r.err;
}

// A user named like the report's vocabulary (a status, a check-id part) made
// `report` and `--bundle` exit 3 and mangled check ids. Live runs as such users give the same
// exit code and every check id of a run by an ordinary user, in the Markdown and the bundle.
TEST(ReportOutputs, UsersNamedLikeTheReportsWordsNeitherBreakNorMangleIt) {
  std::vector<std::string> ids;
  for (const json& check : json::parse(run_gpucheck({"--json", "list"}).out)) {
    ids.push_back(check["id"].get<std::string>());
  }
  const auto run_as = [](const std::string& user, const std::vector<std::string>& args) {
    return run_gpucheck({.args = args, .env = {{"USER", user}, {"LOGNAME", user}}});
  };
  const RunResult baseline = run_as("ordinaryuser", {"report", "--quick"});
  ASSERT_TRUE(baseline.exit_code == 0 || baseline.exit_code == 1) << baseline.err;
  std::vector<std::string> shown;
  for (const std::string& id : ids) {
    if (baseline.out.find(id) != std::string::npos) {
      shown.push_back(id);
    }
  }
  ASSERT_FALSE(shown.empty()) << baseline.out;
  for (const std::string user : {"pass", "driver", "warn", "error", "ecc", "nvml"}) {
    const RunResult r = run_as(user, {"report", "--quick"});
    EXPECT_EQ(r.exit_code, baseline.exit_code) << user << ": " << r.err;
    for (const std::string& id : shown) {
      EXPECT_NE(r.out.find(id), std::string::npos) << user << " mangled " << id;
    }
    FixtureTree dir;
    const RunResult bundle = run_as(user, {"--quick", "--bundle", dir.host("/b.tar.gz")});
    EXPECT_EQ(bundle.exit_code, baseline.exit_code) << user << ": " << bundle.err;
  }
}

TEST(ReportOutputs, UnwritableOutputsAreUsageErrorsBeforeTheRun) {
  FixtureTree dir;
  const std::string snapshot = snapshot_file("h200_healthy");
  const std::string missing = dir.host("/no/such/dir/r.json");
  expect_output_error(run_gpucheck({"--from-snapshot", snapshot, "--output", missing}), missing);
  expect_output_error(run_gpucheck({"--from-snapshot", snapshot, "--output", "json:" + dir.root()}),
                      "is a directory");
  expect_output_error(
      run_gpucheck({"--from-snapshot", snapshot, "--bundle", dir.host("/no/b.tar.gz")}),
      "does not exist");
  expect_output_error(run_gpucheck({"--from-snapshot", snapshot, "--output", "r.bin"}),
                      "json:r.bin");
  expect_output_error(run_gpucheck({"--from-snapshot", snapshot, "--bundle", "b.zip"}), ".tar.gz");
  expect_output_error(run_gpucheck({"--from-snapshot", snapshot, "--json", "--format", "junit"}),
                      "contradict");
  expect_output_error(run_gpucheck({"--from-snapshot", snapshot, "--format", "html"}), "html");
  expect_output_error(run_gpucheck({"--from-snapshot", snapshot, "--redact", "--no-redact"}),
                      "contradict");
  if (::geteuid() != 0) {
    dir.dir("/ro");
    std::filesystem::permissions(dir.host("/ro"), std::filesystem::perms::owner_read |
                                                      std::filesystem::perms::owner_exec);
    expect_output_error(
        run_gpucheck({"--from-snapshot", snapshot, "--output", dir.host("/ro/r.json")}),
        "not writable");
    std::filesystem::permissions(dir.host("/ro"), std::filesystem::perms::owner_all);
  }
}

TEST(ReportOutputs, OutputToDashReplacesTheTerminalFormat) {
  const RunResult r =
      run_gpucheck({"--from-snapshot", snapshot_file("h200_healthy"), "--output", "junit:-"});
  EXPECT_EQ(r.out.rfind("<?xml", 0), 0u) << r.out;
}

// Special files are written into, never replaced; links are refused.
TEST(ReportOutputs, DevNullAndDevStdoutAreWrittenIntoNotReplaced) {
  const std::string snapshot = snapshot_file("h200_healthy");
  RunResult r =
      run_gpucheck({"--from-snapshot", snapshot, "--quick", "--output", "json:/dev/null"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  struct stat info {};
  ASSERT_EQ(::lstat("/dev/null", &info), 0);
  EXPECT_TRUE(S_ISCHR(info.st_mode));
  // /dev/stdout is the run's stdout, whatever that is (here a capture file, which a rename
  // would have replaced): the JSON lands there, before the terminal's text report.
  r = run_gpucheck({"--from-snapshot", snapshot, "--output", "json:/dev/stdout"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const size_t brace = r.out.find('{');
  ASSERT_NE(brace, std::string::npos) << r.out;
  EXPECT_FALSE(json::parse(r.out.substr(brace, r.out.rfind('}') - brace + 1), nullptr, false)
                   .is_discarded());
}

TEST(ReportOutputs, DevFullIsAWriteFailureExit3AndStdoutStillGetsTheReport) {
  if (::access("/dev/full", W_OK) != 0) {
    GTEST_SKIP() << "/dev/full is not writable here";
  }
  const RunResult r = run_gpucheck(
      {"--from-snapshot", snapshot_file("h200_healthy"), "--output", "json:/dev/full"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("cannot write '/dev/full': No space left"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("NVIDIA H200"), std::string::npos) << "the terminal report is still written";
  const RunResult snapshot = run_gpucheck(
      {"--from-snapshot", snapshot_file("h200_healthy"), "snapshot", "-o", "/dev/full"});
  EXPECT_EQ(snapshot.exit_code, 3) << snapshot.err;
  EXPECT_NE(snapshot.err.find("No space left"), std::string::npos) << snapshot.err;
}

TEST(ReportOutputs, LinksAreRefusedBeforeTheRunAndLeftAsTheyAre) {
  FixtureTree dir;
  dir.file("/victim", "root-only data");
  const std::string snapshot = snapshot_file("h200_healthy");
  dir.symlink("/r.json", dir.host("/victim"));
  expect_output_error(run_gpucheck({"--from-snapshot", snapshot, "--output", dir.host("/r.json")}),
                      "symbolic link");
  dir.symlink("/b.tar.gz", dir.host("/victim"));
  expect_output_error(
      run_gpucheck({"--from-snapshot", snapshot, "--bundle", dir.host("/b.tar.gz")}),
      "symbolic link");
  dir.symlink("/dangling.json", dir.host("/would-be-created"));
  expect_output_error(
      run_gpucheck({"--from-snapshot", snapshot, "--output", dir.host("/dangling.json")}),
      "symbolic link to nothing");
  const RunResult r =
      run_gpucheck({"--from-snapshot", snapshot, "snapshot", "-o", dir.host("/r.json")});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("symbolic link"), std::string::npos) << r.err;
  EXPECT_EQ(read_file(dir.host("/victim")), "root-only data");
  EXPECT_FALSE(std::filesystem::exists(dir.host("/would-be-created")));
  EXPECT_TRUE(std::filesystem::is_symlink(dir.host("/r.json")));
}

// A full disk while writing a regular file (here the file-size limit, which fails
// write() as a full disk does) exits 3 naming the file, as docs/exit-codes.md says, and leaves
// the old file as it was and no temporary file: `snapshot -o` left a truncated file.
TEST(ReportOutputs, AFullDiskExits3AndLeavesTheOldFileAndNoTemporaryFile) {
  if (!testing::tool_on_path("sh")) {
    GTEST_SKIP() << "no sh to set the file-size limit";
  }
  FixtureTree dir;
  dir.file("/s.json", "old snapshot");
  dir.file("/r.json", "old report");
  // 1 block (512 or 1024 bytes): smaller than any snapshot or report; SIGXFSZ ignored, so the
  // write fails with EFBIG instead of killing gpucheck.
  const std::string limited = "ulimit -f 1 && trap '' XFSZ && exec \"$@\"";
  const std::string snapshot = snapshot_file("h200_healthy");
  ToolResult r = run_tool({"sh", "-c", limited, "sh", binary_path(), "--from-snapshot", snapshot,
                           "snapshot", "-o", dir.host("/s.json")});
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_NE(r.output.find("s.json"), std::string::npos) << r.output;
  r = run_tool({"sh", "-c", limited, "sh", binary_path(), "--from-snapshot", snapshot, "--output",
                "json:" + dir.host("/r.json")});
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_NE(r.output.find("r.json"), std::string::npos) << r.output;
  EXPECT_EQ(read_file(dir.host("/s.json")), "old snapshot");
  EXPECT_EQ(read_file(dir.host("/r.json")), "old report");
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir.root())) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"r.json", "s.json"}));
  // The healthy twin: without the limit both are written.
  r = run_tool({binary_path(), "--from-snapshot", snapshot, "snapshot", "-o", dir.host("/s.json")});
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_FALSE(json::parse(read_file(dir.host("/s.json")), nullptr, false).is_discarded());
}

TEST(ReportOutputs, SnapshotOutputIsWrittenAtomically) {
  FixtureTree dir;
  const std::string path = dir.host("/s.json");
  const RunResult r =
      run_gpucheck({"--from-snapshot", snapshot_file("h200_healthy"), "snapshot", "-o", path});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(json::parse(read_file(path), nullptr, false).is_discarded());
  size_t entries = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir.root())) {
    ++entries;
  }
  EXPECT_EQ(entries, 1u);
}

// Bytes that are not UTF-8 in an environment value, a library path and sysfs
// text leave every format valid, the bytes visible as "\xNN".
TEST(ReportOutputs, NonUtf8BytesAnywhereStillGiveValidReportsInEveryFormat) {
  FixtureTree dir;
  FixtureTree root;
  root.file("/proc/driver/nvidia/version",
            "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.95.05  Release Build  "
            "(builder@h\xff\xfe)\nGCC version:  gcc \xc3\x28\n");
  root.file("/etc/os-release", "PRETTY_NAME=\"Linux \xff\x01\"\n");
  const std::map<std::string, std::string> env{{"CUDA_VISIBLE_DEVICES", "0\xff"},
                                               {"LD_LIBRARY_PATH", "/opt/\xfe\xfd/lib"},
                                               {"GPUCHECK_SYSROOT", root.root()},
                                               {"SOURCE_DATE_EPOCH", "1700000000"}};
  const auto run = [&](std::vector<std::string> args) {
    return run_gpucheck(RunSpec{std::move(args), env, std::nullopt});
  };
  const RunResult as_json = run({"--quick", "--json"});
  EXPECT_NE(as_json.exit_code, 3) << as_json.err;
  const json report = json::parse(as_json.out, nullptr, false);
  ASSERT_FALSE(report.is_discarded()) << as_json.err;
  EXPECT_EQ(report["snapshot"]["environment"]["variables"]["CUDA_VISIBLE_DEVICES"], "0\\xff");
  EXPECT_EQ(testing::report_schema().validate(report), std::vector<std::string>{});

  const RunResult as_junit = run({"--quick", "--format", "junit"});
  EXPECT_NE(as_junit.exit_code, 3) << as_junit.err;
  std::ofstream(dir.host("/stdout.xml")) << as_junit.out;
  const std::string xsd = std::string(GPUCHECK_TEST_DATA_DIR) + "/data/junit.xsd";
  ToolResult valid = run_tool({"xmllint", "--noout", "--schema", xsd, dir.host("/stdout.xml")});
  EXPECT_EQ(valid.exit_code, 0) << valid.output;

  const RunResult files =
      run({"--quick", "--output", dir.host("/r.json"), "--output", dir.host("/r.xml"), "--output",
           dir.host("/r.md"), "--bundle", dir.host("/b.tar.gz")});
  EXPECT_NE(files.exit_code, 3) << files.err;
  EXPECT_FALSE(json::parse(read_file(dir.host("/r.json")), nullptr, false).is_discarded());
  valid = run_tool({"xmllint", "--noout", "--schema", xsd, dir.host("/r.xml")});
  EXPECT_EQ(valid.exit_code, 0) << valid.output;
  EXPECT_TRUE(std::filesystem::exists(dir.host("/r.md")));
  dir.dir("/x");
  EXPECT_EQ(run_tool({"tar", "-xzf", dir.host("/b.tar.gz"), "-C", dir.host("/x")}).exit_code, 0);

  const RunResult snapshot = run({"snapshot", "-o", dir.host("/s.json")});
  EXPECT_EQ(snapshot.exit_code, 0) << snapshot.err;
  const json saved = json::parse(read_file(dir.host("/s.json")), nullptr, false);
  ASSERT_FALSE(saved.is_discarded());
  // The saved snapshot replays.
  const RunResult replay = run_gpucheck({"--from-snapshot", dir.host("/s.json"), "--json"});
  EXPECT_NE(replay.exit_code, 3) << replay.err;
  EXPECT_NE(replay.exit_code, 2) << replay.err;
}

} // namespace
} // namespace gpucheck::cli_test
