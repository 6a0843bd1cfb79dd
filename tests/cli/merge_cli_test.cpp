// gpucheck merge on the real binary: reports made by the binary from the recorded snapshots,
// plus refused files; exit codes 0, 1 and 2 as docs/fleet.md promises.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "cli/run_binary.hpp"

namespace gpucheck::cli_test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

fs::path fresh_dir(const std::string& name) {
  const fs::path dir = fs::path(::testing::TempDir()) / ("gpucheck_merge_cli_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

struct Made {
  std::string host;
  int exit_code;
};

/// Replays each recorded snapshot into DIR/<name>.json; returns host name and exit code of each.
std::vector<Made> make_reports(const fs::path& dir) {
  fs::create_directories(dir);
  std::vector<Made> made;
  for (const auto& entry :
       fs::directory_iterator(std::string(GPUCHECK_TEST_DATA_DIR) + "/snapshots")) {
    if (entry.path().extension() != ".json") {
      continue;
    }
    const RunResult r = run_gpucheck({"--from-snapshot", entry.path().string(), "--json"});
    EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.err;
    std::ofstream(dir / entry.path().filename(), std::ios::binary) << r.out;
    made.push_back({json::parse(r.out)["snapshot"]["host"]["hostname"], r.exit_code});
  }
  return made;
}

TEST(MergeCli, MergesADirectoryAndRefusesGarbage) {
  const fs::path dir = fresh_dir("mixed");
  const std::vector<Made> made = make_reports(dir / "reports");
  ASSERT_GE(made.size(), 5u);
  std::ofstream(dir / "reports" / "empty.json") << "";
  std::ofstream(dir / "reports" / "truncated.json") << "{\"context\": {\"schema_vers";

  const RunResult r = run_gpucheck({"merge", dir.string()});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  for (const Made& m : made) {
    EXPECT_NE(r.out.find(m.host), std::string::npos) << m.host << "\n" << r.out;
  }
  EXPECT_NE(r.err.find("empty.json: empty file"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("truncated.json: not valid JSON"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("Refused inputs (2)"), std::string::npos) << r.out;

  const RunResult j = run_gpucheck({"merge", "--json", dir.string()});
  EXPECT_EQ(j.exit_code, 1);
  const json table = json::parse(j.out);
  EXPECT_EQ(table["summary"]["nodes"], made.size());
  EXPECT_EQ(table["summary"]["rejected"], 2);
  int failing = 0;
  for (const Made& m : made) {
    failing += m.exit_code;
  }
  EXPECT_EQ(table["summary"]["failing"], failing);

  const RunResult md = run_gpucheck({"merge", "--format", "markdown", dir.string()});
  EXPECT_EQ(md.out.rfind("## gpucheck fleet report\n", 0), 0u) << md.out;
}

// Issue 21 items 5, 7: a number that overflows in one input loses that input only (with a note
// naming the JSON path), and a FIFO named *.json in the directory is not opened (it hung).
TEST(MergeCli, AnOverflowingNumberSkipsThatReportAndAFifoIsNotOpened) {
  const fs::path dir = fresh_dir("overflow");
  const std::vector<Made> made = make_reports(dir);
  ASSERT_GE(made.size(), 2u);
  std::ofstream(dir / "overflow.json") << "{\"context\": {\"x\": 1e400}, \"results\": []}";
  ASSERT_EQ(::mkfifo((dir / "fifo.json").c_str(), 0600), 0);
  const RunResult r = run_gpucheck({"merge", "--json", dir.string()});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const json table = json::parse(r.out);
  EXPECT_EQ(table["summary"]["nodes"], made.size());
  EXPECT_EQ(table["summary"]["rejected"], 1);
  EXPECT_NE(r.err.find("overflow.json: not valid JSON (at $.context.x (byte"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("number overflow"), std::string::npos) << r.err;
}

TEST(MergeCli, ExitZeroWhenEveryNodePasses) {
  const fs::path dir = fresh_dir("passing");
  const std::vector<Made> made = make_reports(dir);
  std::vector<std::string> passing;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const json report = json::parse(std::ifstream(entry.path()));
    if (report["summary"]["fail"] == 0 && report["summary"]["error"] == 0) {
      passing.push_back(entry.path().string());
    }
  }
  ASSERT_FALSE(passing.empty());
  std::vector<std::string> args = {"merge"};
  args.insert(args.end(), passing.begin(), passing.end());
  const RunResult r = run_gpucheck(args);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.err, "");
}

TEST(MergeCli, UsageErrors) {
  const fs::path dir = fresh_dir("usage");
  std::ofstream(dir / "garbage.json") << "not json at all";
  const struct {
    std::vector<std::string> args;
    std::string says;
  } cases[] = {
      {{"merge"}, "needs report files"},
      {{"merge", (dir / "missing").string()}, "does not exist"},
      {{"merge", (dir / "garbage.json").string()}, "none of the 1 input file is a gpucheck report"},
      {{"merge", "--format", "yaml", dir.string()}, "yaml"},
  };
  for (const auto& c : cases) {
    const RunResult r = run_gpucheck(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.says << ": " << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
  }
}

} // namespace
} // namespace gpucheck::cli_test
