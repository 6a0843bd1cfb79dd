// Prometheus renderer: names, base units, labels, one status series per status, escaping and
// the exposition format's grouping rules. tests/prometheus/check_exposition.py parses the
// goldens and the binary's output with prometheus_client as well.
#include <gtest/gtest.h>

#include <limits>
#include <map>
#include <set>
#include <sstream>

#include "render/prometheus.hpp"
#include "support/text_and_processes.hpp"

namespace gpucheck::render {
namespace {

CheckResult prometheus_result(std::string id, Status status,
                              std::optional<int> gpu = std::nullopt) {
  CheckResult r;
  r.check_id = std::move(id);
  r.title = "title of " + r.check_id;
  r.status = status;
  r.summary = "summary";
  r.gpu_index = gpu;
  r.duration = std::chrono::milliseconds(250);
  return r;
}

Report two_gpus() {
  Report report;
  report.context.tool_version = "0.1.0";
  report.context.generated_at = "2026-11-21T12:00:00Z";
  report.context.mode = "standard";
  report.context.matrix_version = "2026.11.1";
  report.snapshot.host.hostname = "node7";
  for (int i = 0; i < 2; ++i) {
    GpuInfo gpu;
    gpu.index = i;
    gpu.name = "NVIDIA H100 80GB HBM3";
    gpu.uuid = "GPU-0000000" + std::to_string(i);
    gpu.pci_bus_id = "00000000:1" + std::to_string(i) + ":00.0";
    report.snapshot.gpus.push_back(gpu);
  }
  CheckResult bandwidth = prometheus_result("gpu.bandwidth", Status::pass, 1);
  bandwidth.metrics = {{"h2d_gbps", 55.5, "GB/s", "median of 5"},
                       {"kernel_load_ms", 12.0, "ms", ""},
                       {"host_peak_rss_mib", 2.0, "MiB", ""}};
  report.results.push_back(bandwidth);
  CheckResult ecc = prometheus_result("gpu.ecc", Status::fail, 0);
  ecc.findings = {{"gpu.ecc_uncorrected", Severity::fail, "3 errors", "drain", 0, false},
                  {"gpu.persistence_off", Severity::warn, "off", "turn on", 0, true}};
  report.results.push_back(ecc);
  CheckResult p2p = prometheus_result("gpu.p2p", Status::pass);
  // As the checks make them: the labels are fields, set with the name.
  p2p.metrics = {pair_metric("p2p", 0, 1, "write_gbps", 300.0, "GB/s", ""),
                 pair_metric("p2p", 1, 0, "write_gbps", 290.0, "GB/s", ""),
                 sized_metric("nccl_allreduce", 256ULL << 20, "busbw_gbps", 360.0, "GB/s", ""),
                 gpu_metric(1, "numa_node", 1.0, "", ""),
                 sized_pair_metric("p2p", 0, 1, 64ULL << 20, "gbps", 380.0, "GB/s", ""),
                 {"nvlink_active", 18.0, "links", ""}};
  report.results.push_back(p2p);
  report.summary = summarize(report.results);
  return report;
}

using testing::lines_of;

bool has_line(const std::string& text, const std::string& line) {
  for (const std::string& l : lines_of(text)) {
    if (l == line) {
      return true;
    }
  }
  return false;
}

TEST(PrometheusRenderer, MetricsInBaseUnitsWithGpuLabels) {
  const std::string out = render_prometheus(two_gpus());
  // dcgm-exporter's labels (issue 36 item 1): its dashboards and alerts join these series.
  const std::string gpu1 = "gpu=\"1\",UUID=\"GPU-00000001\",pci_bus_id=\"00000000:11:00.0\","
                           "modelName=\"NVIDIA H100 80GB HBM3\",Hostname=\"node7\"";
  EXPECT_TRUE(has_line(out, "gpucheck_h2d_bytes_per_second{check=\"gpu.bandwidth\"," + gpu1 +
                                "} 55500000000"))
      << out;
  EXPECT_TRUE(
      has_line(out, "gpucheck_kernel_load_seconds{check=\"gpu.bandwidth\"," + gpu1 + "} 0.012"));
  EXPECT_TRUE(
      has_line(out, "gpucheck_host_peak_rss_bytes{check=\"gpu.bandwidth\"," + gpu1 + "} 2097152"));
  // GPU pairs, sizes and "gpuN_" become labels; a unit that is not one Prometheus knows keeps
  // the name as it is.
  EXPECT_TRUE(has_line(out, "gpucheck_p2p_write_bytes_per_second{check=\"gpu.p2p\",gpu_a=\"0\","
                            "gpu_b=\"1\"} 300000000000"));
  EXPECT_TRUE(has_line(out, "gpucheck_p2p_write_bytes_per_second{check=\"gpu.p2p\",gpu_a=\"1\","
                            "gpu_b=\"0\"} 290000000000"));
  EXPECT_TRUE(has_line(out, "gpucheck_nccl_allreduce_busbw_bytes_per_second{check=\"gpu.p2p\","
                            "size_bytes=\"268435456\"} 360000000000"));
  EXPECT_TRUE(has_line(out, "gpucheck_gpu_numa_node{check=\"gpu.p2p\"," + gpu1 + "} 1"));
  EXPECT_TRUE(has_line(out, "gpucheck_p2p_size_bytes_per_second{check=\"gpu.p2p\",gpu_a=\"0\","
                            "gpu_b=\"1\",size_bytes=\"67108864\"} 380000000000"));
  EXPECT_TRUE(has_line(out, "gpucheck_nvlink_active{check=\"gpu.p2p\"} 18"));
  EXPECT_TRUE(has_line(out, "# TYPE gpucheck_h2d_bytes_per_second gauge"));
  EXPECT_EQ(out.find("_total"), std::string::npos) << "nothing here is a counter";
}

// Every figure with an expected floor carries it beside it (issue 36 item 1, with issue 35's
// floors): same labels, same base units, so `figure < figure_expected_min` joins one to one.
TEST(PrometheusRenderer, ExpectedFloorsBesideTheirFigures) {
  Report report = two_gpus();
  report.results[0].metrics[0].expected_min = 40.0;
  report.results[0].metrics[0].expected = "PCIe Gen5 x16: 0.63 of 63 GB/s";
  const std::string out = render_prometheus(report);
  const std::string gpu1 = "gpu=\"1\",UUID=\"GPU-00000001\",pci_bus_id=\"00000000:11:00.0\","
                           "modelName=\"NVIDIA H100 80GB HBM3\",Hostname=\"node7\"";
  EXPECT_TRUE(has_line(out, "gpucheck_h2d_bytes_per_second_expected_min{check=\"gpu.bandwidth\"," +
                                gpu1 + "} 40000000000"))
      << out;
  EXPECT_TRUE(has_line(out, "# TYPE gpucheck_h2d_bytes_per_second_expected_min gauge"));
  // A figure without a floor has no such series.
  EXPECT_EQ(out.find("gpucheck_kernel_load_seconds_expected_min"), std::string::npos);
  EXPECT_EQ(render_prometheus(two_gpus()).find("_expected_min"), std::string::npos);
}

TEST(PrometheusRenderer, EachResultIsOneSeriesWithItsStatus) {
  const std::string out = render_prometheus(two_gpus());
  const std::string gpu0 = "gpu=\"0\",UUID=\"GPU-00000000\",pci_bus_id=\"00000000:10:00.0\","
                           "modelName=\"NVIDIA H100 80GB HBM3\",Hostname=\"node7\"";
  const std::string ecc = "gpucheck_check_status{check=\"gpu.ecc\"," + gpu0 + ",status=\"";
  EXPECT_TRUE(has_line(out, ecc + "fail\"} 1")) << out;
  // No series of 0 for the other statuses (issue 36 item 1: 682 of 920 samples were).
  for (const char* other : {"pass", "warn", "skip", "error"}) {
    EXPECT_EQ(out.find(ecc + other), std::string::npos) << other;
  }
  EXPECT_TRUE(has_line(out, "gpucheck_status{status=\"fail\"} 1"));
  EXPECT_TRUE(has_line(out, "gpucheck_status{status=\"pass\"} 0"));
  EXPECT_TRUE(has_line(out, "gpucheck_results{status=\"pass\"} 2"));
  EXPECT_TRUE(has_line(out, "gpucheck_results{status=\"fail\"} 1"));
  // The ignored warning is counted apart and has no finding series.
  EXPECT_TRUE(has_line(out, "gpucheck_findings{severity=\"fail\"} 1"));
  EXPECT_TRUE(has_line(out, "gpucheck_findings{severity=\"warn\"} 0"));
  EXPECT_TRUE(has_line(out, "gpucheck_findings_ignored 1"));
  EXPECT_TRUE(has_line(out, "gpucheck_finding{check=\"gpu.ecc\",code=\"gpu.ecc_uncorrected\","
                            "severity=\"fail\"," +
                                gpu0 + "} 1"));
  EXPECT_EQ(out.find("gpu.persistence_off"), std::string::npos);
}

TEST(PrometheusRenderer, RunFactsAndBuildInfo) {
  const std::string without = render_prometheus(two_gpus());
  EXPECT_TRUE(has_line(without, "gpucheck_run_timestamp_seconds 1795262400")) << without;
  EXPECT_EQ(without.find("gpucheck_run_duration_seconds"), std::string::npos);
  const std::string with =
      render_prometheus(two_gpus(), PrometheusOptions{std::chrono::milliseconds(2500)});
  EXPECT_TRUE(has_line(with, "gpucheck_run_duration_seconds 2.5"));
  EXPECT_TRUE(has_line(with, "gpucheck_info{version=\"0.1.0\",matrix_version=\"2026.11.1\","
                             "mode=\"standard\",driver=\"\",cuda=\"\",cudnn=\"\","
                             "Hostname=\"node7\"} 1"))
      << with;
  EXPECT_TRUE(has_line(with, "gpucheck_gpus 2"));
  EXPECT_TRUE(has_line(with,
                       "gpucheck_gpu_info{gpu=\"0\",UUID=\"GPU-00000000\",pci_bus_id=\"00000000:10:"
                       "00.0\",modelName=\"NVIDIA H100 80GB HBM3\",Hostname=\"node7\"} 1"));
  EXPECT_TRUE(has_line(with, "gpucheck_check_duration_seconds{check=\"gpu.p2p\"} 0.25"));
}

// Issue 36 item 1: the numbers an admin alerts on, per GPU, with dcgm-exporter's labels.
TEST(PrometheusRenderer, HealthGaugesPerGpu) {
  Report report = two_gpus();
  GpuInfo& gpu = report.snapshot.gpus[1];
  gpu.temperature_c = 91;
  gpu.ecc_uncorrected_volatile = 3;
  gpu.remapped_rows_pending = true;
  gpu.pcie_width_current = 4;
  gpu.pcie_width_max = 16;
  gpu.nvlinks = {NvLinkInfo{0, true}, NvLinkInfo{1, false}, NvLinkInfo{2, true}};
  // Two Xid 79 lines for GPU 1 (bus and device only, as the driver prints), one for another GPU.
  for (const auto& [bus, seconds] : std::vector<std::pair<std::string, double>>{
           {"0000:11:00.0", 100.0}, {"0000:11:00.0", 400.0}, {"0000:99:00.0", 50.0}}) {
    KernelLogEvent event;
    event.kind = "xid";
    event.code = 79;
    event.pci_bus_id = bus;
    event.seconds = seconds;
    report.snapshot.kernel_log.events.push_back(event);
  }
  report.snapshot.kernel_log.uptime_s = 1000.0;
  const std::string out = render_prometheus(report);
  const std::string gpu1 = "gpu=\"1\",UUID=\"GPU-00000001\",pci_bus_id=\"00000000:11:00.0\","
                           "modelName=\"NVIDIA H100 80GB HBM3\",Hostname=\"node7\"";
  EXPECT_TRUE(has_line(out, "gpucheck_gpu_temperature_celsius{" + gpu1 + "} 91")) << out;
  EXPECT_TRUE(has_line(out, "gpucheck_gpu_ecc_errors{" + gpu1 +
                                ",type=\"volatile\",kind=\"uncorrected\"} 3"));
  EXPECT_TRUE(has_line(out, "gpucheck_gpu_remapped_rows_pending{" + gpu1 + "} 1"));
  EXPECT_TRUE(has_line(out, "gpucheck_gpu_pcie_link_width{" + gpu1 + ",link=\"current\"} 4"));
  EXPECT_TRUE(has_line(out, "gpucheck_gpu_pcie_link_width{" + gpu1 + ",link=\"max\"} 16"));
  EXPECT_TRUE(has_line(out, "gpucheck_gpu_nvlinks{" + gpu1 + ",state=\"down\"} 1"));
  EXPECT_TRUE(has_line(out, "gpucheck_gpu_nvlinks{" + gpu1 + ",state=\"up\"} 2"));
  EXPECT_TRUE(has_line(out, "gpucheck_gpu_xid_events{" + gpu1 + ",xid=\"79\"} 2"));
  EXPECT_TRUE(has_line(out, "gpucheck_gpu_xid_last_seconds_ago{" + gpu1 + ",xid=\"79\"} 600"));
  // What the snapshot does not know is no series (GPU 0 has no temperature): never a made-up 0.
  EXPECT_EQ(out.find("gpucheck_gpu_temperature_celsius{gpu=\"0\""), std::string::npos);
}

TEST(PrometheusRenderer, FamiliesAreContiguousWithOneHelpAndTypeEach) {
  const std::string out = render_prometheus(two_gpus());
  std::set<std::string> closed;
  std::string current;
  std::map<std::string, int> help;
  std::map<std::string, int> type;
  for (const std::string& line : lines_of(out)) {
    ASSERT_FALSE(line.empty());
    if (line.starts_with("# HELP ")) {
      ++help[line.substr(7, line.find(' ', 7) - 7)];
      continue;
    }
    if (line.starts_with("# TYPE ")) {
      const std::string name = line.substr(7, line.find(' ', 7) - 7);
      ++type[name];
      EXPECT_TRUE(line.ends_with(" gauge")) << line;
      EXPECT_FALSE(closed.contains(name)) << name << " appears twice";
      if (!current.empty()) {
        closed.insert(current);
      }
      current = name;
      continue;
    }
    const std::string name = line.substr(0, line.find_first_of("{ "));
    EXPECT_EQ(name, current) << line;
  }
  for (const auto& [name, n] : type) {
    EXPECT_EQ(n, 1) << name;
    EXPECT_EQ(help[name], 1) << name;
  }
}

TEST(PrometheusRenderer, LabelValuesAreEscapedAndValidUtf8) {
  EXPECT_EQ(prometheus_label_value("a\\b\"c\nd"), "a\\\\b\\\"c\\nd");
  // A byte that is not UTF-8 becomes the visible text \xff, its backslash escaped in turn.
  EXPECT_EQ(prometheus_label_value("GPU\xff"), "GPU\\\\xff");
  EXPECT_EQ(prometheus_label_value("Grüße"), "Grüße");
  Report report = two_gpus();
  report.snapshot.gpus[0].name = "evil\"} 1\ngpucheck_status{status=\"pass\"} 1\n\xc3";
  const std::string out = render_prometheus(report);
  EXPECT_FALSE(has_line(out, "gpucheck_status{status=\"pass\"} 1"));
  EXPECT_NE(
      out.find("modelName=\"evil\\\"} 1\\ngpucheck_status{status=\\\"pass\\\"} 1\\n\\\\xc3\""),
      std::string::npos)
      << out;
}

TEST(PrometheusRenderer, NamesAreSanitisedAndCollisionsKeptApart) {
  EXPECT_EQ(prometheus_name("h2d-gbps.x"), "h2d_gbps_x");
  EXPECT_EQ(prometheus_name("9lives"), "_9lives");
  EXPECT_EQ(prometheus_name(""), "_");
  Report report = two_gpus();
  // A metric whose converted name is one of the fixed families gets its own family.
  report.results[2].metrics.push_back({"check_duration_s", 7.0, "s", ""});
  report.results[2].metrics.push_back({"we\xffird name", 1.0, "", ""});
  const std::string out = render_prometheus(report);
  EXPECT_TRUE(has_line(out, "gpucheck_metric_check_duration_seconds{check=\"gpu.p2p\"} 7")) << out;
  EXPECT_TRUE(has_line(out, "gpucheck_we_ird_name{check=\"gpu.p2p\"} 1"));
}

TEST(PrometheusRenderer, SpecialValuesUseTheFormatsSpelling) {
  Report report = two_gpus();
  report.results[2].metrics = {{"a_gbps", std::numeric_limits<double>::infinity(), "GB/s", ""},
                               {"b", std::numeric_limits<double>::quiet_NaN(), "", ""}};
  const std::string out = render_prometheus(report);
  EXPECT_TRUE(has_line(out, "gpucheck_a_bytes_per_second{check=\"gpu.p2p\"} +Inf")) << out;
  EXPECT_TRUE(has_line(out, "gpucheck_b{check=\"gpu.p2p\"} NaN"));
}

TEST(PrometheusRenderer, LabelsComeFromTheMetricsFieldsNotItsName) {
  // A name that looks like a pair's, without the fields: one series under that name, no labels
  // read out of it.
  Report report = two_gpus();
  CheckResult odd = prometheus_result("gpu.p2p", Status::pass);
  odd.metrics = {{"p2p_7_8_odd_gbps", 1.0, "GB/s", ""}};
  report.results = {odd};
  const std::string out = render_prometheus(report, PrometheusOptions{});
  EXPECT_TRUE(has_line(out, "gpucheck_p2p_7_8_odd_bytes_per_second{check=\"gpu.p2p\"} 1000000000"))
      << out;
  // The same name read back from a report's JSON gets its labels.
  odd.metrics = {labelled(odd.metrics[0])};
  report.results = {odd};
  EXPECT_TRUE(has_line(render_prometheus(report, PrometheusOptions{}),
                       "gpucheck_p2p_odd_bytes_per_second{check=\"gpu.p2p\",gpu_a=\"7\","
                       "gpu_b=\"8\"} 1000000000"));
}

} // namespace
} // namespace gpucheck::render
