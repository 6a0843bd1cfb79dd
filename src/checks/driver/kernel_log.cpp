// driver.kernel_log: what the NVIDIA driver and the PCIe layer wrote to the kernel log since boot
// (F22 GPU lost, F24 ECC, F39 links): Xid and SXid events decoded from NVIDIA's Xid catalogue,
// "fallen off the bus", PCIe AER errors of the GPUs; attributed to GPUs, weighed by kind and
// age.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "checks/checks.hpp"
#include "checks/driver/facts.hpp"
#include "checks/rules/xid_catalog.hpp"
#include "findings/catalog.hpp"
#include "gpucheck/plural.hpp"

namespace gpucheck::checks {

namespace {
constexpr CheckInfo k_info{
    "driver.kernel_log", "Kernel log: Xid, SXid and PCIe errors",
    "The kernel log since boot holds no NVIDIA Xid or SXid error, no GPU that fell off the bus "
    "and no PCIe AER error of a GPU; each event is decoded, attributed to its GPU and weighed by "
    "its kind and age.",
    CheckKind::passive};

/// Events older than this are weighed one level lower (they still explain a past failure).
constexpr double k_recent_s = 24.0 * 3600.0;

struct Place {
  std::optional<int> gpu_index;
  std::string text; ///< "GPU 1 (0000:3b:00.0)" or "PCI device 0000:05:00.0"
};

/// The GPU an event's PCI address belongs to. An Xid names bus and device only.
Place place_of(const SystemSnapshot& s, const KernelLogEvent& event) {
  const std::string key = canonical_bus_id(event.pci_bus_id).substr(0, 10);
  auto matches = [&](const std::string& bus_id) {
    return !bus_id.empty() && canonical_bus_id(bus_id).substr(0, 10) == key;
  };
  for (const GpuInfo& gpu : s.gpus) {
    if (matches(gpu.pci_bus_id)) {
      return {gpu.index, fmt::format("GPU {} ({})", gpu.index, canonical_bus_id(gpu.pci_bus_id))};
    }
  }
  for (const NvmlHandleFailure& failure : s.nvml.handle_failures) {
    const PciDevice* device = lost_gpu_function(s, failure.index);
    if (device != nullptr && matches(device->bdf)) {
      return {failure.index, fmt::format("GPU {} ({})", failure.index, device->bdf)};
    }
  }
  if (event.pci_bus_id.empty()) {
    return {std::nullopt, "an unnamed device"};
  }
  return {std::nullopt, fmt::format("PCI device {}", event.pci_bus_id)};
}

struct Group {
  const KernelLogEvent* last = nullptr;
  Place place;
  int count = 0;
};

std::string age_text(double age_s) {
  if (age_s < 120.0) {
    return fmt::format("{:.0f} s ago", age_s);
  }
  if (age_s < 2.0 * 3600.0) {
    return fmt::format("{:.0f} min ago", age_s / 60.0);
  }
  if (age_s < 2.0 * 86400.0) {
    return fmt::format("{:.1f} h ago", age_s / 3600.0);
  }
  return fmt::format("{:.1f} days ago", age_s / 86400.0);
}

/// "3 times since boot, last 2.1 h ago"; whether the last one is older than a day.
std::pair<std::string, bool> when_text(const KernelLogInfo& log, const Group& group) {
  const std::string times = group.count == 1 ? std::string("once since boot")
                                             : fmt::format("{} times since boot", group.count);
  if (!log.uptime_s) {
    return {fmt::format("{}, last {:.0f} s after boot", times, group.last->seconds), false};
  }
  const double age = std::max(0.0, *log.uptime_s - group.last->seconds);
  return {fmt::format("{}, last {}", times, age_text(age)), age > k_recent_s};
}

Severity lowered(Severity severity, bool old) {
  if (!old) {
    return severity;
  }
  return severity == Severity::fail ? Severity::warn : Severity::info;
}

Finding xid_finding(const KernelLogInfo& log, const Group& group) {
  const int xid = group.last->code.value_or(0);
  const XidInfo* info = find_xid(xid);
  const auto [when, old] = when_text(log, group);
  if (info == nullptr) {
    return make_finding_as(lowered(Severity::info, old), codes::k_log_xid_unlisted,
                           group.place.gpu_index, xid, group.place.text, when, group.last->text);
  }
  const FindingCode code = info->weight == XidClass::fatal      ? codes::k_log_xid_fatal
                           : info->weight == XidClass::hardware ? codes::k_log_xid_hardware
                                                                : codes::k_log_xid_application;
  Finding finding = make_finding(code, group.place.gpu_index, xid, info->mnemonic, info->meaning,
                                 group.place.text, when, info->action, group.last->text);
  finding.severity = lowered(finding.severity, old);
  return finding;
}

std::vector<CheckResult> run(const CheckContext& context) {
  const SystemSnapshot& s = context.snapshot;
  const KernelLogInfo& log = s.kernel_log;
  if (!log.readable) {
    if (log.unreadable_reason.empty()) {
      return {skip_result(k_info, "the kernel log was not read")};
    }
    return {skip_result(k_info, fmt::format("the kernel log cannot be read: {}; run as root, or "
                                            "let this user read it (sudo sysctl "
                                            "kernel.dmesg_restrict=0, or the adm or "
                                            "systemd-journal group)",
                                            log.unreadable_reason))};
  }
  // One finding per kind, number, severity and place; the latest line is quoted.
  std::map<std::tuple<std::string, int, std::string, std::string>, Group> groups;
  std::vector<std::tuple<std::string, int, std::string, std::string>> order;
  std::vector<std::string> fallen_xid_places;
  for (const KernelLogEvent& event : log.events) {
    const Place place = place_of(s, event);
    const auto key =
        std::make_tuple(event.kind, event.code.value_or(-1), event.severity, place.text);
    Group& group = groups[key];
    if (group.count == 0) {
      order.push_back(key);
    }
    group.last = &event;
    group.place = place;
    ++group.count;
    if (event.kind == "xid" && event.code == 79) {
      fallen_xid_places.push_back(place.text);
    }
  }
  std::vector<Finding> findings;
  for (const auto& key : order) {
    const Group& group = groups.at(key);
    const std::string& kind = group.last->kind;
    const auto [when, old] = when_text(log, group);
    if (kind == "xid") {
      findings.push_back(xid_finding(log, group));
    } else if (kind == "sxid") {
      const Severity severity = group.last->severity == "fatal" ? Severity::warn : Severity::info;
      findings.push_back(make_finding_as(
          lowered(severity, old), codes::k_log_sxid, std::nullopt, group.last->code.value_or(0),
          group.last->severity.empty() ? "unknown severity" : group.last->severity,
          group.place.text, when, group.last->text));
    } else if (kind == "fallen_off_bus") {
      // The Xid 79 of the same GPU says it already.
      if (std::find(fallen_xid_places.begin(), fallen_xid_places.end(), group.place.text) ==
          fallen_xid_places.end()) {
        Finding finding = make_finding(codes::k_log_fallen_off_bus, group.place.gpu_index,
                                       group.place.text, when, group.last->text);
        finding.severity = lowered(finding.severity, old);
        findings.push_back(std::move(finding));
      }
    } else if (kind == "aer") {
      const FindingCode code = group.last->severity == "fatal" ? codes::k_log_pcie_aer_fatal
                               : group.last->severity == "uncorrected"
                                   ? codes::k_log_pcie_aer_uncorrected
                                   : codes::k_log_pcie_aer_corrected;
      Finding finding =
          make_finding(code, group.place.gpu_index, group.place.text, when, group.last->text);
      finding.severity = lowered(finding.severity, old);
      findings.push_back(std::move(finding));
    }
  }
  const std::string source = log.source == "journal" ? "the journal" : "/dev/kmsg";
  std::string summary = log.events.empty()
                            ? fmt::format("{}: no Xid, SXid or GPU PCIe error in {} since boot",
                                          source, plural(log.records_read, "record"))
                            : fmt::format("{}: {} in {} since boot", source,
                                          plural(log.events.size(), "NVIDIA or PCIe event"),
                                          plural(log.records_read, "record"));
  if (log.truncated) {
    summary += " (read up to the size cap)";
  }
  return {make_result(k_info, std::move(summary), std::move(findings))};
}
} // namespace

CheckDef driver_kernel_log_check() {
  return {k_info, &run};
}

} // namespace gpucheck::checks
