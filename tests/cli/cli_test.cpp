// CLI tests: run the built gpucheck binary. They assert structure, exit codes and schema
// validity, never the ids or codes of the live checks (those change as checks are written).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "cli/run_binary.hpp"
#include "cli/snapshots.hpp"
#include "support/json_schema.hpp"

namespace gpucheck::cli_test {
namespace {

using nlohmann::json;
using testing::report_schema;

constexpr const char* k_epoch_time = "2023-11-14T22:13:20Z"; // SOURCE_DATE_EPOCH=1700000000
const std::regex k_check_id("^[a-z][a-z0-9_]*(\\.[a-z0-9_]+)+$");

std::vector<std::string> snapshot_names() {
  std::vector<std::string> names;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(GPUCHECK_TEST_DATA_DIR) + "/snapshots")) {
    if (entry.path().extension() == ".json") {
      names.push_back(entry.path().stem().string());
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    lines.push_back(line);
  }
  return lines;
}

std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "gpucheck_cli_" + name;
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

json read_json_file(const std::string& path) {
  std::ifstream in(path);
  return json::parse(in);
}

/// The exit code docs/exit-codes.md promises for a report.
int expected_exit(const json& report) {
  return report["summary"]["fail"].get<int>() > 0 || report["summary"]["error"].get<int>() > 0 ? 1
                                                                                               : 0;
}

/// Usage errors: nothing on stdout, one line naming the problem, then the --help hint.
void expect_usage_error(const RunResult& r, const std::string& mentions) {
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.out, "");
  const std::vector<std::string> lines = lines_of(r.err);
  ASSERT_EQ(lines.size(), 2u) << r.err;
  EXPECT_EQ(lines[0].rfind("gpucheck: ", 0), 0u) << lines[0];
  EXPECT_LT(lines[0].size(), 160u) << "a one-line error should fit a terminal: " << lines[0];
  EXPECT_NE(lines[0].find(mentions), std::string::npos) << lines[0];
  EXPECT_EQ(lines[1], "Run 'gpucheck --help' for usage.");
}

