#include "render/prometheus.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "gpucheck/model/utc_time.hpp"
#include "render/utf8.hpp"

namespace gpucheck::render {

namespace {

using Labels = std::vector<std::pair<std::string, std::string>>;

constexpr std::string_view k_prefix = "gpucheck_";
constexpr double k_mib = 1024.0 * 1024.0;

/// How a report unit becomes a Prometheus base unit: the value is multiplied by `multiplier` and
/// divided by `divisor` (a division keeps 12 ms at 0.012 s exactly), the name loses
/// `name_suffix` (the unit the report spells in it) and gains `base`.
struct UnitRule {
  std::string_view unit;
  std::string_view name_suffix;
  double multiplier;
  double divisor;
  std::string_view base;
};

constexpr UnitRule k_unit_rules[] = {
    {"GB/s", "_gbps", 1e9, 1.0, "bytes_per_second"},
    {"MB/s", "_mbps", 1e6, 1.0, "bytes_per_second"},
    {"TFLOP/s", "_tflops", 1e12, 1.0, "flop_per_second"},
    {"GFLOP/s", "_gflops", 1e9, 1.0, "flop_per_second"},
    {"s", "_s", 1.0, 1.0, "seconds"},
    {"ms", "_ms", 1.0, 1e3, "seconds"},
    {"us", "_us", 1.0, 1e6, "seconds"},
    {"ns", "_ns", 1.0, 1e9, "seconds"},
    {"B", "_bytes", 1.0, 1.0, "bytes"},
    {"bytes", "_bytes", 1.0, 1.0, "bytes"},
    {"KiB", "_kib", 1024.0, 1.0, "bytes"},
    {"MiB", "_mib", k_mib, 1.0, "bytes"},
    {"GiB", "_gib", k_mib * 1024.0, 1.0, "bytes"},
    {"W", "_w", 1.0, 1.0, "watts"},
    {"C", "_c", 1.0, 1.0, "celsius"},
    {"%", "_percent", 1.0, 100.0, "ratio"},
};

constexpr Status k_statuses[] = {Status::pass, Status::warn, Status::fail, Status::skip,
                                 Status::error};
constexpr Severity k_severities[] = {Severity::info, Severity::warn, Severity::fail,
                                     Severity::error};

/// A sample value: Prometheus spells the special values +Inf, -Inf and NaN.
std::string sample_value(double value) {
  if (std::isnan(value)) {
    return "NaN";
  }
  if (std::isinf(value)) {
    return value > 0 ? "+Inf" : "-Inf";
  }
  return fmt::format("{}", value);
}

/// HELP text: only backslash and line feed are escaped there; UTF-8 kept valid.
std::string help_text(std::string_view text) {
  std::string out;
  for (const char c : visible_utf8(text)) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

/// Seconds since 1970 of "2026-11-21T12:00:00Z"; nullopt for anything else.
std::optional<int64_t> epoch_of(const std::string& iso_time) {
  if (const std::optional<std::chrono::sys_seconds> time = parse_utc_time(iso_time)) {
    return static_cast<int64_t>(time->time_since_epoch().count());
  }
  return std::nullopt;
}

class Exposition {
public:
  /// Declares a family (first HELP wins) and adds one series; a second series with the same
  /// labels is dropped (the format allows one sample per series).
  void add(const std::string& name, std::string_view help, const Labels& labels, double value) {
    Family& family = m_families[name];
    if (family.help.empty()) {
      family.help = help_text(help);
    }
    std::string text;
    for (const auto& [key, label_value] : labels) {
      text += fmt::format("{}{}=\"{}\"", text.empty() ? "" : ",", key,
                          prometheus_label_value(label_value));
    }
    if (family.seen.insert(text).second) {
      family.series.emplace_back(std::move(text), value);
    }
  }

  [[nodiscard]] bool has(const std::string& name) const { return m_families.contains(name); }

  [[nodiscard]] std::string str() const {
    std::string out;
    for (const auto& [name, family] : m_families) {
      out += fmt::format("# HELP {} {}\n# TYPE {} gauge\n", name, family.help, name);
      std::vector<std::pair<std::string, double>> series = family.series;
      std::stable_sort(series.begin(), series.end(),
                       [](const auto& a, const auto& b) { return a.first < b.first; });
      for (const auto& [labels, value] : series) {
        out += labels.empty() ? fmt::format("{} {}\n", name, sample_value(value))
                              : fmt::format("{}{{{}}} {}\n", name, labels, sample_value(value));
      }
    }
    return out;
  }

private:
  struct Family {
    std::string help;
    std::vector<std::pair<std::string, double>> series;
    std::set<std::string> seen;
  };
  std::map<std::string, Family> m_families;
};

class PrometheusWriter {
public:
  PrometheusWriter(const Report& report, const PrometheusOptions& options)
      : m_report(report), m_options(options) {}

  std::string render() {
    run();
    gpus();
    for (const CheckResult& result : m_report.results) {
      check(result);
    }
    // Check metrics last, so that a metric whose name would collide with one of the families
    // above is told apart (gpucheck_metric_*).
    for (const CheckResult& result : m_report.results) {
      for (const Metric& metric : result.metrics) {
        check_metric(result, metric);
      }
    }
    return m_out.str();
  }

private:
  /// GPU `index` as dcgm-exporter labels it, so that its dashboards and alerts join without
  /// relabelling: gpu, UUID, pci_bus_id, modelName, Hostname (empty when the snapshot lacks it).
  Labels gpu_labels(int index) const {
    std::string uuid;
    std::string bus;
    std::string model;
    for (const GpuInfo& gpu : m_report.snapshot.gpus) {
      if (gpu.index == index) {
        uuid = gpu.uuid;
        bus = gpu.pci_bus_id;
        model = gpu.name;
        break;
      }
    }
    return {{"gpu", std::to_string(index)},
            {"UUID", uuid},
            {"pci_bus_id", bus},
            {"modelName", model},
            {"Hostname", m_report.snapshot.host.hostname}};
  }

  /// One gauge per GPU when the snapshot knows its value, with `extra` labels after the GPU's.
  template <typename T>
  void gauge(const std::string& name, std::string_view help, const GpuInfo& gpu,
             const std::optional<T>& value, const Labels& extra = {}) {
    if (!value) {
      return;
    }
    Labels labels = gpu_labels(gpu.index);
    labels.insert(labels.end(), extra.begin(), extra.end());
    m_out.add(name, help, labels, static_cast<double>(*value));
  }

  /// What an admin alerts on, per GPU: ECC, retired pages and remapped rows, temperature,
  /// power, clock-event reasons, the PCIe link, NVLinks up and down, and the kernel log's Xids.
  void health(const GpuInfo& gpu) {
    // The help of each family that has several series per GPU, written once.
    constexpr std::string_view k_ecc =
        "ECC errors: volatile (since the driver loaded) or aggregate (the GPU's life), "
        "corrected or uncorrected";
    constexpr std::string_view k_retired =
        "Pages retired for single-bit (sbe) or double-bit (dbe) errors";
    constexpr std::string_view k_remapped = "Rows remapped for correctable or uncorrectable errors";
    constexpr std::string_view k_generation =
        "PCIe generation, current or the maximum of GPU and slot";
    constexpr std::string_view k_width = "PCIe width (lanes), current or the maximum";
    constexpr std::string_view k_nvlinks = "NVLinks that NVML reads, up or down";
    const auto flag = [](const std::optional<bool>& b) {
      return b ? std::optional<int>(*b ? 1 : 0) : std::nullopt;
    };
    gauge("gpucheck_gpu_ecc_errors", k_ecc, gpu, gpu.ecc_uncorrected_volatile,
          {{"type", "volatile"}, {"kind", "uncorrected"}});
    gauge("gpucheck_gpu_ecc_errors", k_ecc, gpu, gpu.ecc_corrected_volatile,
          {{"type", "volatile"}, {"kind", "corrected"}});
    gauge("gpucheck_gpu_ecc_errors", k_ecc, gpu, gpu.ecc_uncorrected_aggregate,
          {{"type", "aggregate"}, {"kind", "uncorrected"}});
    gauge("gpucheck_gpu_retired_pages", k_retired, gpu, gpu.retired_pages_sbe, {{"cause", "sbe"}});
    gauge("gpucheck_gpu_retired_pages", k_retired, gpu, gpu.retired_pages_dbe, {{"cause", "dbe"}});
    gauge("gpucheck_gpu_retired_pages_pending", "1 when a page retirement waits for a reset", gpu,
          flag(gpu.retired_pages_pending));
    gauge("gpucheck_gpu_remapped_rows", k_remapped, gpu, gpu.remapped_rows_correctable,
          {{"kind", "correctable"}});
    gauge("gpucheck_gpu_remapped_rows", k_remapped, gpu, gpu.remapped_rows_uncorrectable,
          {{"kind", "uncorrectable"}});
    gauge("gpucheck_gpu_remapped_rows_pending", "1 when a row remap waits for a reset", gpu,
          flag(gpu.remapped_rows_pending));
    gauge("gpucheck_gpu_remapped_rows_failure", "1 when a row remap failed", gpu,
          flag(gpu.remapped_rows_failure));
    gauge("gpucheck_gpu_temperature_celsius", "GPU temperature, degrees Celsius", gpu,
          gpu.temperature_c);
    gauge("gpucheck_gpu_power_watts", "Power draw, watts", gpu, gpu.power_w);
    gauge("gpucheck_gpu_power_limit_watts", "Power limit, watts", gpu, gpu.power_limit_w);
    gauge("gpucheck_gpu_clock_event_reasons",
          "NVML's clock event reasons bitmask (0: none; "
          "0x8 hardware slowdown, 0x40 hardware thermal slowdown, 0x80 power brake)",
          gpu, gpu.clock_event_reasons);
    gauge("gpucheck_gpu_pcie_link_generation", k_generation, gpu, gpu.pcie_gen_current,
          {{"link", "current"}});
    gauge("gpucheck_gpu_pcie_link_generation", k_generation, gpu, gpu.pcie_gen_max,
          {{"link", "max"}});
    gauge("gpucheck_gpu_pcie_link_width", k_width, gpu, gpu.pcie_width_current,
          {{"link", "current"}});
    gauge("gpucheck_gpu_pcie_link_width", k_width, gpu, gpu.pcie_width_max, {{"link", "max"}});
    if (!gpu.nvlinks.empty()) {
      const auto up = std::count_if(gpu.nvlinks.begin(), gpu.nvlinks.end(),
                                    [](const NvLinkInfo& l) { return l.active; });
      const auto size = static_cast<int64_t>(gpu.nvlinks.size());
      gauge("gpucheck_gpu_nvlinks", k_nvlinks, gpu, std::optional<int64_t>(up), {{"state", "up"}});
      gauge("gpucheck_gpu_nvlinks", k_nvlinks, gpu, std::optional<int64_t>(size - up),
            {{"state", "down"}});
    }
    // Xids of this GPU in the kernel log since boot, by number, and how long ago the last one.
    std::map<int, std::pair<int, double>> xids; // Xid -> (count, last seconds since boot)
    for (const KernelLogEvent& event : m_report.snapshot.kernel_log.events) {
      if (event.kind == "xid" && event.code && same_device(event.pci_bus_id, gpu.pci_bus_id)) {
        auto& [count, last] = xids[*event.code];
        ++count;
        last = std::max(last, event.seconds);
      }
    }
    const std::optional<double> uptime = m_report.snapshot.kernel_log.uptime_s;
    for (const auto& [xid, seen] : xids) {
      gauge("gpucheck_gpu_xid_events", "Xid lines of the kernel log since boot, by Xid", gpu,
            std::optional<int>(seen.first), {{"xid", std::to_string(xid)}});
      if (uptime) {
        gauge("gpucheck_gpu_xid_last_seconds_ago", "How long ago the last such Xid was logged", gpu,
              std::optional<double>(std::max(0.0, *uptime - seen.second)),
              {{"xid", std::to_string(xid)}});
      }
    }
  }

  /// Whether two PCI addresses name one device (an Xid line gives bus and device only).
  static bool same_device(std::string_view a, std::string_view b) {
    const auto key = [](std::string_view bdf) {
      std::string out;
      for (const char c : bdf.substr(bdf.size() >= 12 ? bdf.size() - 12 : 0, 10)) {
        out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      }
      return out;
    };
    return !a.empty() && !b.empty() && key(a) == key(b);
  }

  Labels result_labels(const CheckResult& result) const {
    Labels labels{{"check", result.check_id}};
    if (result.gpu_index) {
      for (auto& label : gpu_labels(*result.gpu_index)) {
        labels.push_back(std::move(label));
      }
    }
    return labels;
  }

  void run() {
    const ReportContext& ctx = m_report.context;
    const SystemSnapshot& snap = m_report.snapshot;
    std::string driver = snap.kernel_module.version.value_or("");
    if (driver.empty()) {
      driver = snap.nvml.driver_version.value_or("");
    }
    const std::string cuda = snap.cuda.driver_version
                                 ? fmt::format("{}.{}", *snap.cuda.driver_version / 1000,
                                               *snap.cuda.driver_version % 1000 / 10)
                                 : std::string();
    const LibraryFamily* cudnn = snap.library("cudnn");
    m_out.add("gpucheck_info",
              "gpucheck's version, the compatibility data it used, the run's mode, and the "
              "driver, the CUDA version it supports and the cuDNN that loads; always 1",
              {{"version", ctx.tool_version},
               {"matrix_version", ctx.matrix_version},
               {"mode", ctx.mode},
               {"driver", driver},
               {"cuda", cuda},
               {"cudnn", cudnn != nullptr && cudnn->load.loaded ? cudnn->load.version : ""},
               {"Hostname", snap.host.hostname}},
              1.0);
    if (std::optional<int64_t> epoch = epoch_of(ctx.generated_at)) {
      m_out.add("gpucheck_run_timestamp_seconds",
                "When the report was made (generated_at), seconds since 1970 UTC", {},
                static_cast<double>(*epoch));
    }
    if (m_options.run_duration) {
      m_out.add("gpucheck_run_duration_seconds", "Wall time of the whole run, seconds", {},
                static_cast<double>(m_options.run_duration->count()) / 1000.0);
    }
    const ReportSummary& sum = m_report.summary;
    for (const Status status : k_statuses) {
      const std::string name(to_string(status));
      m_out.add("gpucheck_status",
                "The run's verdict: 1 for its status (pass, warn, fail, skip, error), 0 for the "
                "others",
                {{"status", name}}, sum.overall == status ? 1.0 : 0.0);
      const int count = status == Status::pass   ? sum.pass
                        : status == Status::warn ? sum.warn
                        : status == Status::fail ? sum.fail
                        : status == Status::skip ? sum.skip
                                                 : sum.error;
      m_out.add("gpucheck_results", "Results (one per check, per GPU for per-GPU checks) by status",
                {{"status", name}}, count);
    }
    std::map<Severity, int> findings;
    int ignored = 0;
    for (const CheckResult& result : m_report.results) {
      for (const Finding& f : result.findings) {
        if (f.ignored) {
          ++ignored;
        } else {
          ++findings[f.severity];
        }
      }
    }
    for (const Severity severity : k_severities) {
      m_out.add("gpucheck_findings",
                "Findings by severity (info, warn, fail, error), not counting those --ignore "
                "named",
                {{"severity", std::string(to_string(severity))}}, findings[severity]);
    }
    m_out.add("gpucheck_findings_ignored", "Findings that --ignore named (kept, not counted)", {},
              ignored);
  }

  void gpus() {
    const std::vector<GpuInfo>& gpus = m_report.snapshot.gpus;
    m_out.add("gpucheck_gpus", "GPUs that NVML lists", {}, static_cast<double>(gpus.size()));
    for (const GpuInfo& gpu : gpus) {
      const Labels labels = gpu_labels(gpu.index);
      m_out.add("gpucheck_gpu_info", "One series per GPU with its identity; always 1", labels, 1.0);
      if (gpu.memory_total_bytes) {
        m_out.add("gpucheck_gpu_memory_total_bytes", "GPU memory that NVML reports, bytes",
                  gpu_labels(gpu.index), static_cast<double>(*gpu.memory_total_bytes));
      }
      health(gpu);
    }
  }

  void check(const CheckResult& result) {
    const Labels labels = result_labels(result);
    // One series per result, its status a label: an alert asks for status="fail"; four series
    // of 0 beside it were most of an 8-GPU node's samples.
    Labels with_status = labels;
    with_status.emplace_back("status", std::string(to_string(result.status)));
    m_out.add("gpucheck_check_status",
              "Each check's result (per GPU for per-GPU checks), its status (pass, warn, fail, "
              "skip, error) a label; always 1",
              with_status, 1.0);
    m_out.add("gpucheck_check_duration_seconds", "Wall time of each check, seconds", labels,
              static_cast<double>(result.duration.count()) / 1000.0);
    for (const Finding& f : result.findings) {
      if (f.ignored) {
        continue;
      }
      Labels finding_labels{{"check", result.check_id},
                            {"code", f.code},
                            {"severity", std::string(to_string(f.severity))}};
      const std::optional<int> gpu = f.gpu_index ? f.gpu_index : result.gpu_index;
      if (gpu) {
        for (auto& label : gpu_labels(*gpu)) {
          finding_labels.push_back(std::move(label));
        }
      }
      m_out.add("gpucheck_finding",
                "One series per finding (code and severity; docs/findings.md), always 1; those "
                "--ignore named are left out",
                finding_labels, 1.0);
    }
  }

  void check_metric(const CheckResult& result, const Metric& metric) {
    // The labels are the metric's fields (MetricLabels), set with its name where it was named.
    const MetricLabels& fields = metric.labels;
    std::string name = fields.family.empty() ? metric.name : fields.family;
    Labels labels{{"check", result.check_id}};
    std::optional<int> gpu = result.gpu_index;
    if (fields.gpu && gpu) {
      name = metric.name; // a per-GPU result's own figure keeps its name
    } else if (fields.gpu) {
      gpu = fields.gpu;
    }
    if (gpu) {
      for (auto& label : gpu_labels(*gpu)) {
        labels.push_back(std::move(label));
      }
    }
    if (fields.gpu_a && fields.gpu_b) {
      labels.emplace_back("gpu_a", fmt::format("{}", *fields.gpu_a));
      labels.emplace_back("gpu_b", fmt::format("{}", *fields.gpu_b));
    }
    if (fields.size_bytes) {
      labels.emplace_back("size_bytes", fmt::format("{}", *fields.size_bytes));
    }

    double value = metric.value;
    std::optional<double> floor = metric.expected_min;
    std::string family = prometheus_name(name);
    for (const UnitRule& rule : k_unit_rules) {
      if (metric.unit == rule.unit) {
        if (family.ends_with(rule.name_suffix)) {
          family.resize(family.size() - rule.name_suffix.size());
        }
        family += '_'; // in parts: GCC 12 -O3 warns on `"_" + std::string` (stringop-overflow)
        family += rule.base;
        value = value * rule.multiplier / rule.divisor;
        if (floor) {
          *floor = *floor * rule.multiplier / rule.divisor;
        }
        break;
      }
    }
    family = std::string(k_prefix) + family;
    if (m_out.has(family) && !m_metric_families.contains(family)) {
      family = "gpucheck_metric_" + family.substr(k_prefix.size());
    }
    m_metric_families.insert(family);
    const std::string help = metric.unit.empty()
                                 ? fmt::format("{}: {}", result.check_id, metric.name)
                                 : fmt::format("{}: {} (reported in {}, here in base units)",
                                               result.check_id, metric.name, metric.unit);
    m_out.add(family, help, labels, value);
    if (floor) {
      // Its expected floor beside it, with the same labels, so a rule compares the two.
      std::string floor_family = family + "_expected_min";
      m_metric_families.insert(floor_family);
      m_out.add(floor_family,
                fmt::format("{}: the least {} should be on this GPU model (docs/checks.md, "
                            "\"Expected figures\"), same units",
                            result.check_id, metric.name),
                labels, *floor);
    }
  }

  const Report& m_report;
  const PrometheusOptions& m_options;
  Exposition m_out;
  std::set<std::string> m_metric_families;
};

} // namespace

std::string prometheus_label_value(std::string_view text) {
  std::string out;
  for (const char c : visible_utf8(text)) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string prometheus_name(std::string_view text) {
  std::string out;
  for (const char c : text) {
    const bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':';
    const bool digit = c >= '0' && c <= '9';
    if (digit && out.empty()) {
      out += '_'; // a name never starts with a digit
    }
    out += letter || digit ? c : '_';
  }
  return out.empty() ? "_" : out;
}

std::string render_prometheus(const Report& report, const PrometheusOptions& options) {
  return PrometheusWriter(report, options).render();
}

} // namespace gpucheck::render
