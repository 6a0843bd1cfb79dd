// CI gates on the real binary: replays of the recorded snapshots with each gate passing and
// failing, the exit code following the gates, config files, and malformed gates as usage errors.
// Expectations are read from the snapshot files and from a run without gates, never hard-coded.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "cli/run_binary.hpp"
#include "cli/snapshots.hpp"
#include "support/json_schema.hpp"

namespace gpucheck::cli_test {
namespace {

using nlohmann::json;

json snapshot_of(const std::string& name) {
  std::ifstream in(snapshot_file(name));
  return json::parse(in);
}

json replay(const std::string& name, std::vector<std::string> extra, int& exit_code) {
  std::vector<std::string> args = {"--from-snapshot", snapshot_file(name), "--json"};
  args.insert(args.end(), extra.begin(), extra.end());
  const RunResult r = run_gpucheck(args);
  exit_code = r.exit_code;
  EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.exit_code << ": " << r.err;
  return r.exit_code == 0 || r.exit_code == 1 ? json::parse(r.out) : json::object();
}

const json* result_of(const json& report, const std::string& id) {
  for (const json& result : report["results"]) {
    if (result["check_id"] == id) {
      return &result;
    }
  }
  return nullptr;
}

int exit_for(const json& report) {
  return report["summary"]["fail"].get<int>() + report["summary"]["error"].get<int>() > 0 ? 1 : 0;
}

std::string temp_file(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "gpucheck_gates_cli_" + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

/// A snapshot whose replay passes (exit 0) without gates, so a failing gate is what makes exit 1.
std::string passing_snapshot() {
  for (const char* name : {"h100x8_healthy", "h200_healthy"}) {
    int code = -1;
    (void)replay(name, {}, code);
    if (code == 0) {
      return name;
    }
  }
  ADD_FAILURE() << "no recorded snapshot replays with exit 0";
  return "h200_healthy";
}

TEST(GatesCli, DriverRequirementPassesAndFailsWithTheVersions) {
  const std::string name = passing_snapshot();
  const std::string driver = snapshot_of(name)["kernel_module"]["version"];
  const int branch = std::stoi(driver.substr(0, driver.find('.')));
  int code = -1;
  const json met = replay(name, {"--require", fmt::format("driver>={}", branch - 1)}, code);
  EXPECT_EQ(code, 0);
  ASSERT_NE(result_of(met, "gate.require.driver"), nullptr);
  EXPECT_EQ((*result_of(met, "gate.require.driver"))["status"], "pass");
  EXPECT_TRUE(testing::report_schema().validate(met).empty());

  const json unmet = replay(name, {"--require", fmt::format("driver>={}", branch + 1)}, code);
  EXPECT_EQ(code, 1);
  const json& gate = *result_of(unmet, "gate.require.driver");
  EXPECT_EQ(gate["status"], "fail");
  EXPECT_EQ(gate["findings"][0]["code"], "gate.requirement_not_met");
  EXPECT_EQ(gate["findings"][0]["message"],
            fmt::format("driver {} < required {}", driver, branch + 1));
  EXPECT_TRUE(testing::report_schema().validate(unmet).empty());
  // Gates come after every check.
  EXPECT_EQ(unmet["results"].back()["check_id"], "gate.require.driver");
}

TEST(GatesCli, TextOutputNamesTheFailedGate) {
  const std::string name = passing_snapshot();
  const RunResult r = run_gpucheck(
      {"--from-snapshot", snapshot_file(name), "--require", "cuda>=99.0", "--color", "never"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.out.find("FAIL  gate.require.cuda"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("< required 99.0"), std::string::npos) << r.out;
}

TEST(GatesCli, ExpectGpusCountsTheSnapshotsGpus) {
  const std::string name = passing_snapshot();
  const int gpus = static_cast<int>(snapshot_of(name)["gpus"].size());
  int code = -1;
  const json ok = replay(name, {"--expect-gpus", std::to_string(gpus)}, code);
  EXPECT_EQ(code, 0);
  EXPECT_EQ((*result_of(ok, "gate.expect_gpus"))["status"], "pass");
  const json short_by_one = replay(name, {"--expect-gpus", std::to_string(gpus + 1)}, code);
  EXPECT_EQ(code, 1);
  const json& gate = *result_of(short_by_one, "gate.expect_gpus");
  EXPECT_EQ(gate["findings"][0]["code"], "gate.gpu_count_mismatch");
  EXPECT_EQ(gate["summary"], fmt::format("found {} GPUs, expected {}", gpus, gpus + 1));
}

TEST(GatesCli, MinimumWithoutMeasurementsIsASkipInAReplay) {
  const std::string name = passing_snapshot();
  int code = -1;
  const json report = replay(name, {"--min", "h2d_gbps=20"}, code);
  EXPECT_EQ(code, 0);
  const json& gate = *result_of(report, "gate.min.h2d_gbps");
  EXPECT_EQ(gate["status"], "skip");
  EXPECT_NE(gate["summary"].get<std::string>().find("no check reported h2d_gbps"),
            std::string::npos);
}

TEST(GatesCli, FailOnWarnAndIgnore) {
  // A snapshot whose replay warns; its warning (and failing) codes are read from a run without
  // gates.
  std::string name;
  json baseline;
  for (const char* candidate : {"h200_healthy", "h100x8_healthy", "degraded_hw"}) {
    int code = -1;
    baseline = replay(candidate, {}, code);
    if (baseline["summary"]["warn"].get<int>() > 0) {
      name = candidate;
      break;
    }
  }
  ASSERT_FALSE(name.empty()) << "no recorded snapshot warns";
  std::set<std::string> codes;
  int findings = 0;
  for (const json& result : baseline["results"]) {
    for (const json& finding : result["findings"]) {
      if ((result["status"] == "warn" || result["status"] == "fail") &&
          finding["severity"] != "info") {
        codes.insert(finding["code"].get<std::string>());
      }
    }
  }
  for (const json& result : baseline["results"]) {
    for (const json& finding : result["findings"]) {
      findings += codes.count(finding["code"].get<std::string>()) != 0 ? 1 : 0;
    }
  }
  ASSERT_FALSE(codes.empty());

  int code = -1;
  const json strict = replay(name, {"--fail-on", "warn"}, code);
  EXPECT_EQ(code, 1);
  EXPECT_EQ(code, exit_for(strict));
  EXPECT_EQ(strict["summary"]["fail"], baseline["summary"]["fail"].get<int>() + 1);
  EXPECT_EQ((*result_of(strict, "gate.fail_on"))["findings"][0]["code"], "gate.warnings_present");

  std::vector<std::string> args = {"--fail-on", "warn"};
  for (const std::string& c : codes) {
    args.push_back("--ignore");
    args.push_back(c);
  }
  const json lenient = replay(name, args, code);
  EXPECT_EQ(code, 0);
  EXPECT_EQ(lenient["summary"]["warn"], 0);
  EXPECT_EQ(lenient["summary"]["fail"], 0);
  EXPECT_EQ((*result_of(lenient, "gate.fail_on"))["status"], "pass");
  int ignored = 0;
  for (const json& result : lenient["results"]) {
    for (const json& finding : result["findings"]) {
      ignored += finding["ignored"].get<bool>() ? 1 : 0;
    }
  }
  EXPECT_EQ(ignored, findings);
  EXPECT_TRUE(testing::report_schema().validate(lenient).empty());
}

TEST(GatesCli, ConfigFileAndCommandLineOverride) {
  const std::string name = passing_snapshot();
  const std::string toml =
      temp_file("gates.toml", "require = [\"driver>=9999\"]\nexpect-gpus = 0\n");
  int code = -1;
  const json from_file = replay(name, {"--config", toml}, code);
  EXPECT_EQ(code, 1);
  EXPECT_EQ((*result_of(from_file, "gate.require.driver"))["status"], "fail");
  const json overridden = replay(name,
                                 {"--config", toml, "--require", "driver>=1", "--expect-gpus",
                                  std::to_string(snapshot_of(name)["gpus"].size())},
                                 code);
  EXPECT_EQ(code, 0);
  const std::string json_config = temp_file("gates.json", R"({"require": ["cudnn>=999"]})");
  const json from_json = replay(name, {"--config", json_config}, code);
  EXPECT_EQ(code, 1);
  EXPECT_EQ((*result_of(from_json, "gate.require.cudnn"))["status"], "fail");
}

TEST(GatesCli, MalformedGatesAreUsageErrors) {
  const struct {
    std::vector<std::string> args;
    std::string says;
  } cases[] = {
      {{"--require", "drvier>=550"}, "unknown component 'drvier'"},
      {{"--require", "driver=>550"}, "unknown operator"},
      {{"--require", "driver>=x"}, "'x' is not a version"},
      {{"--min", "h2d_gbps"}, "METRIC=NUMBER"},
      // An unknown metric was a gate skipped in silence (exit 0); now it is named,
      // with the metrics that exist, as a misspelt --ignore code is.
      {{"--min", "bogus_metric=20"}, "'bogus_metric' is not a metric any check reports"},
      {{"--min", "UNKNOWN_METRIC=20"}, "is not a metric any check reports; known metrics: "},
      {{"--min", "h2d_gpbs=20"}, "h2d_gbps, d2h_gbps, h2d_bidir_gbps"},
      {{"--min", "h2d_gbps=20,p2p_0_1_writ_gbps=5"}, "'p2p_0_1_writ_gbps' is not a metric"},
      {{"--config", temp_file("unknown_min.toml", "[min]\nbogus_metric = 20\n")},
       "'bogus_metric' is not a metric"},
      {{"--fail-on", "never"}, "warn or fail"},
      {{"--ignore", "no.such_code"}, "not a finding code"},
      {{"--config", "/nonexistent/gpucheck.toml"}, "gpucheck.toml"},
      {{"--config", temp_file("bad.json", "{\"require\": [")}, "not valid JSON"},
      // A number that overflows aborted the run (SIGABRT); now exit 2 with
      // the file, the JSON path and the problem.
      {{"--config", temp_file("overflow.json", "{\"min\": {\"h2d_gbps\": 1e400}}")},
       "overflow.json' is not valid JSON at $.min.h2d_gbps (byte"},
      {{"--config", temp_file("overflow.json", "{\"min\": {\"h2d_gbps\": 1e400}}")},
       "number overflow"},
      // Item 8: a config that never ends is capped, not read into memory without end.
      {{"--config", "/dev/zero"}, "larger than"},
      // Item 10: time limits have a range, and the message says it.
      {{"--timeout", "1e300"}, "0.01 to 86400"},
      {{"--timeout", "1e-300"}, "0.01 to 86400"},
      {{"--probe-timeout", "1e300"}, "0.01 to 86400"},
      {{"--probe-timeout", "0"}, "0.01 to 86400"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> args = {"--from-snapshot", snapshot_file("h200_healthy")};
    args.insert(args.end(), c.args.begin(), c.args.end());
    const RunResult r = run_gpucheck(args);
    EXPECT_EQ(r.exit_code, 2) << c.says << ": " << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err.rfind("gpucheck: ", 0), 0u) << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
  }
}

} // namespace
} // namespace gpucheck::cli_test
