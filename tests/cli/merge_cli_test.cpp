// gpucheck merge on the real binary: reports made by the binary from the recorded snapshots,
// plus refused files; exit codes 0, 1 and 2 as docs/fleet.md promises.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "cli/run_binary.hpp"
#include "support/external_tool.hpp"

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

// A number that overflows in one input loses that input only (with a note
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

// Issue 34, item 6: links planted in a shared folder of reports (a.json -> a secret file) are
// not followed, a link named on the command line is refused saying so, and a file that does not
// parse is named with the parser's position only, never quoting its bytes.
TEST(MergeCli, LinksAreNotFollowedAndNothingOfABadFileIsQuoted) {
  const fs::path dir = fresh_dir("links");
  const std::vector<Made> made = make_reports(dir / "reports");
  ASSERT_GE(made.size(), 2u);
  const fs::path secret = dir / "secret_note.txt";
  std::ofstream(secret) << "root:SECRETVALUE123:19000:0:99999:7:::\n";
  fs::create_symlink(secret, dir / "reports" / "planted.json");
  std::ofstream(dir / "reports" / "garbage.json") << "{\"x\": [1, 2, QUOTEDBYTES";
  const RunResult r = run_gpucheck({"merge", "--json", (dir / "reports").string()});
  EXPECT_EQ(r.out.find("SECRETVALUE123"), std::string::npos) << r.out;
  EXPECT_EQ(r.err.find("SECRETVALUE123"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("QUOTEDBYTES"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("garbage.json: not valid JSON (at $.x[2] (byte"), std::string::npos)
      << r.err;
  const json table = json::parse(r.out);
  EXPECT_EQ(table["summary"]["nodes"], made.size());
  EXPECT_EQ(table["summary"]["rejected"], 1); // the garbage; the link was never an input

  const RunResult named = run_gpucheck({"merge", (dir / "reports" / "planted.json").string()});
  EXPECT_EQ(named.err.find("SECRETVALUE123"), std::string::npos) << named.err;
  EXPECT_NE(named.err.find("is a symbolic link"), std::string::npos) << named.err;
}

// Another node's report is outside text: a hostname holding escape sequences, and a file name
// holding one, reach the terminal as escapes.
TEST(MergeCli, AnotherNodesEscapeSequencesReachNoTerminal) {
  const fs::path dir = fresh_dir("escapes");
  const std::vector<Made> made = make_reports(dir / "reports");
  ASSERT_GE(made.size(), 1u);
  fs::path first;
  for (const auto& entry : fs::directory_iterator(dir / "reports")) {
    first = entry.path();
    break;
  }
  json report = json::parse(std::ifstream(first));
  report["snapshot"]["host"]["hostname"] = "node\x1b]0;OWNED\x07\r\x1b[2K";
  std::ofstream(first) << report.dump();
  std::ofstream(dir / "reports" / "bad\x1b[2Jname.json") << "{";
  for (const char* format : {"text", "markdown"}) {
    const RunResult r = run_gpucheck({"merge", "--format", format, (dir / "reports").string()});
    EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << format << ": " << r.out;
    EXPECT_EQ(r.out.find('\x07'), std::string::npos) << format;
    EXPECT_EQ(r.err.find('\x1b'), std::string::npos) << r.err;
    EXPECT_NE(r.out.find("\\x1b]0;OWNED"), std::string::npos) << format << ": " << r.out;
  }
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

/// Validates `document` against docs/merge.schema.json with python3-jsonschema; "" when valid.
std::string merge_schema_errors(const std::string& document) {
  const testing::ToolResult r = testing::run_tool(
      {"python3", "-c",
       "import json, sys, jsonschema\n"
       "schema = json.load(open(sys.argv[1]))\n"
       "errors = list(jsonschema.Draft202012Validator(schema).iter_errors(json.load(sys.stdin)))\n"
       "print('\\n'.join(f'{list(e.absolute_path)}: {e.message}' for e in errors))\n"
       "sys.exit(1 if errors else 0)\n",
       std::string(GPUCHECK_SOURCE_DIR) + "/docs/merge.schema.json"},
      document);
  return r.exit_code == 0 ? "" : "invalid (" + std::to_string(r.exit_code) + "): " + r.output;
}

/// One row per host on the real binary: reports replayed from the recorded snapshots at a known
/// time, one node's older report beside them; merged three hours later. One row per host, the
/// older report stale; the age and mode; the failing codes' GPUs; the PCI count of the node whose
/// NVML failed. The JSON validates against docs/merge.schema.json.
TEST(MergeCli, LatestReportPerHostWithAgeModeGpusAndPciCount) {
  const fs::path dir = fresh_dir("latest");
  const std::string snapshots = std::string(GPUCHECK_TEST_DATA_DIR) + "/snapshots/";
  const auto replay = [&](const std::string& name, const std::string& epoch, const fs::path& to) {
    const RunResult r = run_gpucheck(RunSpec{
        {"--from-snapshot", snapshots + name + ".json", "--json"}, {{"SOURCE_DATE_EPOCH", epoch}}});
    EXPECT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.err;
    fs::create_directories(to.parent_path());
    std::ofstream(to, std::ios::binary) << r.out;
    return json::parse(r.out);
  };
  const std::string made = "1700000000";    // 2023-11-14T22:13:20Z
  const std::string earlier = "1699900000"; // a day before
  const json degraded = replay("degraded_hw", made, dir / "z" / "degraded_hw.json");
  replay("degraded_hw", earlier, dir / "a" / "degraded_hw-old.json");
  replay("nvml_mismatch", made, dir / "z" / "nvml_mismatch.json");
  replay("h200_healthy", made, dir / "z" / "h200_healthy.json");

  const RunResult r = run_gpucheck(
      RunSpec{{"merge", "--json", dir.string()}, {{"SOURCE_DATE_EPOCH", "1700010800"}}});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(merge_schema_errors(r.out), "");
  const json table = json::parse(r.out);
  EXPECT_EQ(table["summary"]["nodes"], 3);
  EXPECT_EQ(table["summary"]["stale"], 1);
  ASSERT_EQ(table["stale"].size(), 1u);
  EXPECT_EQ(table["stale"][0]["source"], (dir / "a" / "degraded_hw-old.json").string());
  EXPECT_EQ(table["stale"][0]["superseded_by"], (dir / "z" / "degraded_hw.json").string());
  EXPECT_EQ(table["merged_at"], "2023-11-15T01:13:20Z");
  std::map<std::string, json> rows;
  for (const json& node : table["nodes"]) {
    rows[node["source"].get<std::string>()] = node;
    EXPECT_EQ(node["mode"], "replay");
    EXPECT_EQ(node["age"], "3h");
    EXPECT_EQ(node["age_s"], 10800);
  }
  const json& pci = rows[(dir / "z" / "nvml_mismatch.json").string()];
  EXPECT_EQ(pci["gpu_count"], 0);
  EXPECT_GT(pci["pci_gpu_count"], 0);
  EXPECT_EQ(pci["gpus"], fmt::format("{} (PCI)", pci["pci_gpu_count"].get<int>()));
  const json& healthy = rows[(dir / "z" / "h200_healthy.json").string()];
  EXPECT_EQ(healthy["gpus"].get<std::string>().find("(PCI)"), std::string::npos);

  // Each failing code of the degraded node with its GPU's UUID and serial from its report.
  const json& bad = rows[(dir / "z" / "degraded_hw.json").string()];
  ASSERT_FALSE(bad["failing"].empty());
  for (const json& item : bad["failing"]) {
    ASSERT_TRUE(item["gpu_index"].is_number()) << item.dump();
    const json& gpu = degraded["snapshot"]["gpus"][item["gpu_index"].get<size_t>()];
    EXPECT_EQ(gpu["index"], item["gpu_index"]);
    EXPECT_EQ(item["uuid"], gpu["uuid"]);
    EXPECT_EQ(item["serial"], gpu["serial"]);
  }

  const RunResult text =
      run_gpucheck(RunSpec{{"merge", dir.string()}, {{"SOURCE_DATE_EPOCH", "1700010800"}}});
  EXPECT_NE(text.out.find("gpucheck merge: 3 nodes: "), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("; 1 stale report not counted"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("Stale reports (1)"), std::string::npos) << text.out;
  EXPECT_NE(
      text.out.find(fmt::format("gpu.ecc_uncorrected GPU 1 ({})",
                                degraded["snapshot"]["gpus"][1]["serial"].get<std::string>())),
      std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find(" replay  3h "), std::string::npos) << text.out;
  const RunResult md = run_gpucheck(RunSpec{{"merge", "--format", "markdown", dir.string()},
                                            {{"SOURCE_DATE_EPOCH", "1700010800"}}});
  EXPECT_NE(md.out.find("### Stale reports (1)"), std::string::npos) << md.out;
  EXPECT_NE(md.out.find("| replay | 3h |"), std::string::npos) << md.out;
}

TEST(MergeCli, TheGoldenMergeJsonFollowsItsSchema) {
  std::ifstream in(std::string(GPUCHECK_TEST_DATA_DIR) + "/golden/merge/fleet.json");
  const std::string golden((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(golden.empty());
  EXPECT_EQ(merge_schema_errors(golden), "");
  // The schema can fail: a node without its source is refused.
  json broken = json::parse(golden);
  broken["nodes"][0].erase("source");
  EXPECT_NE(merge_schema_errors(broken.dump()), "");
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
