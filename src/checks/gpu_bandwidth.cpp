#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <optional>

#include "checks/gpu_bandwidth_rules.hpp"
#include "checks/gpu_checks.hpp"
#include "gpucheck/finding_catalog.hpp"

namespace gpucheck::checks {

namespace {
constexpr CheckInfo k_info{
    "gpu.bandwidth", "Copy bandwidth",
    "Measures host<->device (pinned, both ways at once, pageable) and device-local copy "
    "bandwidth with nvbandwidth's method, verifies every copied buffer, and compares the result "
    "with what the PCIe link carries.",
    CheckKind::active};

std::optional<double> metric_of(const nlohmann::json& payload, const std::string& name) {
  for (const nlohmann::json& m : payload.value("metrics", nlohmann::json::array())) {
    if (m.value("name", "") == name) {
      return m.value("value", 0.0);
    }
  }
  return std::nullopt;
}

Judgement judge(const GpuTarget& gpu, const nlohmann::json& payload) {
  Judgement judgement;
  if (payload.contains("failure")) {
    judgement.summary = fmt::format("GPU {}: failed during {}", gpu.gpu_index,
                                    payload["failure"].value("stage", "setup"));
    return judgement;
  }
  const double h2d = metric_of(payload, "h2d_gbps").value_or(0.0);
  const double d2h = metric_of(payload, "d2h_gbps").value_or(0.0);
  const double d2d = metric_of(payload, "d2d_gbps").value_or(0.0);
  judgement.summary = fmt::format(
      "GPU {}: host->device {:.1f} GB/s, device->host {:.1f} GB/s, device-local {:.0f} GB/s; {}",
      gpu.gpu_index, h2d, d2h, d2d,
      all_verified(payload) ? "all copies verified" : "COPIED DATA CORRUPTED");

  const nlohmann::json& link = payload.value("link", nlohmann::json::object());
  std::optional<LinkRate> rate = link_rate_from_sysfs(link.value("current_link_speed", ""),
                                                      link.value("current_link_width", ""));
  if (!rate && gpu.pcie_gen && gpu.pcie_width) {
    rate = link_rate_from_generation(*gpu.pcie_gen, *gpu.pcie_width);
  }
  if (rate) {
    judgement.summary += fmt::format(" ({} carries {:.1f} GB/s)", rate->label, rate->gbps);
    const bool slower_is_h2d = h2d <= d2h;
    const double worst = slower_is_h2d ? h2d : d2h;
    if (is_bandwidth_low(worst, *rate)) {
      Finding finding = make_finding(
          "gpu.bandwidth_low", gpu.gpu_index, gpu.gpu_index,
          slower_is_h2d ? "host->device (pinned)" : "device->host (pinned)",
          fmt::format("{:.1f}", worst), fmt::format("{:.0f}", 100.0 * worst / rate->gbps),
          rate->label, fmt::format("{:.1f}", rate->gbps),
          fmt::format("{:.0f}", 100.0 * k_low_bandwidth_fraction),
          gpu.pci_bus_id.empty() ? std::string("<bus id>") : gpu.pci_bus_id, rate->generation);
      if (!gpu.other_processes.empty()) {
        finding.severity = Severity::info; // labelled, not failed, when the GPU is shared
      }
      judgement.findings.push_back(std::move(finding));
    }
  }
  const int timeouts = payload.value("gate_timeouts", 0);
  if (timeouts > 0) {
    judgement.findings.push_back(
        make_finding("gpu.copy_gate_timeout", gpu.gpu_index, gpu.gpu_index, timeouts));
  }
  return judgement;
}

double h2d_of(const CheckResult& result) {
  for (const Metric& m : result.metrics) {
    if (m.name == "h2d_gbps") {
      return m.value;
    }
  }
  return 0.0;
}

std::vector<CheckResult> run(const CheckContext& context) {
  // One GPU at a time: each is measured alone, as nvbandwidth does.
  std::vector<CheckResult> results = run_per_gpu(k_info, context, &judge);
  // GPUs of one model should move data alike: flag one well below its siblings' median.
  const GpuTargets targets = gpu_targets(context.snapshot, context.options.timeout);
  std::map<std::string, std::vector<size_t>> by_model;
  for (size_t i = 0; i < results.size() && i < targets.gpus.size(); ++i) {
    if (h2d_of(results[i]) > 0.0) {
      by_model[targets.gpus[i].name].push_back(i);
    }
  }
  for (const auto& [model, members] : by_model) {
    std::vector<double> values;
    for (size_t i : members) {
      values.push_back(h2d_of(results[i]));
    }
    for (size_t i : members) {
      if (auto ratio = outlier_ratio(h2d_of(results[i]), values)) {
        const GpuTarget& gpu = targets.gpus[i];
        results[i].findings.push_back(make_finding(
            "gpu.bandwidth_outlier", gpu.gpu_index, gpu.gpu_index, model,
            fmt::format("{:.1f}", h2d_of(results[i])), fmt::format("{:.0f}", 100.0 * *ratio),
            values.size(), fmt::format("{:.1f}", h2d_of(results[i]) / *ratio), gpu.pci_bus_id));
        results[i].status = worst_of(results[i].status, Status::warn);
      }
    }
  }
  return results;
}
} // namespace

CheckDef gpu_bandwidth_check() {
  return {k_info, &run};
}

} // namespace gpucheck::checks
