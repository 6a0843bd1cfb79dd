#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <climits>
#include <map>
#include <optional>
#include <span>

#include "checks/active/bandwidth_rules.hpp"
#include "checks/active/judging.hpp"
#include "engine/gpu_engine.hpp"
#include "findings/catalog.hpp"
#include "gpucheck/plural.hpp"
#include "protocol/payloads.hpp"

namespace gpucheck::checks {

namespace {
// Its findings, spelt here (CheckDef::findings adds them to the catalogue).
constexpr FindingCode k_gpu_copy_gate_timeout{"gpu.copy_gate_timeout"};

constexpr FindingSpec k_findings[] = {
    {k_gpu_copy_gate_timeout, Severity::warn, "copy timing gate timed out",
     "The spin kernel that holds queued copies until they are all enqueued timed out, so some "
     "samples started late. Those bandwidth figures are unreliable.",
     "GPU {0}: the copy gate timed out in {1}",
     "another process is probably keeping the GPU busy; rerun when it is idle",
     where(k_where_gpu_index, "how many samples timed out (\"3 samples\")")},
};

std::span<const FindingSpec> own_findings() {
  return k_findings;
}

constexpr CheckInfo k_info{
    "gpu.bandwidth", "Copy bandwidth",
    "Measures host<->device (pinned, both ways at once, pageable) and device-local copy "
    "bandwidth with nvbandwidth's method, verifies every copied buffer, and compares the result "
    "with what the PCIe link carries.",
    CheckKind::active};

std::optional<double> metric_of(const protocol::ChildEnvelope& envelope, std::string_view name) {
  for (const protocol::PayloadMetric& m : envelope.metrics) {
    if (m.name == name) {
      return m.value;
    }
  }
  return std::nullopt;
}

double h2d_of(const CheckResult& result) {
  for (const Metric& m : result.metrics) {
    if (m.name == "h2d_gbps") {
      return m.value;
    }
  }
  return 0.0;
}

/// One GPU's part of the copies together.
struct TogetherPart {
  size_t index; ///< its result
  protocol::CopiesTogetherPayload together;
};

/// The host's aggregate one way: the sum of every GPU's rate while all copied, with how well
/// their copy windows overlapped.
Metric aggregate_metric(const std::vector<TogetherPart>& parts, bool up) {
  const char* direction = up ? "h2d" : "d2h";
  double sum = 0.0;
  int64_t first_open = INT64_MAX;
  int64_t last_open = INT64_MIN;
  int64_t first_over = INT64_MAX;
  int64_t last_over = INT64_MIN;
  for (const TogetherPart& part : parts) {
    const protocol::TogetherDirection& d = up ? part.together.h2d : part.together.d2h;
    sum += d.gbps;
    first_open = std::min(first_open, d.opened_ns);
    last_open = std::max(last_open, d.opened_ns);
    first_over = std::min(first_over, d.over_ns);
    last_over = std::max(last_over, d.over_ns);
  }
  const double span = static_cast<double>(last_over - first_open);
  const double overlap =
      span > 0.0 ? std::max(0.0, static_cast<double>(first_over - last_open)) / span : 0.0;
  Metric metric;
  metric.name = fmt::format("host_{}_all_gpus_gbps", direction);
  metric.value = sum;
  metric.unit = "GB/s";
  metric.note = fmt::format("{} GPUs copying {} at once: the sum of each GPU's rate; their copy "
                            "windows overlapped {:.0f}%",
                            parts.size(), up ? "host->device" : "device->host", 100.0 * overlap);
  return metric;
}

/// Several GPUs: each GPU's host copies again, every GPU at once (engine::Work::copies_together):
/// each GPU's rate while all copied, and the host's aggregate (their sum, as DCGM's PCIe test
/// reports it) on every GPU's result, with how well the copy windows overlapped.
void add_copies_together(std::vector<CheckResult>& results, const CheckContext& context,
                         const GpuTargets& targets, const std::vector<engine::TargetKey>& keys) {
  if (context.gpu_engine == nullptr || targets.gpus.size() < 2 ||
      results.size() != targets.gpus.size()) {
    return;
  }
  std::vector<TogetherPart> parts;
  for (size_t i = 0; i < targets.gpus.size(); ++i) {
    const std::optional<engine::JobView> view =
        context.gpu_engine->result(engine::Work::copies_together, keys[i], keys);
    if (!view || !view->job.outcome) {
      continue; // not planned, or not run (the reason is the copies' own result's)
    }
    CheckResult& result = results[i];
    const GpuTarget& gpu = targets.gpus[i];
    const process::ChildOutcome& outcome = *view->job.outcome;
    if (!outcome.ok()) {
      Finding finding = make_finding(codes::k_gpu_child_failed, gpu.gpu_index, gpu.gpu_index,
                                     "host copies on every GPU at once",
                                     outcome.failure ? outcome.failure->detail : "no result");
      result.status = worst_of(result.status, status_for(finding.severity));
      result.findings.push_back(std::move(finding));
      continue;
    }
    const ReadEnvelope envelope = protocol::read_envelope(*outcome.payload);
    for (Finding& finding : common_findings("host copies on every GPU at once", gpu, envelope)) {
      // A failure both parts met (no context, no driver) is reported once.
      const bool known =
          std::any_of(result.findings.begin(), result.findings.end(), [&finding](const Finding& f) {
            return f.code == finding.code && f.message == finding.message;
          });
      if (!known) {
        result.status = worst_of(result.status, status_for(finding.severity));
        result.findings.push_back(std::move(finding));
      }
    }
    const bool contended = !view->gpu.other_processes().empty();
    for (Metric& metric : payload_metrics(envelope, contended)) {
      if (metric.name.find("together") != std::string::npos) {
        result.metrics.push_back(std::move(metric));
      }
    }
    const Expected<std::optional<protocol::CopiesTogetherPayload>> together =
        protocol::read_copies_together(*outcome.payload);
    if (!together) {
      Finding finding =
          make_finding(codes::k_gpu_child_failed, gpu.gpu_index, gpu.gpu_index,
                       "host copies on every GPU at once",
                       fmt::format("its result could not be read: {}", together.error().message));
      result.status = worst_of(result.status, status_for(finding.severity));
      result.findings.push_back(std::move(finding));
    } else if (together.value()) {
      parts.push_back({i, *together.value()});
    }
  }
  if (parts.size() < 2) {
    return;
  }
  for (const bool up : {true, false}) {
    const Metric metric = aggregate_metric(parts, up);
    for (const TogetherPart& part : parts) {
      results[part.index].metrics.push_back(metric);
    }
  }
}

/// The device-local copy, a work of its own (engine::Work::local_copies), folded into the host
/// copies' payload before it is judged; its own failure is a finding of its own.
void fold_local_copy(const CheckContext& context, const std::vector<engine::TargetKey>& keys,
                     size_t index, const GpuTarget& gpu, nlohmann::json& payload,
                     std::vector<Finding>& findings) {
  if (context.gpu_engine == nullptr || index >= keys.size()) {
    return;
  }
  const std::optional<engine::JobView> view =
      context.gpu_engine->result(engine::Work::local_copies, keys[index], keys);
  if (!view || !view->job.outcome) {
    return; // not planned, or not run: the host copies' own result or the stop says why
  }
  const process::ChildOutcome& outcome = *view->job.outcome;
  std::string detail;
  if (!outcome.ok()) {
    detail = outcome.failure ? outcome.failure->detail : "no result";
  } else if (const std::optional<Error> error =
                 protocol::fold_local_copies(payload, *outcome.payload)) {
    detail = fmt::format("its result could not be read: {}", error->message);
  }
  if (!detail.empty()) {
    findings.push_back(make_finding(codes::k_gpu_child_failed, gpu.gpu_index, gpu.gpu_index,
                                    "the device-local copy", detail));
  }
}

std::vector<CheckResult> run(const CheckContext& context) {
  const GpuTargets targets = gpu_targets(context.snapshot, context.options.timeout);
  std::vector<engine::TargetKey> keys;
  for (const GpuTarget& gpu : targets.gpus) {
    keys.push_back({gpu.ordinal, gpu.pci_bus_id});
  }
  // One GPU at a time: each is measured alone, as nvbandwidth does.
  std::vector<CheckResult> results =
      run_per_gpu(k_info, context, &judge_gpu_bandwidth,
                  [&context, &keys](size_t index, const GpuTarget& gpu, nlohmann::json& payload,
                                    std::vector<Finding>& findings) {
                    fold_local_copy(context, keys, index, gpu, payload, findings);
                  });
  // GPUs of one model should move data alike: flag one well below its siblings' median.
  add_copies_together(results, context, targets, keys);
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
            codes::k_gpu_bandwidth_outlier, gpu.gpu_index, gpu.gpu_index, model,
            fmt::format("{:.1f}", h2d_of(results[i])), fmt::format("{:.0f}", 100.0 * *ratio),
            values.size(), fmt::format("{:.1f}", h2d_of(results[i]) / *ratio), gpu.pci_bus_id));
        results[i].status = worst_of(results[i].status, Status::warn);
      }
    }
  }
  return results;
}
} // namespace

