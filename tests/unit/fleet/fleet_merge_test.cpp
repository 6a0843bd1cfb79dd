// gpucheck merge: reading reports leniently, refusing garbage with a reason, and a merge over 100
// reports of mixed gpucheck and schema versions generated from the golden reports.
#include "fleet/fleet_table.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>

#include "fleet/fleet_render.hpp"
#include "fleet/node_report.hpp"
#include "support/text_and_processes.hpp"
#include "unit/fleet/merge_clock.hpp"

namespace gpucheck::fleet {
namespace {

namespace fs = std::filesystem;
using gpucheck::testing::read_file;
using nlohmann::json;

void write_text(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << text;
}

std::vector<fs::path> golden_reports() {
  std::vector<fs::path> paths;
  for (const auto& entry :
       fs::directory_iterator(std::string(GPUCHECK_TEST_DATA_DIR) + "/golden")) {
    if (entry.path().extension() == ".json" &&
        entry.path().stem().string().rfind("merge", 0) != 0) {
      paths.push_back(entry.path());
    }
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

/// The failing codes of a report, found independently of node_report.cpp: each fail/error
/// finding of a fail/error result, or "<check id> (<status>)" for such a result without one.
std::set<std::string> failing_codes_of(const json& report) {
  std::set<std::string> codes;
  for (const json& result : report["results"]) {
    const std::string status = result["status"];
    if (status != "fail" && status != "error") {
      continue;
    }
    bool named = false;
    for (const json& finding : result["findings"]) {
      if (finding["severity"] == "fail" || finding["severity"] == "error") {
        codes.insert(finding["code"].get<std::string>());
        named = true;
      }
    }
    if (!named) {
      codes.insert(result["check_id"].get<std::string>() + " (" + status + ")");
    }
  }
  return codes;
}

fs::path fresh_dir(const std::string& name) {
  const fs::path dir = fs::path(::testing::TempDir()) / ("gpucheck_fleet_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

TEST(NodeReport, ReadsTheColumnsOfAGoldenReport) {
  for (const fs::path& path : golden_reports()) {
    const json report = json::parse(read_file(path));
    Expected<NodeReport> node = read_node_report(report.dump(), path.string());
    ASSERT_TRUE(node) << path << ": " << node.error().message;
    EXPECT_EQ(node->node, report["snapshot"]["host"]["hostname"]);
    EXPECT_EQ(node->gpu_count, static_cast<int>(report["snapshot"]["gpus"].size()));
    EXPECT_EQ(node->verdict, report["summary"]["overall"]);
    const std::set<std::string> codes(node->failing_codes.begin(), node->failing_codes.end());
    EXPECT_EQ(codes, failing_codes_of(report)) << path;
    EXPECT_TRUE(node->notes.empty()) << path << ": " << node->notes.front();
  }
}

TEST(NodeReport, ReadsDriverCudaAndCudnn) {
  json report = json::parse(read_file(golden_reports().front()));
  report["snapshot"]["kernel_module"]["version"] = "550.54.15";
  report["snapshot"]["cuda"]["driver_version"] = 12040;
  report["snapshot"]["libraries"] =
      json::array({{{"family", "cudnn"}, {"load", {{"loaded", true}, {"version", "9.1.0"}}}}});
  report["snapshot"]["gpus"] =
      json::array({{{"name", "NVIDIA A100"}}, {{"name", "NVIDIA A100"}}, {{"name", "Tesla T4"}}});
  Expected<NodeReport> node = read_node_report(report.dump(), "x.json");
  ASSERT_TRUE(node);
  EXPECT_EQ(node->driver, "550.54.15");
  EXPECT_EQ(node->cuda, "12.4");
  EXPECT_EQ(node->cudnn, "9.1.0");
  EXPECT_EQ(node->gpus, "2x NVIDIA A100, 1x Tesla T4");
  EXPECT_EQ(node->gpu_count, 3);
}

TEST(NodeReport, IgnoredFindingsAreNotFailingCodes) {
  json report = json::parse(read_file(golden_reports().front()));
  std::set<std::string> before = failing_codes_of(report);
  ASSERT_FALSE(before.empty()) << "the first golden report should fail";
  for (json& result : report["results"]) {
    for (json& finding : result["findings"]) {
      if (finding["code"] == *before.begin()) {
        finding["ignored"] = true;
      }
    }
  }
  Expected<NodeReport> node = read_node_report(report.dump(), "x.json");
  ASSERT_TRUE(node);
  EXPECT_EQ(std::count(node->failing_codes.begin(), node->failing_codes.end(), *before.begin()), 0);
}

TEST(NodeReport, RefusesGarbageWithAReason) {
  const std::string golden = read_file(golden_reports().front());
  const std::string snapshot =
      read_file(std::string(GPUCHECK_TEST_DATA_DIR) + "/snapshots/h200_healthy.json");
  const struct {
    std::string text;
    std::string says;
  } cases[] = {
      {"", "empty file"},
      {" \n\t\n", "empty file"},
      {golden.substr(0, golden.size() / 2), "not valid JSON"},
      {"\x7f"
       "ELF\x02\x01\x01",
       "not valid JSON"},
      {"[1, 2, 3]", "the top level is array"},
      {"\"gpucheck\"", "the top level is string"},
      {R"({"name": "package.json", "version": "1.0.0"})", "no \"context\" and \"results\""},
      {R"({"context": {}, "results": {}})", "\"results\" is not a list"},
      {snapshot, "a gpucheck snapshot, not a report"},
  };
  for (const auto& c : cases) {
    Expected<NodeReport> node = read_node_report(c.text, "bad.json");
    ASSERT_FALSE(node) << c.says;
    EXPECT_NE(node.error().message.find(c.says), std::string::npos)
        << c.says << " -> " << node.error().message;
  }
}

TEST(NodeReport, ReadsWhatItKnowsOfOtherVersions) {
  json report = json::parse(read_file(golden_reports().front()));
  report["context"]["schema_version"] = 7;
  report["context"]["tool_version"] = "9.9.9";
  report["context"]["brand_new"] = {{"x", 1}};
  report["snapshot"].erase("host");
  report.erase("summary");
  Expected<NodeReport> node = read_node_report(report.dump(), "/reports/gpu-node-3.json");
  ASSERT_TRUE(node);
  EXPECT_EQ(node->schema_version, 7);
  EXPECT_EQ(node->tool_version, "9.9.9");
  EXPECT_EQ(node->node, "gpu-node-3");
  EXPECT_EQ(node->verdict, "fail");
  ASSERT_EQ(node->notes.size(), 3u);
  EXPECT_NE(node->notes[0].find("schema_version 7 is newer"), std::string::npos);
  EXPECT_NE(node->notes[1].find("named after its file"), std::string::npos);
  EXPECT_NE(node->notes[2].find("no summary.overall"), std::string::npos);
}

TEST(FleetTable, NaturalOrder) {
  EXPECT_TRUE(natural_less("node-2", "node-10"));
  EXPECT_FALSE(natural_less("node-10", "node-2"));
  EXPECT_TRUE(natural_less("node-002", "node-10"));
  EXPECT_TRUE(natural_less("a", "b"));
  EXPECT_FALSE(natural_less("node-7", "node-7"));
}

TEST(FleetTable, ReportFilesSearchesDirectoriesAndRefusesMissingPaths) {
  const fs::path dir = fresh_dir("files");
  write_text(dir / "b" / "node-10.json", "{}");
  write_text(dir / "b" / "node-2.json", "{}");
  write_text(dir / "a.json", "{}");
  write_text(dir / "readme.txt", "not a report");
  Expected<std::vector<std::string>> files = report_files({dir.string()});
  ASSERT_TRUE(files) << files.error().message;
  EXPECT_EQ(*files, (std::vector<std::string>{(dir / "a.json").string(),
                                              (dir / "b" / "node-2.json").string(),
                                              (dir / "b" / "node-10.json").string()}));
  Expected<std::vector<std::string>> missing = report_files({(dir / "nope").string()});
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("does not exist"), std::string::npos);
  fs::create_directories(dir / "empty");
  Expected<std::vector<std::string>> empty = report_files({(dir / "empty").string()});
  ASSERT_FALSE(empty);
  EXPECT_NE(empty.error().message.find("holds no *.json file"), std::string::npos);
}

/// 100 reports from the golden ones, with other host names, gpucheck versions and schema
/// versions, some fields removed and some added; plus corrupt, empty, truncated and non-report
/// files. The table must count every node under each of its codes and refuse each bad file.
// Issue 34: merge took any code another node's report claimed. A code this gpucheck does not
// know is said to be so; text that is no code at all is said to be that.
TEST(FleetTable, CodesAreCheckedAgainstTheCatalogue) {
  EXPECT_EQ(unknown_code_title("gpu.fabric_degraded_2030"),
            "not in this gpucheck's catalogue (another version's code?)");
  for (const char* odd : {"Call 555-0100 for a fix", "gpu.ecc\x1b[2J", "", "UPPER.case",
                          "a.very.long.code.that.goes.on.and.on.past.sixty.four.characters.x"}) {
    EXPECT_EQ(unknown_code_title(odd), "not a finding code: as the node's report wrote it") << odd;
  }
  EXPECT_EQ(unknown_code_title("gpu.compute (fail)"), "");
  EXPECT_EQ(unknown_code_title("unnamed check (error)"), "");
  EXPECT_EQ(unknown_code_title("Call me (fail)"),
            "not a finding code: as the node's report wrote it");

  const fs::path dir = fresh_dir("codes");
  json report = json::parse(read_file(golden_reports().front()));
  report["snapshot"]["host"]["hostname"] = "node-odd";
  json finding = {{"code", "Call 555-0100 for a fix"}, {"severity", "fail"}, {"message", "x"}};
  report["results"][0]["status"] = "fail";
  report["results"][0]["findings"] = json::array({finding});
  write_text(dir / "odd.json", report.dump());
  report["snapshot"]["host"]["hostname"] = "node-known";
  report["results"][0]["findings"][0]["code"] = "driver.missing";
  write_text(dir / "known.json", report.dump());
  Expected<std::vector<std::string>> files = report_files({dir.string()});
  ASSERT_TRUE(files) << files.error().message;
  const FleetTable table = merge_files(*files, k_now);
  std::map<std::string, std::string> titles;
  for (const CodeGroup& group : table.groups) {
    titles[group.code] = group.title;
  }
  ASSERT_EQ(titles.count("Call 555-0100 for a fix"), 1u);
  EXPECT_EQ(titles["Call 555-0100 for a fix"], "not a finding code: as the node's report wrote it");
  ASSERT_EQ(titles.count("driver.missing"), 1u);
  EXPECT_NE(titles["driver.missing"].find("driver"), std::string::npos) << titles["driver.missing"];
}

TEST(FleetTable, MergesAHundredReportsOfMixedVersions) {
  const std::vector<fs::path> bases = golden_reports();
  ASSERT_GE(bases.size(), 5u);
  const fs::path dir = fresh_dir("hundred");
  std::mt19937 rng(std::random_device{}());
  std::map<std::string, std::set<std::string>> expected_groups; // code -> nodes
  std::map<std::string, std::string> expected_verdict;
  std::set<std::string> newer_schema;
  std::set<std::string> without_libraries;
  const std::vector<std::string> tool_versions = {"0.1.0", "0.2.0-dev", "0.0.9", "1.0.0"};
  for (int i = 0; i < 100; ++i) {
    json report = json::parse(read_file(bases[i % bases.size()]));
    const std::string node = fmt::format("node-{}", i);
    report["snapshot"]["host"]["hostname"] = node;
    report["context"]["tool_version"] = tool_versions[rng() % tool_versions.size()];
    const int kind = static_cast<int>(rng() % 4);
    if (kind == 1) {
      report["context"]["schema_version"] = 2;
      report["context"]["fleet_label"] = "rack-" + std::to_string(i % 7); // a key from the future
      newer_schema.insert(node);
    } else if (kind == 2) {
      report["snapshot"].erase("libraries"); // an older snapshot without library facts
      without_libraries.insert(node);
    } else if (kind == 3) {
      for (json& result : report["results"]) {
        for (json& finding : result["findings"]) {
          finding.erase("remedy"); // fields a reader does not need
        }
        result.erase("duration_ms");
      }
    }
    for (const std::string& code : failing_codes_of(report)) {
      expected_groups[code].insert(node);
    }
    expected_verdict[node] = report["summary"]["overall"];
    // Some in a subdirectory: the merge is recursive.
    write_text(dir / (i % 3 == 0 ? "rack-b" : "rack-a") / (node + ".json"), report.dump(1));
  }
  const std::string golden = read_file(bases.front());
  write_text(dir / "bad" / "empty.json", "");
  write_text(dir / "bad" / "truncated.json", golden.substr(0, golden.size() / 3));
  write_text(dir / "bad" / "corrupt.json", std::string("\x00\x01{{garbage", 11));
  write_text(dir / "bad" / "package.json", R"({"name": "web", "dependencies": {}})");
  write_text(dir / "bad" / "snapshot.json",
             read_file(std::string(GPUCHECK_TEST_DATA_DIR) + "/snapshots/no_driver.json"));
  write_text(dir / "notes.txt", "not picked: not *.json");

  Expected<std::vector<std::string>> files = report_files({dir.string()});
  ASSERT_TRUE(files) << files.error().message;
  ASSERT_EQ(files->size(), 105u);
  const FleetTable table = merge_files(*files, k_now);

  EXPECT_EQ(table.summary.nodes, 100);
  EXPECT_EQ(table.summary.rejected, 5);
  std::map<std::string, std::string> reasons;
  for (const RejectedInput& r : table.rejected) {
    reasons[fs::path(r.source).filename().string()] = r.reason;
  }
  EXPECT_EQ(reasons["empty.json"], "empty file");
  EXPECT_EQ(reasons["truncated.json"].rfind("not valid JSON", 0), 0u) << reasons["truncated.json"];
  EXPECT_EQ(reasons["corrupt.json"].rfind("not valid JSON", 0), 0u) << reasons["corrupt.json"];
  EXPECT_NE(reasons["package.json"].find("not a gpucheck report"), std::string::npos);
  EXPECT_NE(reasons["snapshot.json"].find("snapshot, not a report"), std::string::npos);

  int failing = 0;
  for (const NodeReport& node : table.nodes) {
    EXPECT_EQ(node.verdict, expected_verdict[node.node]) << node.node;
    failing += node.verdict == "fail" || node.verdict == "error" ? 1 : 0;
    const bool newer = newer_schema.count(node.node) != 0;
    EXPECT_EQ(!node.notes.empty(), newer) << node.node;
    if (without_libraries.count(node.node) != 0) {
      EXPECT_EQ(node.cudnn, "") << node.node;
    }
  }
  EXPECT_EQ(table.summary.failing, failing);
  EXPECT_EQ(table.nodes.front().node, "node-0");
  EXPECT_EQ(table.nodes.back().node, "node-99");

  std::map<std::string, std::set<std::string>> groups;
  for (const CodeGroup& group : table.groups) {
    if (group.failing) {
      groups[group.code] = std::set<std::string>(group.nodes.begin(), group.nodes.end());
    }
  }
  EXPECT_EQ(groups, expected_groups);
  ASSERT_NE(groups.count("gpu.row_remap_pending"), 0u);
  EXPECT_EQ(groups["gpu.row_remap_pending"].size(), 20u);
  for (size_t i = 1; i < table.groups.size(); ++i) {
    if (table.groups[i].failing == table.groups[i - 1].failing) {
      EXPECT_LE(table.groups[i].nodes.size(), table.groups[i - 1].nodes.size());
    } else {
      EXPECT_TRUE(table.groups[i - 1].failing) << "failing groups come first";
    }
  }

  const std::string text = render_fleet_text(table);
  EXPECT_NE(text.find("20 nodes: Row remapping pending (gpu.row_remap_pending)"), std::string::npos)
      << text.substr(0, 600);
  const json merged = json::parse(render_fleet_json(table));
  EXPECT_EQ(merged["summary"]["nodes"], 100);
  EXPECT_EQ(merged["nodes"].size(), 100u);
  EXPECT_EQ(merged["rejected"].size(), 5u);
}

} // namespace
} // namespace gpucheck::fleet