json list_checks() {
  const RunResult r = run_gpucheck({"--json", "list"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return json::parse(r.out);
}

TEST(Cli, VersionPrintsNameVersionCommitDataAndKernelImages) {
  const RunResult r = run_gpucheck({"--version"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_TRUE(std::regex_match(
      r.out,
      std::regex("gpucheck [0-9]+\\.[0-9]+\\.[0-9]+\\S* \\(commit ([0-9a-f]{12}|unknown)\\)\n"
                 "compatibility data [0-9]+\\.[0-9]+\\.[0-9]+\n"
                 "kernel images: (CUDA [0-9]+\\.[0-9]+(, CUDA [0-9]+\\.[0-9]+)*|none .*)\n")))
      << r.out;
  EXPECT_EQ(r.err, "");
}

TEST(Cli, HelpGoesToStdoutAndExitsZero) {
  const RunResult r = run_gpucheck({"--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("--from-snapshot"), std::string::npos);
  EXPECT_NE(r.out.find("--json"), std::string::npos);
}

TEST(Cli, UnknownOptionIsAUsageError) {
  expect_usage_error(run_gpucheck({"--no-such-option"}), "--no-such-option");
}

TEST(Cli, BadValuesAreUsageErrors) {
  expect_usage_error(run_gpucheck({"--color", "purple"}), "purple");
  expect_usage_error(run_gpucheck({"--timeout", "-1"}), "--timeout");
  expect_usage_error(run_gpucheck({"--timeout", "soon"}), "'soon'");
  expect_usage_error(run_gpucheck({"--probe-timeout", "0"}), "--probe-timeout");
  expect_usage_error(run_gpucheck({"explain"}), "code");
}

TEST(Cli, ListShowsEveryCheckOnceInTextAndJson) {
  const json checks = list_checks();
  ASSERT_TRUE(checks.is_array());
  ASSERT_FALSE(checks.empty());
  for (const json& check : checks) {
    ASSERT_TRUE(check["id"].is_string()) << check.dump();
    EXPECT_TRUE(std::regex_match(check["id"].get<std::string>(), k_check_id)) << check.dump();
    EXPECT_TRUE(check["title"].is_string() && !check["title"].get<std::string>().empty());
    EXPECT_TRUE(check["description"].is_string());
    EXPECT_TRUE(check["kind"] == "passive" || check["kind"] == "active") << check.dump();
    // The lowest level that runs it: the long level's checks say so (they are absent from quick
    // and standard reports); the other active checks need standard.
    const bool long_level = check["id"] == "gpu.memtest" || check["id"] == "gpu.burn";
    EXPECT_EQ(check["level"], long_level                  ? "long"
                              : check["kind"] == "active" ? "standard"
                                                          : "quick")
        << check.dump();
  }
  const RunResult text = run_gpucheck({"list"});
  EXPECT_EQ(text.exit_code, 0);
  const std::vector<std::string> lines = lines_of(text.out);
  ASSERT_EQ(lines.size(), checks.size()) << text.out;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::regex row("^(\\S+) +(passive|active) +(.+)$");
    std::smatch match;
    ASSERT_TRUE(std::regex_match(lines[i], match, row)) << lines[i];
    EXPECT_EQ(match[1], checks[i]["id"].get<std::string>());
    EXPECT_EQ(match[2], checks[i]["kind"].get<std::string>());
  }
}

TEST(Cli, ExplainKnownAndUnknownCodes) {
  const RunResult all = run_gpucheck({"explain", "all"});
  ASSERT_EQ(all.exit_code, 0) << all.err;
  const std::vector<std::string> lines = lines_of(all.out);
  ASSERT_FALSE(lines.empty());
  const std::string code = lines.front().substr(0, lines.front().find(' '));
  ASSERT_TRUE(std::regex_match(code, k_check_id)) << lines.front();

  const RunResult known = run_gpucheck({"explain", code});
  EXPECT_EQ(known.exit_code, 0) << known.err;
  EXPECT_EQ(known.out.rfind(code + " (", 0), 0u) << known.out;
  EXPECT_NE(known.out.find("Remedy: "), std::string::npos) << known.out;

  const RunResult check = run_gpucheck({"explain", "gpu.ecc"});
  EXPECT_EQ(check.exit_code, 0) << check.err;
  EXPECT_EQ(check.out.rfind("gpu.ecc (check, passive)", 0), 0u) << check.out;
  EXPECT_NE(check.out.find("gpucheck --only gpu.ecc"), std::string::npos) << check.out;

  const RunResult templated = run_gpucheck({"explain", "cuda.init_failed"});
  EXPECT_EQ(templated.exit_code, 0) << templated.err;
  EXPECT_NE(templated.out.find("Message: cuInit returned {0}"), std::string::npos) << templated.out;
  EXPECT_NE(templated.out.find("\nWhere:\n  {0} the CUresult name cuInit returned\n  {1} its "
                               "number\n  {2} the driver's description of it\n"),
            std::string::npos)
      << templated.out;

  // Every placeholder of a template with many is described, in order, and nothing more.
  const RunResult many = run_gpucheck({"explain", "gpu.bandwidth_low"});
  EXPECT_EQ(many.exit_code, 0) << many.err;
  const std::size_t where = many.out.find("\nWhere:\n");
  ASSERT_NE(where, std::string::npos) << many.out;
  const std::vector<std::string> described = lines_of(many.out.substr(where + 8));
  ASSERT_EQ(described.size(), 9u) << many.out;
  for (std::size_t i = 0; i < described.size(); ++i) {
    EXPECT_EQ(described[i].rfind("  {" + std::to_string(i) + "} ", 0), 0u) << described[i];
    EXPECT_GT(described[i].size(), 6u) << described[i];
  }
  EXPECT_EQ(described[0], "  {0} GPU index");

  // A code whose templates take no argument has no such block.
  const RunResult plain = run_gpucheck({"explain", "env.nouveau_loaded"});
  EXPECT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_NE(plain.out.find("Remedy: "), std::string::npos) << plain.out;
  EXPECT_EQ(plain.out.find("Where:"), std::string::npos) << plain.out;
  EXPECT_EQ(plain.out.find("{0}"), std::string::npos) << plain.out;

  const RunResult unknown = run_gpucheck({"explain", "no.such_code"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_EQ(unknown.out, "");
  EXPECT_NE(unknown.err.find("no.such_code"), std::string::npos) << unknown.err;
}

class Replay : public ::testing::TestWithParam<std::string> {};

TEST_P(Replay, JsonReportValidatesAndTheExitCodeFollowsTheVerdict) {
  const std::string file = snapshot_file(GetParam());
  const RunResult r = run_gpucheck({"--from-snapshot", file, "--json"});
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.exit_code << "\n" << r.err;
  const json report = json::parse(r.out);
  const std::vector<std::string> violations = report_schema().validate(report);
  EXPECT_TRUE(violations.empty()) << testing::describe(violations);
  const std::vector<std::string> for_consumers = testing::consumer_report_schema().validate(report);
  EXPECT_TRUE(for_consumers.empty()) << testing::describe(for_consumers);
  EXPECT_EQ(r.exit_code, expected_exit(report));
  EXPECT_EQ(report["context"]["mode"], "replay");
  EXPECT_EQ(report["context"]["generated_at"], k_epoch_time);
  EXPECT_EQ(report["context"]["argv"], json({"--from-snapshot", file, "--json"}));
  EXPECT_EQ(report["snapshot"], read_json_file(file))
      << "the replayed snapshot differs from the file; after a model change, rewrite the recorded "
         "snapshots with GPUCHECK_UPDATE_GOLDEN=1 gpucheck_unit_golden";
  int counted[5] = {0, 0, 0, 0, 0};
  for (const json& result : report["results"]) {
    const std::string status = result["status"];
    for (int i = 0; const char* name : {"pass", "warn", "fail", "skip", "error"}) {
      counted[i++] += status == name ? 1 : 0;
    }
  }
  EXPECT_EQ(report["summary"]["pass"], counted[0]);
  EXPECT_EQ(report["summary"]["warn"], counted[1]);
  EXPECT_EQ(report["summary"]["fail"], counted[2]);
  EXPECT_EQ(report["summary"]["skip"], counted[3]);
  EXPECT_EQ(report["summary"]["error"], counted[4]);
}

TEST_P(Replay, RunsNoGpuWorkOnThisMachine) {
  std::set<std::string> active;
  for (const json& check : list_checks()) {
    if (check["kind"] == "active") {
      active.insert(check["id"].get<std::string>());
    }
  }
  const RunResult r = run_gpucheck({"--from-snapshot", snapshot_file(GetParam()), "--json"});
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.err;
  const json report = json::parse(r.out);
  for (const json& result : report["results"]) {
    if (active.count(result["check_id"].get<std::string>()) != 0) {
      EXPECT_EQ(result["status"], "skip") << result.dump();
    }
  }
}

TEST_P(Replay, TextReportOnStdoutProgressOnStderr) {
  const std::string file = snapshot_file(GetParam());
  const RunResult json_run = run_gpucheck({"--from-snapshot", file, "--json"});
  const RunResult r = run_gpucheck({"--from-snapshot", file});
  EXPECT_EQ(r.exit_code, json_run.exit_code);
  const std::vector<std::string> lines = lines_of(r.out);
  ASSERT_GE(lines.size(), 3u) << r.out;
  EXPECT_EQ(lines.front().rfind("gpucheck ", 0), 0u) << lines.front();
  EXPECT_NE(lines.front().find("replay mode, " + std::string(k_epoch_time)), std::string::npos);
  EXPECT_EQ(lines.back().rfind("Result: ", 0), 0u) << lines.back();
  EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << "no colour when stdout is not a terminal";
  for (const std::string& line : lines_of(r.err)) {
    EXPECT_EQ(r.out.find(line), std::string::npos) << "stderr line also on stdout: " << line;
  }
}

TEST_P(Replay, OutputIsReproducibleUnderSourceDateEpoch) {
  const std::string file = snapshot_file(GetParam());
  json first = json::parse(run_gpucheck({"--from-snapshot", file, "--json"}).out);
  json second = json::parse(run_gpucheck({"--from-snapshot", file, "--json"}).out);
  for (json* report : {&first, &second}) {
    for (json& result : (*report)["results"]) {
      result.erase("duration_ms"); // wall time: the one field allowed to differ
    }
  }
  EXPECT_EQ(first, second);
}

INSTANTIATE_TEST_SUITE_P(RecordedSnapshots, Replay, ::testing::ValuesIn(snapshot_names()),
                         [](const ::testing::TestParamInfo<std::string>& param_info) {
                           return param_info.param;
                         });

TEST(Cli, MissingSnapshotFileIsAUsageErrorNamingIt) {
  const std::string path = temp_path("does_not_exist.json");
  std::filesystem::remove(path);
  const RunResult r = run_gpucheck({"--from-snapshot", path, "--json"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find(path), std::string::npos) << r.err;
}

TEST(Cli, GarbageSnapshotFilesAreUsageErrorsNamingThem) {
  const std::vector<std::pair<std::string, std::string>> files{
      {"garbage.json", "this is not json {"},
      {"array.json", "[1, 2, 3]"},
      {"future.json", R"({"format_version": 999})"},
      {"wrong_type.json", R"({"format_version": 1, "gpus": "many"})"},
      {"empty.json", ""},
  };
  for (const auto& [name, content] : files) {
    const std::string path = temp_path(name);
    write_file(path, content);
    const RunResult r = run_gpucheck({"--from-snapshot", path});
    EXPECT_EQ(r.exit_code, 2) << name;
    EXPECT_EQ(r.out, "") << name;
    EXPECT_NE(r.err.find(path), std::string::npos) << name << ": " << r.err;
  }
  const RunResult directory = run_gpucheck({"--from-snapshot", ::testing::TempDir()});
  EXPECT_EQ(directory.exit_code, 2);
}

TEST(Cli, SnapshotWritesJsonThatReplays) {
  const std::string path = temp_path("live_snapshot.json");
  std::filesystem::remove(path);
  const RunResult written = run_gpucheck({"snapshot", "-o", path});
  ASSERT_EQ(written.exit_code, 0) << written.err;
  EXPECT_EQ(written.out, "");
  const json snapshot = read_json_file(path);
  const std::vector<std::string> violations =
      report_schema().validate(snapshot, "#/$defs/SystemSnapshot");
  EXPECT_TRUE(violations.empty()) << testing::describe(violations);

  const RunResult replayed = run_gpucheck({"--from-snapshot", path, "--json"});
  ASSERT_TRUE(replayed.exit_code == 0 || replayed.exit_code == 1) << replayed.err;
  const json report = json::parse(replayed.out);
  EXPECT_EQ(report["snapshot"], snapshot);
  EXPECT_EQ(replayed.exit_code, expected_exit(report));

  const RunResult to_stdout = run_gpucheck({"snapshot"});
  ASSERT_EQ(to_stdout.exit_code, 0) << to_stdout.err;
  EXPECT_TRUE(
      report_schema().validate(json::parse(to_stdout.out), "#/$defs/SystemSnapshot").empty());
}

std::string area_of(const std::string& id) {
  return id.substr(0, id.find('.'));
}

bool has_prefix(const std::string& id, const std::string& prefix) {
  return id == prefix || id.rfind(prefix + ".", 0) == 0;
}

TEST(Cli, OnlyAndSkipSelectByIdPrefix) {
  const json checks = list_checks();
  ASSERT_FALSE(checks.empty());
  const std::string first_id = checks[0]["id"];
  const std::string area = area_of(first_id);
  const std::string file = snapshot_file("h200_healthy");

  const RunResult only = run_gpucheck({"--from-snapshot", file, "--json", "--only", area});
  ASSERT_TRUE(only.exit_code == 0 || only.exit_code == 1) << only.err;
  const json only_report = json::parse(only.out);
  ASSERT_FALSE(only_report["results"].empty());
  for (const json& result : only_report["results"]) {
    EXPECT_TRUE(has_prefix(result["check_id"], area)) << result["check_id"];
  }

  size_t outside_area = 0;
  for (const json& check : checks) {
    outside_area += has_prefix(check["id"], area) ? 0 : 1;
  }
  const RunResult skip = run_gpucheck({"--from-snapshot", file, "--json", "--skip", area});
  if (outside_area == 0) {
    expect_usage_error(skip, "select no check");
  } else {
    ASSERT_TRUE(skip.exit_code == 0 || skip.exit_code == 1) << skip.err;
    const json skip_report = json::parse(skip.out);
    EXPECT_FALSE(skip_report["results"].empty());
    for (const json& result : skip_report["results"]) {
      EXPECT_FALSE(has_prefix(result["check_id"], area)) << result["check_id"];
    }
  }

  // A prefix matches at a dot boundary only: "driv" does not select "driver.x".
  const std::string partial = area.substr(0, area.size() - 1);
  bool partial_is_an_area = false;
  for (const json& check : checks) {
    partial_is_an_area = partial_is_an_area || has_prefix(check["id"], partial);
  }
  if (!partial.empty() && !partial_is_an_area) {
    expect_usage_error(run_gpucheck({"--from-snapshot", file, "--only", partial}),
                       "--only '" + partial + "' matches no check (did you mean '" + area + "'?)");
  }
  expect_usage_error(run_gpucheck({"--from-snapshot", file, "--only", "no_such_area"}),
                     "--only 'no_such_area' matches no check; 'gpucheck list' shows the ids");
}

TEST(Cli, EverySelectionPatternMatchesACheckAndTyposGetTheNearestId) {
  const std::string file = snapshot_file("degraded_hw");
  // The README's words: "gpu.pcie" is the first word of gpu.pcie_link's last component.
  const RunResult readme =
      run_gpucheck({"--from-snapshot", file, "--json", "--only", "gpu", "--skip", "gpu.pcie"});
  ASSERT_TRUE(readme.exit_code == 0 || readme.exit_code == 1) << readme.err;
  bool has_gpu = false;
  const json readme_report = json::parse(readme.out);
  for (const json& result : readme_report["results"]) {
    EXPECT_NE(result["check_id"], "gpu.pcie_link");
    has_gpu = has_gpu || result["check_id"].get<std::string>().starts_with("gpu.");
  }
  EXPECT_TRUE(has_gpu);
  // An exact id is itself alone: gpu.compute is not gpu.compute_mode.
  const RunResult exact =
      run_gpucheck({"--from-snapshot", file, "--json", "--only", "gpu.compute"});
  ASSERT_TRUE(exact.exit_code == 0 || exact.exit_code == 1) << exact.err;
  const json exact_results = json::parse(exact.out)["results"];
  ASSERT_FALSE(exact_results.empty());
  for (const json& result : exact_results) {
    EXPECT_EQ(result["check_id"], "gpu.compute");
  }
  // Part of a word is no match: "gpu.p" is not gpu.p2p's.
  expect_usage_error(run_gpucheck({"--from-snapshot", file, "--only", "gpu.p"}),
                     "--only 'gpu.p' matches no check");
  // A --skip that matches nothing was accepted silently; now each pattern must match.
  expect_usage_error(run_gpucheck({"--from-snapshot", file, "--skip", "drver"}),
                     "--skip 'drver' matches no check (did you mean 'driver'?)");
  expect_usage_error(run_gpucheck({"--from-snapshot", file, "--only", "gpu.ecc,gpu.eec"}),
                     "--only 'gpu.eec' matches no check (did you mean 'gpu.ecc'?)");
}

TEST(Cli, TyposOfFlagsCommandsCodesAndFormatsGetTheNearestWord) {
  const std::string file = snapshot_file("degraded_hw");
  expect_usage_error(run_gpucheck({"--quik"}), "(did you mean '--quick'?)");
  expect_usage_error(run_gpucheck({"explian", "gpu.ecc"}), "(did you mean 'explain'?)");
  const RunResult code = run_gpucheck({"explain", "gpu.ecc_uncorected"});
  EXPECT_EQ(code.exit_code, 2);
  EXPECT_EQ(code.err, "gpucheck: unknown finding code or check id 'gpu.ecc_uncorected' (did you "
                      "mean 'gpu.ecc_uncorrected'?)\n");
  expect_usage_error(run_gpucheck({"--from-snapshot", file, "--format", "jsno"}),
                     "(did you mean 'json'?)");
  // An unknown FORMAT: prefix is a typo, not part of a file name.
  expect_usage_error(run_gpucheck({"--from-snapshot", file, "--output", "jsn:x.xml"}),
                     "--output 'jsn:x.xml': 'jsn' is not a format (did you mean 'json'?)");
  // Nothing near: no suggestion.
  const RunResult far = run_gpucheck({"--zzzzzzzz"});
  EXPECT_EQ(far.err.find("did you mean"), std::string::npos) << far.err;
}

TEST(Cli, ColourFollowsFlagsAndEnvironment) {
  const std::string file = snapshot_file("degraded_hw");
  struct Case {
    std::vector<std::string> extra_args;
    std::map<std::string, std::string> env;
    bool coloured;
  };
  const Case cases[] = {
      {{}, {}, false}, // stdout is a file, not a terminal
      {{}, {{"CLICOLOR_FORCE", "1"}}, true},
      {{}, {{"CLICOLOR_FORCE", "0"}}, false},
      {{}, {{"CLICOLOR_FORCE", "1"}, {"NO_COLOR", "1"}}, false},
      {{"--color", "always"}, {{"NO_COLOR", "1"}}, true},
      {{"--color=never"}, {{"CLICOLOR_FORCE", "1"}}, false},
      {{"--color", "auto"}, {{"CLICOLOR_FORCE", "1"}}, true},
  };
  for (const Case& c : cases) {
    RunSpec spec;
    spec.args = {"--from-snapshot", file};
    spec.args.insert(spec.args.end(), c.extra_args.begin(), c.extra_args.end());
    spec.env = c.env;
    spec.env["SOURCE_DATE_EPOCH"] = "1700000000";
    const RunResult r = run_gpucheck(spec);
    EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.err;
    const bool coloured = r.out.find("\x1b[") != std::string::npos;
    std::string what;
    for (const auto& [name, value] : c.env) {
      what += name + "=" + value + " ";
    }
    for (const std::string& arg : c.extra_args) {
      what += arg + " ";
    }
    EXPECT_EQ(coloured, c.coloured) << what;
    EXPECT_EQ(r.err.find("\x1b["), std::string::npos) << what;
  }
  // JSON is never coloured.
  RunSpec spec{{"--from-snapshot", file, "--json", "--color", "always"}, {}, std::nullopt};
  EXPECT_EQ(run_gpucheck(spec).out.find('\x1b'), std::string::npos);
}

TEST(Cli, FailingToWriteTheReportIsAnInternalError) {
  RunSpec spec{{"--from-snapshot", snapshot_file("h200_healthy"), "--json"},
               {{"SOURCE_DATE_EPOCH", "1700000000"}},
               "/dev/full"};
  const RunResult r = run_gpucheck(spec);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("cannot write the report to stdout"), std::string::npos) << r.err;
}

// 1e400 in a snapshot or a --matrix file is a usage error naming the path.
TEST(Cli, NumberOverflowInInputFilesIsAUsageErrorNamingThePath) {
  const std::string dir = ::testing::TempDir();
  const std::string snapshot = dir + "/overflow_snapshot.json";
  std::ofstream(snapshot) << "{\"format_version\": 1, \"host\": {\"cpu_count\": 1e400}}";
  RunResult r = run_gpucheck({"--from-snapshot", snapshot});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("overflow_snapshot.json: not valid JSON at $.host.cpu_count"),
            std::string::npos)
      << r.err;
  // The usage error comes alone, with no progress line before it.
  EXPECT_EQ(r.err.rfind("gpucheck: ", 0), 0u) << r.err;
  EXPECT_EQ(r.err.find("replaying"), std::string::npos) << r.err;
  const std::string matrix = dir + "/overflow_matrix.json";
  std::ofstream(matrix) << "{\"matrix_version\": 1e400}";
  r = run_gpucheck({"--matrix", matrix, "--from-snapshot", snapshot_file("h200_healthy")});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("not valid JSON at $.matrix_version"), std::string::npos) << r.err;
  // 200k nested arrays: refused at the depth cap, no crash.
  std::ofstream(snapshot) << std::string(200000, '[') << std::string(200000, ']');
  r = run_gpucheck({"--from-snapshot", snapshot});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("nested deeper than"), std::string::npos) << r.err;
}

// An input without end (/dev/zero) or of a gigabyte was read whole (2.1 GB of
// memory for 1 GB); every JSON input stops at 64 MiB with a usage error naming the file.
TEST(Cli, EndlessInputFilesStopAtTheSizeCap) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--from-snapshot", "/dev/zero"},
        std::vector<std::string>{"--matrix", "/dev/zero", "--from-snapshot",
                                 snapshot_file("h200_healthy")}}) {
    const RunResult r = run_gpucheck(args);
    EXPECT_EQ(r.exit_code, 2) << args[0] << ": " << r.err;
    EXPECT_NE(r.err.find("'/dev/zero' is larger than 64 MiB"), std::string::npos) << r.err;
  }
}

// A matrix integer beyond int's range was truncated silently (2^32 + 570 read as
// branch 570). It is a usage error naming the file and the JSON path (exit 2); the same file with
// the branch as it was is accepted (the healthy twin).
TEST(Cli, AMatrixIntegerOutOfRangeIsAUsageErrorNamingThePath) {
  json matrix =
      json::parse(std::ifstream(std::string(GPUCHECK_SOURCE_DIR) + "/data/compat/matrix.json"));
  const std::string dir = ::testing::TempDir();
  const std::string good = dir + "/matrix_in_range.json";
  std::ofstream(good) << matrix.dump();
  RunResult r = run_gpucheck({"--matrix", good, "--from-snapshot", snapshot_file("h200_healthy")});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  matrix["driver_branches"][1]["branch"] = uint64_t{4294967296} + 570;
  const std::string bad = dir + "/matrix_out_of_range.json";
  std::ofstream(bad) << matrix.dump();
  r = run_gpucheck({"--matrix", bad, "--from-snapshot", snapshot_file("h200_healthy")});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("matrix_out_of_range.json: $.driver_branches[1].branch: 4294967866 is out "
                       "of range"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.out, "");
}

// A --python that names no executable file, and a binary --config, are one-line
// usage errors (exit 2) before anything is probed; the bytes of a binary config are not echoed.
TEST(Cli, MalformedPythonAndBinaryConfigAreOneLineUsageErrors) {
  const std::string dir = ::testing::TempDir() + "/malformed_inputs";
  std::filesystem::create_directories(dir);
  const std::string data_file = dir + "/not_executable";
  std::ofstream(data_file) << "root:x:0:0:root:/root:/bin/bash\n";
  const std::string binary = dir + "/binary.toml";
  std::ofstream(binary, std::ios::binary) << std::string("\x1b[2J\x01\x02\0\xff\xfe key = 1\n", 16);
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--python", dir + "/missing/python3"}, "No such file or directory"},
      {{"--python", dir}, "is a directory"},
      {{"--python", data_file}, "is not an executable file"},
      {{"--config", binary}, "is not a text file"},
      // CLI11 validates no empty value; found by fuzz_config ("fail-on =" in a config).
      {{"--fail-on", ""}, "'' is not a level for --fail-on"},
  };
  for (const auto& [args, expected] : cases) {
    std::vector<std::string> full = args;
    full.push_back("--quick");
    const RunResult r = run_gpucheck(full);
    EXPECT_EQ(r.exit_code, 2) << args[1] << ": " << r.err;
    EXPECT_EQ(r.err.rfind("gpucheck: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find(expected), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("probing"), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
    for (const char c : r.err) {
      EXPECT_TRUE(c == '\n' || static_cast<unsigned char>(c) >= 0x20)
          << "a control byte in: " << r.err;
    }
  }
}

// Issue 36 item 5: a config file's keys mean what the flags mean (`format` was dropped), and a
// bad value it gives names the file and its line; the command line's own value is not blamed on it.
TEST(Cli, ConfigKeysMeanTheFlagsAndItsBadValuesNameFileAndLine) {
  const std::string dir = ::testing::TempDir() + "/config_keys";
  std::filesystem::create_directories(dir);
  const std::string file = snapshot_file("h200_healthy");
  const std::string json_format = dir + "/json.toml";
  std::ofstream(json_format) << "# CI gates\nformat = \"json\"\n";
  const RunResult as_json = run_gpucheck({"--config", json_format, "--from-snapshot", file});
  ASSERT_TRUE(as_json.exit_code == 0 || as_json.exit_code == 1) << as_json.err;
  EXPECT_TRUE(json::accept(as_json.out)) << as_json.out.substr(0, 200);
  // The command line's --format overrides the file's.
  const RunResult overridden =
      run_gpucheck({"--config", json_format, "--from-snapshot", file, "--format", "markdown"});
  EXPECT_FALSE(json::accept(overridden.out));
  EXPECT_NE(overridden.out.find("# "), std::string::npos) << overridden.out.substr(0, 200);

  const std::string bad = dir + "/bad.toml";
  std::ofstream(bad) << "# gates\nrequire = [\"driver>=550\"]\nexpect_gpus = \"eight\"\n";
  expect_usage_error(run_gpucheck({"--config", bad, "--from-snapshot", file}),
                     "config file '" + bad + "', line 3: --expect-gpus: Value eight not in range");
  const RunResult own =
      run_gpucheck({"--config", json_format, "--from-snapshot", file, "--expect-gpus", "eight"});
  EXPECT_EQ(own.exit_code, 2);
  EXPECT_EQ(own.err.find("config file"), std::string::npos) << own.err;
  const std::string bad_json = dir + "/bad.json";
  std::ofstream(bad_json) << R"({"expect_gpus": "eight"})";
  expect_usage_error(run_gpucheck({"--config", bad_json, "--from-snapshot", file}),
                     "config file '" + bad_json + "': --expect-gpus: Value eight");
}

// An executable given with --python that is no interpreter is asked (its name
// says nothing), within the probes' deadline: one that hangs or floods its output is reported as
// failing to answer, and the report is complete; it is never read as "Python 3.x" from the files
// near it.
TEST(Cli, APythonThatHangsOrFloodsIsReportedWithinTheProbeDeadline) {
  const std::string dir = ::testing::TempDir() + "/bad_pythons";
  std::filesystem::create_directories(dir);
  for (const auto& [name, body] : std::vector<std::pair<std::string, std::string>>{
           {"hangs.sh", "exec /bin/sleep 30\n"},
           {"floods.sh",
            "exec /usr/bin/yes AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n"}}) {
    const std::string script = dir + "/" + name;
    std::ofstream(script) << "#!/bin/sh\n" << body;
    std::filesystem::permissions(script, std::filesystem::perms::owner_all);
    const auto start = std::chrono::steady_clock::now();
    const RunResult r = run_gpucheck({.args = {"--json", "--quick", "--only", "fw.environments",
                                               "--probe-timeout", "1", "--python", script},
                                      // Nothing inherited: only the interpreter given is examined
                                      // (a pyenv shim on the caller's PATH answered "Python 3").
                                      .env = {{"PATH", "/nonexistent"}, {"HOME", "/nonexistent"}},
                                      .inherit_env = false});
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_LT(seconds, 10.0) << name;
    ASSERT_EQ(r.exit_code, 0) << name << ": " << r.err;
    const json report = json::parse(r.out);
    bool reported = false;
    for (const json& result : report["results"]) {
      for (const json& finding : result["findings"]) {
        reported = reported || finding["code"] == "fw.interpreter_failed";
      }
      EXPECT_EQ(result["summary"].get<std::string>().find("Python 3"), std::string::npos)
          << result["summary"];
    }
    EXPECT_TRUE(reported) << name << ": " << r.out.substr(0, 2000);
  }
}

// Std::regex overflowed the stack on long names; now linear and capped.
TEST(Cli, HugeNamesAndHostilePatternsNeitherCrashNorHang) {
  const std::string dir = ::testing::TempDir();
  const RunResult long_gpu = run_gpucheck(
      {"matrix", "--driver", "580.95.05", "--gpu", std::string(100 * 1024, 'H') + " H100"});
  EXPECT_TRUE(long_gpu.exit_code == 0 || long_gpu.exit_code == 2) << long_gpu.err;
  std::ifstream in(snapshot_file("h200_healthy"));
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json snapshot = nlohmann::json::parse(text.str());
  // Appended, not `string(n, c) + " H200"`: GCC 12 at -O1 (the ci preset's tests) warns falsely
  // that the latter overflows (-Warray-bounds).
  std::string huge_name(300 * 1024, 'A');
  huge_name += " H200";
  for (auto& gpu : snapshot["gpus"]) {
    gpu["name"] = huge_name;
  }
  const std::string huge = dir + "/huge_name.json";
  std::ofstream(huge) << snapshot.dump();
  const RunResult replay = run_gpucheck({"--from-snapshot", huge, "--json"});
  EXPECT_TRUE(replay.exit_code == 0 || replay.exit_code == 1) << replay.err;
  // A --matrix whose pattern nests too deep is refused when it is read (exit 2).
  std::ifstream matrix_in(std::string(GPUCHECK_SOURCE_DIR) + "/data/compat/matrix.json");
  std::stringstream matrix_text;
  matrix_text << matrix_in.rdbuf();
  nlohmann::json matrix = nlohmann::json::parse(matrix_text.str());
  matrix["gpus"][0]["pattern"] = std::string(5000, '(') + "a" + std::string(5000, ')');
  const std::string nested = dir + "/nested_matrix.json";
  std::ofstream(nested) << matrix.dump();
  const RunResult refused =
      run_gpucheck({"--matrix", nested, "--from-snapshot", snapshot_file("h200_healthy")});
  EXPECT_EQ(refused.exit_code, 2) << refused.err;
  EXPECT_NE(refused.err.find("pattern"), std::string::npos) << refused.err;
  // (a|aa)*c is linear now: a 30-character name no longer takes 12 s.
  matrix["gpus"][0]["pattern"] = "(a|aa)*c";
  const std::string slow = dir + "/slow_matrix.json";
  std::ofstream(slow) << matrix.dump();
  const auto started = std::chrono::steady_clock::now();
  const RunResult fast = run_gpucheck(
      {"--matrix", slow, "matrix", "--driver", "580.95.05", "--gpu", std::string(30, 'a')});
  EXPECT_NE(fast.exit_code, 139) << fast.err;
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count(), 5.0);
}

// List, explain and --help exited 0 when stdout could not be written.
TEST(Cli, ListExplainAndHelpFailWhenStdoutCannotBeWritten) {
  if (::access("/dev/full", W_OK) != 0) {
    GTEST_SKIP() << "/dev/full is not writable here";
  }
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"list"}, {"explain", "all"}, {"--help"}, {"--version"}}) {
    const RunResult r = run_gpucheck(RunSpec{args, {}, "/dev/full"});
    EXPECT_EQ(r.exit_code, 3) << args[0];
    EXPECT_NE(r.err.find("cannot write to stdout"), std::string::npos) << args[0] << r.err;
  }
}