Judgement judge_gpu_bandwidth(const GpuTarget& gpu, const nlohmann::json& payload) {
  // Through the typed reader: a payload that is not an object, or a "failure" or "metrics" of the
  // wrong type, is an unreadable result, not an exception (found by fuzz_child_output).
  const Expected<protocol::ChildEnvelope> envelope = protocol::read_envelope(payload);
  if (!envelope) {
    return unreadable_result(k_info.title, gpu, envelope.error());
  }
  Judgement judgement;
  if (envelope->failure) {
    judgement.summary =
        fmt::format("GPU {}: failed during {}", gpu.gpu_index,
                    envelope->failure->stage.empty() ? "setup" : envelope->failure->stage);
    return judgement;
  }
  const double h2d = metric_of(*envelope, "h2d_gbps").value_or(0.0);
  const double d2h = metric_of(*envelope, "d2h_gbps").value_or(0.0);
  const std::optional<double> d2d = metric_of(*envelope, "d2d_gbps");
  judgement.summary =
      fmt::format("GPU {}: host->device {:.1f} GB/s, device->host {:.1f} GB/s, device-local {}; {}",
                  gpu.gpu_index, h2d, d2h, d2d ? fmt::format("{:.0f} GB/s", *d2d) : "not measured",
                  all_verified(payload) ? "all copies verified" : "COPIED DATA CORRUPTED");

  const Expected<protocol::BandwidthPayload> bandwidth = protocol::read_bandwidth(payload);
  if (!bandwidth) {
    return unreadable_result(k_info.title, gpu, bandwidth.error());
  }
  const protocol::PcieLinkReading link =
      bandwidth.value().link.value_or(protocol::PcieLinkReading{});
  std::optional<LinkRate> rate = link_rate_from_sysfs(link.current_link_speed.value_or(""),
                                                      link.current_link_width.value_or(""));
  if (!rate && gpu.pcie_gen && gpu.pcie_width) {
    rate = link_rate_from_generation(*gpu.pcie_gen, *gpu.pcie_width);
  }
  if (rate) {
    judgement.summary += fmt::format(" ({} carries {:.1f} GB/s)", rate->label, rate->gbps);
    const bool slower_is_h2d = h2d <= d2h;
    const double worst = slower_is_h2d ? h2d : d2h;
    if (is_bandwidth_low(worst, *rate)) {
      Finding finding = make_finding(
          codes::k_gpu_bandwidth_low, gpu.gpu_index, gpu.gpu_index,
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
  const int timeouts = bandwidth.value().gate_timeouts.value_or(0);
  if (timeouts > 0) {
    judgement.findings.push_back(make_finding(k_gpu_copy_gate_timeout, gpu.gpu_index, gpu.gpu_index,
                                              plural(timeouts, "sample")));
  }
  return judgement;
}

CheckDef gpu_bandwidth_check() {
  return {k_info, &run, &own_findings};
}

} // namespace gpucheck::checks
