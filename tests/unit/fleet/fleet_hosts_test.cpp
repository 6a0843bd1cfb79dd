// gpucheck merge, one row per host: the newest report of a host counts and the
// older ones are stale; machines that share a host name stay apart; the age and mode columns; the
// GPU of each failing code; the PCI GPU count of a node whose NVML failed.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <set>
#include <string>

#include "fleet/fleet_render.hpp"
#include "fleet/fleet_table.hpp"
#include "fleet/node_report.hpp"
#include "gpucheck/model/utc_time.hpp"
#include "unit/fleet/merge_clock.hpp"

namespace gpucheck::fleet {
namespace {

using nlohmann::json;
using std::chrono::seconds;

json golden(const std::string& name) {
  return json::parse(std::ifstream(std::string(GPUCHECK_TEST_DATA_DIR) + "/golden/" + name));
}

NodeReport read(const json& report, const std::string& source) {
  Expected<NodeReport> node = read_node_report(report.dump(), source);
  EXPECT_TRUE(node) << source << ": " << (node ? "" : node.error().message);
  return node ? std::move(node).value() : NodeReport{};
}

/// The report with another host name, time and GPU UUIDs (each GPU's UUID gets `uuid_tag`).
json variant(json report, const std::string& host, const std::string& generated_at,
             const std::string& uuid_tag = "") {
  report["snapshot"]["host"]["hostname"] = host;
  report["context"]["generated_at"] = generated_at;
  if (!uuid_tag.empty()) {
    int i = 0;
    for (json& gpu : report["snapshot"]["gpus"]) {
      gpu["uuid"] = fmt::format("GPU-{}-0000-0000-0000-{:012x}", uuid_tag, i++);
    }
  }
  return report;
}

bool has_note(const NodeReport& node, const std::string& text) {
  return std::any_of(node.notes.begin(), node.notes.end(),
                     [&](const std::string& note) { return note.find(text) != std::string::npos; });
}

TEST(FleetHosts, TheNewestReportOfAHostCountsAndTheOlderAreStale) {
  const json base = golden("degraded_hw.json");
  // The newest sorts first by path: the time decides, not the file name.
  std::vector<NodeReport> nodes = {
      read(variant(base, "n1", "2026-11-21T12:00:00Z"), "a/n1.json"),
      read(variant(base, "n1", "2026-11-20T12:00:00Z"), "b/n1.json"),
      read(variant(base, "n1", "2026-11-19T12:00:00Z"), "c/n1.json"),
  };
  const FleetTable table = merge_nodes(std::move(nodes), {}, k_now);
  ASSERT_EQ(table.nodes.size(), 1u);
  EXPECT_EQ(table.nodes[0].source, "a/n1.json");
  EXPECT_EQ(table.summary.nodes, 1);
  EXPECT_EQ(table.summary.failing, 1);
  EXPECT_EQ(table.summary.stale, 2);
  ASSERT_EQ(table.stale.size(), 2u);
  EXPECT_EQ(table.stale[0].source, "b/n1.json");
  EXPECT_EQ(table.stale[0].generated_at, "2026-11-20T12:00:00Z");
  EXPECT_EQ(table.stale[0].superseded_by, "a/n1.json");
  EXPECT_EQ(table.stale[1].source, "c/n1.json");
  for (const CodeGroup& group : table.groups) {
    EXPECT_EQ(group.nodes, std::vector<std::string>{"n1"}) << group.code;
  }
  EXPECT_TRUE(table.nodes[0].notes.empty()) << table.nodes[0].notes.front();

  const std::string text = render_fleet_text(table);
  EXPECT_NE(text.find("1 node: 0 passed, 0 warned, 1 failing; 2 stale reports not counted"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("Stale reports (2)"), std::string::npos) << text;
  EXPECT_NE(text.find("  n1: b/n1.json (2026-11-20T12:00:00Z), newer: a/n1.json\n"),
            std::string::npos)
      << text;
  const json merged = json::parse(render_fleet_json(table));
  EXPECT_EQ(merged["summary"]["stale"], 2);
  EXPECT_EQ(merged["stale"][1]["source"], "c/n1.json");
  EXPECT_EQ(merged["stale"][1]["superseded_by"], "a/n1.json");
  EXPECT_EQ(merged["nodes"].size(), 1u);
  const std::string md = render_fleet_markdown(table);
  EXPECT_NE(md.find("### Stale reports (2)"), std::string::npos) << md;
}

TEST(FleetHosts, DifferentHostsAtTheSameTimeAreTwoNodes) {
  // The same GPUs under two host names (a copied report, a renamed host): the name decides.
  const json base = golden("h200_healthy.json");
  std::vector<NodeReport> nodes = {read(variant(base, "n1", "2026-11-21T12:00:00Z"), "n1.json"),
                                   read(variant(base, "n2", "2026-11-21T12:00:00Z"), "n2.json")};
  const FleetTable table = merge_nodes(std::move(nodes), {}, k_now);
  ASSERT_EQ(table.nodes.size(), 2u);
  EXPECT_EQ(table.summary.stale, 0);
  EXPECT_EQ(table.nodes[0].node, "n1");
  EXPECT_EQ(table.nodes[1].node, "n2");
}

TEST(FleetHosts, MachinesThatShareAHostNameWithoutACommonGpuStayApart) {
  const json base = golden("h100x8_healthy.json");
  std::vector<NodeReport> nodes = {
      read(variant(base, "localhost", "2026-11-21T12:00:00Z", "aaaaaaaa"), "x/1.json"),
      read(variant(base, "localhost", "2026-11-21T11:00:00Z", "bbbbbbbb"), "x/2.json"),
      // An older report of the first machine: stale, not a third machine.
      read(variant(base, "localhost", "2026-11-20T12:00:00Z", "aaaaaaaa"), "x/3.json"),
  };
  json no_gpus = variant(golden("no_driver.json"), "localhost", "2026-11-21T13:00:00Z");
  nodes.push_back(read(no_gpus, "x/4.json"));
  const FleetTable table = merge_nodes(std::move(nodes), {}, k_now);
  ASSERT_EQ(table.nodes.size(), 3u);
  EXPECT_EQ(table.summary.nodes, 3);
  ASSERT_EQ(table.stale.size(), 1u);
  EXPECT_EQ(table.stale[0].source, "x/3.json");
  EXPECT_EQ(table.stale[0].superseded_by, "x/1.json");
  std::set<std::string> sources;
  for (const NodeReport& node : table.nodes) {
    sources.insert(node.source);
    EXPECT_TRUE(has_note(node, "host name shared by 2 machines")) << node.source;
  }
  EXPECT_EQ(sources, (std::set<std::string>{"x/1.json", "x/2.json", "x/4.json"}));
  EXPECT_TRUE(has_note(table.nodes[2], "names no GPU UUID: counted on its own"));
}

TEST(FleetHosts, OneHostWhenReportsShareAGpuOrOneNamesNone) {
  const json base = golden("h100x8_healthy.json");
  json swapped = variant(base, "dgx", "2026-11-21T12:00:00Z");
  // A GPU replaced between the runs: seven of eight UUIDs in common, the same machine.
  swapped["snapshot"]["gpus"][5]["uuid"] = "GPU-99999999-0000-0000-0000-000000000005";
  std::vector<NodeReport> nodes = {
      read(variant(base, "dgx", "2026-11-20T12:00:00Z"), "old.json"),
      read(swapped, "new.json"),
      // NVML failed in the newest run: no UUIDs, but only one machine has that name.
      read(variant(golden("nvml_mismatch.json"), "dgx", "2026-11-21T13:00:00Z"), "broken.json"),
  };
  const FleetTable table = merge_nodes(std::move(nodes), {}, k_now);
  ASSERT_EQ(table.nodes.size(), 1u);
  EXPECT_EQ(table.nodes[0].source, "broken.json");
  EXPECT_EQ(table.summary.stale, 2);
}

TEST(FleetHosts, AReportWithoutATimeIsOlderAndTiesGoToTheLastSource) {
  const json base = golden("h200_healthy.json");
  json untimed = variant(base, "n", "");
  untimed["context"].erase("generated_at");
  untimed["snapshot"].erase("collected_at");
  json corrupt = variant(base, "n", "yesterday");
  corrupt["snapshot"]["collected_at"] = "not a time either";
  // Timed beats untimed, whatever the path order.
  std::vector<NodeReport> nodes = {read(untimed, "z.json"), read(corrupt, "y.json"),
                                   read(variant(base, "n", "2020-01-01T00:00:00Z"), "a.json")};
  EXPECT_TRUE(has_note(nodes[0], "no generated_at: its age is unknown"));
  EXPECT_TRUE(has_note(nodes[1], "generated_at 'yesterday' is not a time"));
  EXPECT_FALSE(nodes[0].generated);
  FleetTable table = merge_nodes(nodes, {}, k_now);
  ASSERT_EQ(table.nodes.size(), 1u);
  EXPECT_EQ(table.nodes[0].source, "a.json");
  EXPECT_EQ(table.summary.stale, 2);

  // Without any time (or at the same time), the source that sorts last counts: node-10 after
  // node-2.
  table = merge_nodes({read(untimed, "r/node-10.json"), read(untimed, "r/node-2.json")}, {}, k_now);
  ASSERT_EQ(table.nodes.size(), 1u);
  EXPECT_EQ(table.nodes[0].source, "r/node-10.json");
  EXPECT_EQ(age_text(table.nodes[0].age), "-");
  const json same = variant(base, "n", "2026-11-21T12:00:00Z");
  table = merge_nodes({read(same, "r/node-10.json"), read(same, "r/node-2.json")}, {}, k_now);
  EXPECT_EQ(table.nodes[0].source, "r/node-10.json");
  EXPECT_EQ(table.stale[0].source, "r/node-2.json");
}

TEST(FleetHosts, WithoutGeneratedAtTheSnapshotTimeDatesTheReport) {
  json report = golden("h200_healthy.json");
  report["context"].erase("generated_at");
  const NodeReport node = read(report, "n.json");
  EXPECT_EQ(node.generated_at, report["snapshot"]["collected_at"]);
  ASSERT_TRUE(node.generated);
  EXPECT_EQ(format_utc_time(*node.generated), report["snapshot"]["collected_at"]);
  EXPECT_TRUE(has_note(node, "dated by its snapshot's collected_at"));
}

TEST(FleetHosts, AReportFromTheFutureCountsAndSaysSo) {
  const json base = golden("h200_healthy.json");
  std::vector<NodeReport> nodes = {read(variant(base, "n", "2026-11-21T17:30:00Z"), "skewed.json"),
                                   read(variant(base, "n", "2026-11-21T14:00:00Z"), "now.json")};
  const FleetTable table = merge_nodes(std::move(nodes), {}, k_now);
  ASSERT_EQ(table.nodes.size(), 1u);
  const NodeReport& node = table.nodes[0];
  EXPECT_EQ(node.source, "skewed.json");
  ASSERT_TRUE(node.age);
  EXPECT_EQ(node.age->count(), -3 * 3600);
  EXPECT_TRUE(has_note(node, "is ahead of this clock (2026-11-21T14:30:00Z)"));
  const std::string text = render_fleet_text(table);
  EXPECT_NE(text.find(" future "), std::string::npos) << text;
  const json merged = json::parse(render_fleet_json(table));
  EXPECT_EQ(merged["nodes"][0]["age"], "future");
  EXPECT_EQ(merged["nodes"][0]["age_s"], -3 * 3600);
  EXPECT_EQ(merged["merged_at"], "2026-11-21T14:30:00Z");
}

TEST(FleetHosts, AgeText) {
  EXPECT_EQ(age_text(std::nullopt), "-");
  EXPECT_EQ(age_text(seconds(0)), "0s");
  EXPECT_EQ(age_text(seconds(59)), "59s");
  EXPECT_EQ(age_text(seconds(60)), "1m");
  EXPECT_EQ(age_text(seconds(3599)), "59m");
  EXPECT_EQ(age_text(seconds(3600)), "1h");
  EXPECT_EQ(age_text(seconds(86399)), "23h");
  EXPECT_EQ(age_text(seconds(86400)), "1d");
  EXPECT_EQ(age_text(seconds(400 * 86400 + 5)), "400d");
  EXPECT_EQ(age_text(seconds(-30)), "0s"); // a little skew is no news
  EXPECT_EQ(age_text(seconds(-61)), "future");
  EXPECT_EQ(age_text(seconds(INT64_MIN)), "future");
}

TEST(FleetHosts, AgeAndModeColumns) {
  json report = variant(golden("h200_healthy.json"), "n", "2026-11-21T12:00:00Z");
  report["context"]["mode"] = "quick";
  const FleetTable table = merge_nodes({read(report, "n.json")}, {}, k_now);
  ASSERT_EQ(table.nodes.size(), 1u);
  EXPECT_EQ(table.nodes[0].mode, "quick");
  EXPECT_EQ(table.nodes[0].age, seconds(9000));
  const std::string text = render_fleet_text(table);
  EXPECT_NE(text.find("MODE   AGE"), std::string::npos) << text;
  EXPECT_NE(text.find("  quick  2h  "), std::string::npos) << text;
  const json merged = json::parse(render_fleet_json(table));
  EXPECT_EQ(merged["nodes"][0]["mode"], "quick");
  EXPECT_EQ(merged["nodes"][0]["age_s"], 9000);
  EXPECT_EQ(merged["nodes"][0]["age"], "2h");
  EXPECT_EQ(merged["nodes"][0]["generated_at"], "2026-11-21T12:00:00Z");
  EXPECT_NE(render_fleet_markdown(table).find("| quick | 2h | warn |"), std::string::npos)
      << render_fleet_markdown(table);
}

TEST(FleetHosts, FailingCodesNameTheirGpu) {
  const json report = golden("degraded_hw.json");
  // Expected from the report itself: each fail finding's GPU (else its result's) and that GPU's
  // identity in the inventory.
  std::set<CodeOnGpu> expected;
  for (const json& result : report["results"]) {
    if (result["status"] != "fail") {
      continue;
    }
    for (const json& finding : result["findings"]) {
      if (finding["severity"] != "fail") {
        continue;
      }
      const json& index =
          finding["gpu_index"].is_null() ? result["gpu_index"] : finding["gpu_index"];
      CodeOnGpu item{finding["code"].get<std::string>(), std::nullopt, "", ""};
      if (!index.is_null()) {
        item.gpu_index = index.get<int>();
        for (const json& gpu : report["snapshot"]["gpus"]) {
          if (gpu["index"] == index) {
            item.uuid = gpu["uuid"].get<std::string>();
            item.serial = gpu["serial"].get<std::string>();
          }
        }
      }
      expected.insert(item);
    }
  }
  ASSERT_GE(expected.size(), 2u);
  const NodeReport node = read(report, "n.json");
  EXPECT_EQ(std::set<CodeOnGpu>(node.failing.begin(), node.failing.end()), expected);
  const CodeOnGpu ecc =
      *std::find_if(node.failing.begin(), node.failing.end(),
                    [](const CodeOnGpu& c) { return c.code == "gpu.ecc_uncorrected"; });
  ASSERT_TRUE(ecc.gpu_index);
  EXPECT_FALSE(ecc.serial.empty());
  EXPECT_FALSE(ecc.uuid.empty());

  const FleetTable table = merge_nodes({node}, {}, k_now);
  const std::string text = render_fleet_text(table);
  const std::string label =
      fmt::format("gpu.ecc_uncorrected GPU {} ({})", *ecc.gpu_index, ecc.serial);
  EXPECT_NE(text.find(label), std::string::npos) << text;
  EXPECT_NE(text.find(fmt::format("{} (GPU {})",
                                  report["snapshot"]["host"]["hostname"].get<std::string>(),
                                  *ecc.gpu_index)),
            std::string::npos)
      << text;
  EXPECT_NE(render_fleet_markdown(table).find(label), std::string::npos);
  const json merged = json::parse(render_fleet_json(table));
  bool found = false;
  for (const json& item : merged["nodes"][0]["failing"]) {
    if (item["code"] == "gpu.ecc_uncorrected") {
      found = true;
      EXPECT_EQ(item["gpu_index"], *ecc.gpu_index);
      EXPECT_EQ(item["uuid"], ecc.uuid);
      EXPECT_EQ(item["serial"], ecc.serial);
    }
  }
  EXPECT_TRUE(found) << merged["nodes"][0].dump(1);
  EXPECT_EQ(merged["groups"][0]["members"][0]["gpu_indices"].size(), 1u);

  // Without a serial the UUID names the board; a code that is not a GPU's has no label.
  CodeOnGpu no_serial{"gpu.x", 2, "GPU-1234", ""};
  EXPECT_EQ(gpu_label(no_serial), "GPU 2 (GPU-1234)");
  EXPECT_EQ(gpu_label(CodeOnGpu{"driver.missing", std::nullopt, "", ""}), "");
  EXPECT_EQ(gpu_label(CodeOnGpu{"gpu.x", 0, "", ""}), "GPU 0");
}

TEST(FleetHosts, ANodeWhoseNvmlFailedShowsItsPciGpus) {
  json report = golden("nvml_mismatch.json");
  ASSERT_TRUE(report["snapshot"]["gpus"].empty());
  int on_pci = 0;
  for (const json& device : report["snapshot"]["kernel_module"]["pci_devices"]) {
    on_pci += device["class_code"].get<std::string>().rfind("0x0302", 0) == 0 ? 1 : 0;
  }
  ASSERT_GT(on_pci, 0);
  // An NVIDIA audio function and an NVSwitch are not GPUs.
  report["snapshot"]["kernel_module"]["pci_devices"].push_back(
      {{"bdf", "0000:17:00.1"}, {"class_code", "0x040300"}});
  report["snapshot"]["kernel_module"]["pci_devices"].push_back(
      {{"bdf", "0000:05:00.0"}, {"class_code", "0x068000"}});
  const NodeReport node = read(report, "n.json");
  EXPECT_EQ(node.gpu_count, 0);
  EXPECT_EQ(node.pci_gpu_count, on_pci);
  EXPECT_EQ(node.gpus, fmt::format("{} (PCI)", on_pci));
  const FleetTable table = merge_nodes({node}, {}, k_now);
  EXPECT_NE(render_fleet_text(table).find(fmt::format(" {} (PCI) ", on_pci)), std::string::npos);
  const json merged = json::parse(render_fleet_json(table));
  EXPECT_EQ(merged["nodes"][0]["pci_gpu_count"], on_pci);
  EXPECT_EQ(merged["nodes"][0]["gpu_count"], 0);

  // The healthy twin: NVML lists its GPUs, which the GPUs column shows.
  const NodeReport healthy = read(golden("h100x8_healthy.json"), "h.json");
  EXPECT_EQ(healthy.gpu_count, 8);
  EXPECT_EQ(healthy.pci_gpu_count, 8);
  EXPECT_EQ(healthy.gpus.find("(PCI)"), std::string::npos) << healthy.gpus;
  // No driver at all and nothing on the bus: 0.
  EXPECT_EQ(read(golden("no_driver.json"), "x.json").gpus, "0");
}

TEST(FleetHosts, RedactedReportsAreNeverTakenForOneHost) {
  // Redaction gives every report "host-0" and "GPU-0": merge cannot tell the machines apart.
  json report = variant(golden("h200_healthy.json"), "host-0", "2026-11-21T12:00:00Z");
  report["snapshot"]["gpus"][0]["uuid"] = "GPU-0";
  std::vector<NodeReport> nodes = {read(report, "a.json"), read(report, "b.json")};
  EXPECT_TRUE(nodes[0].anonymous);
  EXPECT_TRUE(has_note(nodes[0], "a redacted report"));
  const FleetTable table = merge_nodes(std::move(nodes), {}, k_now);
  EXPECT_EQ(table.summary.nodes, 2);
  EXPECT_EQ(table.summary.stale, 0);

  // The twin: a real host named like a placeholder, with real UUIDs, is recognised.
  const json real = variant(golden("h200_healthy.json"), "host-0", "2026-11-21T12:00:00Z");
  const FleetTable twin = merge_nodes({read(real, "a.json"), read(real, "b.json")}, {}, k_now);
  EXPECT_EQ(twin.summary.nodes, 1);
  EXPECT_EQ(twin.summary.stale, 1);
}

TEST(FleetHosts, ReportsWithoutAHostNameAreNeverTakenForOneHost) {
  json report = golden("h200_healthy.json");
  report["snapshot"]["host"].erase("hostname");
  const FleetTable table =
      merge_nodes({read(report, "day1/n.json"), read(report, "day2/n.json")}, {}, k_now);
  EXPECT_EQ(table.summary.nodes, 2);
  EXPECT_EQ(table.summary.stale, 0);
}

} // namespace
} // namespace gpucheck::fleet