TEST(Cli, HelpStatesTheTimeoutRange) {
  const RunResult r = run_gpucheck({"--help"});
  EXPECT_NE(r.out.find("0.01 to 86400"), std::string::npos) << r.out;
}

// A file-size limit (ulimit -f) makes the report's write fail: an output error with exit 3
// naming the file or stdout, not SIGXFSZ (exit 153) in the middle of the run. Its twin without
// the limit writes the file.
TEST(Cli, AFileSizeLimitIsAnOutputErrorNotASignal) {
  const std::string snapshot = std::string(GPUCHECK_TEST_DATA_DIR) + "/snapshots/h200_healthy.json";
  const std::string out = ::testing::TempDir() + "/fsize-" + std::to_string(::getpid()) + ".json";
  const auto run_limited = [&](bool limit, const std::string& stdout_path) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      if (limit) {
        const rlimit small{4096, 4096};
        ::setrlimit(RLIMIT_FSIZE, &small);
      }
      const int fd = ::open(stdout_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      ::dup2(fd, STDOUT_FILENO);
      const int null = ::open("/dev/null", O_WRONLY);
      ::dup2(null, STDERR_FILENO);
      const std::string binary = cli_test::binary_path();
      ::execl(binary.c_str(), binary.c_str(), "--from-snapshot", snapshot.c_str(), "--json",
              "--output", ("json:" + out).c_str(), nullptr);
      ::_exit(127);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  };
  const std::string stdout_file = out + ".stdout";
  EXPECT_EQ(run_limited(true, stdout_file), 3);
  EXPECT_EQ(run_limited(false, stdout_file), 0);
  EXPECT_GT(std::filesystem::file_size(out), 4096U);
  std::filesystem::remove(out);
  std::filesystem::remove(stdout_file);
}

} // namespace
} // namespace gpucheck::cli_test
