// The merge table's three renderings, pinned by golden files (tests/golden/merge/) over the five
// golden reports plus a refused file; GPUCHECK_UPDATE_GOLDEN=1 rewrites them (review the diff!).
#include "fleet/fleet_render.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "gpucheck/model/utc_time.hpp"
#include "support/text_and_processes.hpp"

namespace gpucheck::fleet {
namespace {

namespace fs = std::filesystem;
using gpucheck::testing::read_file;

/// The golden reports read under stable names ("reports/<name>.json"), one refused input, one
/// report whose schema is newer, and an older report of one node (stale), merged at 14:30 on the
/// day the reports were made (12:00).
FleetTable golden_table() {
  std::vector<NodeReport> nodes;
  std::vector<fs::path> paths;
  for (const auto& entry :
       fs::directory_iterator(std::string(GPUCHECK_TEST_DATA_DIR) + "/golden")) {
    if (entry.path().extension() == ".json") {
      paths.push_back(entry.path());
    }
  }
  std::sort(paths.begin(), paths.end());
  for (const fs::path& path : paths) {
    nlohmann::json report = nlohmann::json::parse(read_file(path));
    if (path.stem() == "h100x8_healthy") {
      report["context"]["schema_version"] = 2;
    }
    Expected<NodeReport> node =
        read_node_report(report.dump(), "reports/" + path.filename().string());
    EXPECT_TRUE(node) << path;
    if (node) {
      nodes.push_back(std::move(node).value());
    }
    if (path.stem() == "degraded_hw") {
      report["context"]["generated_at"] = "2026-11-20T12:00:00Z";
      nodes.push_back(read_node_report(report.dump(), "reports/old/degraded_hw.json").value());
    }
  }
  return merge_nodes(std::move(nodes),
                     {{"reports/node-17.json", read_node_report("", "x").error().message}},
                     parse_utc_time("2026-11-21T14:30:00Z").value());
}

void expect_golden(const std::string& file, const std::string& actual) {
  const fs::path path = fs::path(GPUCHECK_TEST_DATA_DIR) / "golden" / "merge" / file;
  const char* update = std::getenv("GPUCHECK_UPDATE_GOLDEN");
  if (update != nullptr && std::string(update) == "1") {
    std::ofstream(path, std::ios::binary) << actual;
    return;
  }
  ASSERT_TRUE(fs::exists(path)) << "missing golden " << path
                                << " (GPUCHECK_UPDATE_GOLDEN=1 creates it)";
  EXPECT_EQ(read_file(path), actual) << file << " differs (GPUCHECK_UPDATE_GOLDEN=1 rewrites)";
}

TEST(FleetRender, TextGolden) {
  expect_golden("fleet.txt", render_fleet_text(golden_table()));
}

TEST(FleetRender, JsonGolden) {
  const std::string text = render_fleet_json(golden_table());
  EXPECT_TRUE(nlohmann::json::accept(text));
  expect_golden("fleet.json", text);
}

TEST(FleetRender, MarkdownGolden) {
  expect_golden("fleet.md", render_fleet_markdown(golden_table()));
}

TEST(FleetRender, MarkdownTablesHaveAsManyCellsAsColumns) {
  const std::string md = render_fleet_markdown(golden_table());
  std::istringstream in(md);
  std::string line;
  size_t columns = 0;
  int rows = 0;
  while (std::getline(in, line)) {
    if (line.empty() || line.front() != '|') {
      columns = 0;
      continue;
    }
    size_t cells = 0;
    for (size_t i = 0; i < line.size(); ++i) {
      cells += line[i] == '|' && (i == 0 || line[i - 1] != '\\') ? 1 : 0;
    }
    if (columns == 0) {
      columns = cells;
    }
    EXPECT_EQ(cells, columns) << line;
    ++rows;
  }
  EXPECT_GE(rows, 5 + 2 + 2); // five nodes, two header lines per table
}

} // namespace
} // namespace gpucheck::fleet
