// gpu.bandwidth's judge, findings, metrics and registration: the host copies judged against the
// PCIe link, the device-local copy folded in, the copies on every GPU at once and the siblings
// compared.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <climits>
#include <map>
#include <optional>
#include <span>

#include "checks/active/bandwidth_rules.hpp"
#include "engine/gpu_engine.hpp"
#include "gpu_checks/bandwidth/bandwidth.hpp"
#include "gpu_checks/registry.hpp"
#include "gpucheck/plural.hpp"
#include "protocol/payloads.hpp"

namespace gpucheck::gpu_checks::bandwidth {

namespace {
using checks::GpuTarget;
using checks::GpuTargets;
using checks::Judgement;

constexpr FindingSpec k_findings[] = {
    {k_copy_corrupt, Severity::fail, "copied data corrupted",
     "Data copied between host and GPU, or inside the GPU, came out different from what went in.",
     "GPU {0}: {1}: {2} of {3} words wrong, first at word {4}: got {5}, expected {6}",
     "this is a hardware or platform fault: read driver.kernel_log's Xid and PCIe AER findings, "
     "the ECC "
     "counters (nvidia-smi -q -d ECC), IOMMU settings, and reseat the card; run dcgmi diag -r 3",
     where(k_where_gpu_index, "the copy checked (\"pinned host->device\")", "words wrong",
           "words checked", "index of the first wrong word", "value read there", "value expected"),
     Drain::yes},
    {k_copy_gate_timeout, Severity::warn, "copy timing gate timed out",
     "The spin kernel that holds queued copies until they are all enqueued timed out, so some "
     "samples started late. Those bandwidth figures are unreliable.",
     "GPU {0}: the copy gate timed out in {1}",
     "another process is probably keeping the GPU busy; rerun when it is idle",
     where(k_where_gpu_index, "how many samples timed out (\"3 samples\")")},
    {k_bandwidth_low, Severity::warn, "host<->device bandwidth below what the link carries",
     "Copies between host and GPU run well below what the negotiated PCIe link can carry. "
     "Usual causes: a link trained at a lower generation or width (slot, riser, BIOS setting, "
     "power saving), or memory on the far NUMA node.",
     "{1} on GPU {0}: {2} GB/s is {3}% of what {4} carries ({5} GB/s); the floor is "
     "{6}%",
     "compare LnkSta with LnkCap in `lspci -vv -s {7}`; seat the card in a full x16 slot, set the "
     "slot to Auto/Gen{8} in the BIOS, and check risers and retimers",
     where(k_where_gpu_index, "copy direction (host->device or device->host, pinned)",
           "measured GB/s of the slower direction", "that as a percentage of the link's rate",
           "the PCIe link (generation and width)", "GB/s that link carries",
           "the floor, in percent", "the GPU's PCI bus id, for lspci",
           "the PCIe generation to set in the BIOS")},
    {k_bandwidth_outlier, Severity::warn, "one GPU copies slower than its siblings",
     "Among GPUs of one model, this one moves host<->device data clearly slower than the median.",
     "GPU {0} ({1}): host->device {2} GB/s is {3}% of the median of {4} GPUs of this "
     "model ({5} GB/s)",
     "check this GPU's PCIe link (lspci -vv -s {6}) and its NUMA placement against the others",
     where(k_where_gpu_index, "GPU model (name)", "its host->device GB/s",
           "that as a percentage of the median", "GPUs of this model measured",
           "their median host->device GB/s", "the GPU's PCI bus id, for lspci")},
};

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

/// Several GPUs: each GPU's host copies again, every GPU at once (Copies::host_together):
/// each GPU's rate while all copied, and the host's aggregate (their sum, as DCGM's PCIe test
/// reports it) on every GPU's result, with how well the copy windows overlapped.
void add_copies_together(std::vector<CheckResult>& results, const CheckContext& context,
                         const GpuTargets& targets, const std::vector<engine::TargetKey>& keys) {
  if (context.gpu_engine == nullptr || targets.gpus.size() < 2 ||
      results.size() != targets.gpus.size()) {
    return;
  }
  const std::optional<engine::Work> work = protocol::work_named(k_together_work);
  if (!work) {
    return;
  }
  std::vector<TogetherPart> parts;
  for (size_t i = 0; i < targets.gpus.size(); ++i) {
    const std::optional<engine::JobView> view = context.gpu_engine->result(*work, keys[i], keys);
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
    const checks::ReadEnvelope envelope = protocol::read_envelope(*outcome.payload);
    for (Finding& finding :
         checks::common_findings("host copies on every GPU at once", gpu, envelope)) {
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
    for (Metric& metric : checks::payload_metrics(envelope, contended)) {
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

/// The device-local copy, a work of its own (Copies::device_local), folded into the host copies'
/// payload before it is judged; its own failure is a finding of its own.
void fold_local_copy(const CheckContext& context, const std::vector<engine::TargetKey>& keys,
                     size_t index, const GpuTarget& gpu, nlohmann::json& payload,
                     std::vector<Finding>& findings) {
  const std::optional<engine::Work> local = protocol::work_named(k_local_work);
  if (context.gpu_engine == nullptr || index >= keys.size() || !local) {
    return;
  }
  const std::optional<engine::JobView> view = context.gpu_engine->result(*local, keys[index], keys);
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

} // namespace

/// GPUs of one model should move data alike: flag one well below its siblings' median. A GPU
/// measured beside other processes (gpu.contention) gets a note: its figure says what it did
/// beside them, not what it can do.
void add_outliers(std::vector<CheckResult>& results, const GpuTargets& targets) {
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
      if (auto ratio = checks::outlier_ratio(h2d_of(results[i]), values)) {
        const GpuTarget& gpu = targets.gpus[i];
        Finding finding = make_finding(
            k_bandwidth_outlier, gpu.gpu_index, gpu.gpu_index, model,
            fmt::format("{:.1f}", h2d_of(results[i])), fmt::format("{:.0f}", 100.0 * *ratio),
            values.size(), fmt::format("{:.1f}", h2d_of(results[i]) / *ratio), gpu.pci_bus_id);
        const std::vector<Finding>& known = results[i].findings;
        if (std::any_of(known.begin(), known.end(),
                        [](const Finding& f) { return f.code == codes::k_gpu_contention; })) {
          finding.severity = Severity::info;
          finding.message += " (measured under contention)";
        }
        results[i].status = worst_of(results[i].status, status_for(finding.severity));
        results[i].findings.push_back(std::move(finding));
      }
    }
  }
}

namespace {

/// After every GPU's host copies are judged: the copies on every GPU at once, then the siblings.
void compare(std::vector<CheckResult>& results, const CheckContext& context) {
  if (results.size() < 2) {
    return; // one GPU: nothing to compare it with
  }
  const GpuTargets targets = checks::gpu_targets(context.snapshot, context.options.timeout);
  std::vector<engine::TargetKey> keys;
  for (const GpuTarget& gpu : targets.gpus) {
    keys.push_back({gpu.ordinal, gpu.pci_bus_id});
  }
  add_copies_together(results, context, targets, keys);
  add_outliers(results, targets);
}

// The device-local copy's floor is checks/rules/expected_figures.cpp's (the memory's bandwidth);
// the host copies are judged against the PCIe link (checks/active/bandwidth_rules.hpp).
constexpr MetricSpec k_metrics[] = {
    {"h2d_gbps", "GB/s"},
    {"d2h_gbps", "GB/s"},
    {"h2d_bidir_gbps", "GB/s"},
    {"d2h_bidir_gbps", "GB/s"},
    {"h2d_pageable_gbps", "GB/s"},
    {"d2h_pageable_gbps", "GB/s"},
    {"d2d_gbps", "GB/s"},
    {"d2d_dram_gbps", "GB/s"},
    {"h2d_together_gbps", "GB/s"},
    {"d2h_together_gbps", "GB/s"},
    {"host_h2d_all_gpus_gbps", "GB/s"},
    {"host_d2h_all_gpus_gbps", "GB/s"},
};

// Every copy, host and device-local, is a "copy" verification.
constexpr VerifySpec k_verify[] = {{"copy", k_copy_corrupt}};

constexpr WorkPart k_parts[] = {
    // The host copies' device buffers, kept from the host copies' own (only on several GPUs).
    {.work = k_together_work,
     .copies = protocol::Copies::host_together,
     .min_mib = 2 * 4,
     .wanted_mib = 2 * 64,
     .prepare_mib = 2 * 4,
     .run = &typed_work<TogetherPayload, &together_work>,
     .on_kept = true},
    // The device-local copy's two buffers, taken after its gate.
    {.work = k_local_work,
     .copies = protocol::Copies::device_local,
     .min_mib = 2 * 16,
     .wanted_mib = 2 * 256,
     .prepare_mib = 0,
     .run = &typed_work<Payload, &local_work>},
};

constexpr GpuCheck<Payload> k_check{
    .info = {"gpu.bandwidth", "Copy bandwidth",
             "Measures host<->device (pinned, both ways at once, pageable) and device-local copy "
             "bandwidth with nvbandwidth's method, verifies every copied buffer, and compares the "
             "result with what the PCIe link carries.",
             CheckKind::active},
    .work = k_work,
    .mode = "gpu-bandwidth",
    // The least: the smallest host copies that still measure something; wanted: their device
    // side.
    .min_mib = 4 * 4,
    .wanted_mib = 2 * 64,
    .prepare_mib = 4 * 4,
    .run = &host_work,
    .judge = &judge,
    .findings = k_findings,
    .metrics = k_metrics,
    .verify = k_verify,
    // One GPU at a time, each measured alone, as nvbandwidth does: right after gpu.compute.
    .listed = Listed::first,
    .alone = true,
    .compare = &compare,
    .own_child = &own_child,
    .copies = protocol::Copies::host_alone,
    .parts = k_parts,
    .release_kept = &release_kept,
    .fold = &fold_local_copy,
    .judged_on_kernels = false,
};
} // namespace

std::span<const FindingSpec> findings() {
  return k_findings;
}

checks::Judgement judge(const GpuTarget& gpu, const Payload& payload, const ChildReport& child) {
  const protocol::ChildEnvelope& envelope = child.envelope;
  Judgement judgement;
  const double h2d = metric_of(envelope, "h2d_gbps").value_or(0.0);
  const double d2h = metric_of(envelope, "d2h_gbps").value_or(0.0);
  const std::optional<double> d2d = metric_of(envelope, "d2d_gbps");
  judgement.summary =
      fmt::format("GPU {}: host->device {:.1f} GB/s, device->host {:.1f} GB/s, device-local {}; {}",
                  gpu.gpu_index, h2d, d2h, d2d ? fmt::format("{:.0f} GB/s", *d2d) : "not measured",
                  checks::all_verified(envelope) ? "all copies verified" : "COPIED DATA CORRUPTED");
  const protocol::PcieLinkReading link = payload.link.value_or(protocol::PcieLinkReading{});
  std::optional<checks::LinkRate> rate = checks::link_rate_from_sysfs(
      link.current_link_speed.value_or(""), link.current_link_width.value_or(""));
  if (!rate && gpu.pcie_gen && gpu.pcie_width) {
    rate = checks::link_rate_from_generation(*gpu.pcie_gen, *gpu.pcie_width);
  }
  if (rate) {
    judgement.summary += fmt::format(" ({} carries {:.1f} GB/s)", rate->label, rate->gbps);
    const bool slower_is_h2d = h2d <= d2h;
    const double worst = slower_is_h2d ? h2d : d2h;
    if (checks::is_bandwidth_low(worst, *rate)) {
      Finding finding = make_finding(
          k_bandwidth_low, gpu.gpu_index, gpu.gpu_index,
          slower_is_h2d ? "host->device (pinned)" : "device->host (pinned)",
          fmt::format("{:.1f}", worst), fmt::format("{:.0f}", 100.0 * worst / rate->gbps),
          rate->label, fmt::format("{:.1f}", rate->gbps),
          fmt::format("{:.0f}", 100.0 * checks::k_low_bandwidth_fraction),
          gpu.pci_bus_id.empty() ? std::string("<bus id>") : gpu.pci_bus_id, rate->generation);
      if (!gpu.other_processes.empty()) {
        finding.severity = Severity::info; // labelled, not failed, when the GPU is shared
      }
      judgement.findings.push_back(std::move(finding));
    }
  }
  const int timeouts = payload.gate_timeouts.value_or(0);
  if (timeouts > 0) {
    judgement.findings.push_back(make_finding(k_copy_gate_timeout, gpu.gpu_index, gpu.gpu_index,
                                              plural(timeouts, "sample")));
  }
  return judgement;
}

} // namespace gpucheck::gpu_checks::bandwidth

namespace gpucheck::gpu_checks {
Registration bandwidth_registration() {
  return registration<bandwidth::k_check>();
}
} // namespace gpucheck::gpu_checks
