// driver.kernel_log: what the NVIDIA driver and the PCIe layer wrote to the kernel log since boot
// (F22 GPU lost, F24 ECC, F39 links): Xid and SXid events decoded from NVIDIA's Xid catalogue,
// "fallen off the bus", PCIe AER errors of the GPUs; attributed to GPUs, weighed by kind and
// age.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <span>
#include <tuple>

#include "checks/checks.hpp"
#include "checks/driver/facts.hpp"
#include "checks/rules/xid_catalog.hpp"
#include "findings/catalog.hpp"
#include "gpucheck/plural.hpp"

namespace gpucheck::checks {

namespace {
// Its findings, spelt here (CheckDef::findings adds them to the catalogue).
constexpr FindingCode k_log_fallen_off_bus{"log.fallen_off_bus"};
constexpr FindingCode k_log_pcie_aer_corrected{"log.pcie_aer_corrected"};
constexpr FindingCode k_log_pcie_aer_fatal{"log.pcie_aer_fatal"};
constexpr FindingCode k_log_pcie_aer_uncorrected{"log.pcie_aer_uncorrected"};
constexpr FindingCode k_log_sxid{"log.sxid"};
constexpr FindingCode k_log_xid_application{"log.xid_application"};
constexpr FindingCode k_log_xid_fatal{"log.xid_fatal"};
constexpr FindingCode k_log_xid_hardware{"log.xid_hardware"};
constexpr FindingCode k_log_xid_unlisted{"log.xid_unlisted"};
constexpr std::string_view k_device = "the device: \"GPU 1 (0000:3b:00.0)\", or its PCI address";
constexpr std::string_view k_log_line = "the last such line of the kernel log";
constexpr std::string_view k_when = "how often since boot, and how long ago the last time";

constexpr FindingSpec k_findings[] = {
    {k_log_fallen_off_bus, Severity::fail, "GPU fell off the bus",
     "The kernel log says the NVIDIA driver found a GPU not answering on PCIe any more: power "
     "delivery, overheating, a bad riser or slot, firmware, or a failing GPU.",
     "the kernel log says {0} fell off the bus, {1}: \"{2}\"",
     "drain and reboot the node; check power cables, PSU and cooling; reseat the GPU and check "
     "the riser and slot; update the SBIOS and driver; if it repeats ask the vendor for an RMA",
     where(k_device, k_when, k_log_line), Drain::yes},
    {k_log_pcie_aer_corrected, Severity::info, "Corrected PCIe errors on a GPU",
     "The PCIe link of a GPU had errors that the hardware corrected (AER). A few are harmless; a "
     "steady stream points at signal quality.",
     "corrected PCIe (AER) errors on {0}, {1}: \"{2}\"",
     "nothing to do for a few; if they keep coming reseat the GPU, check the riser and slot, and "
     "compare the link with gpu.pcie_link",
     where(k_device, k_when, k_log_line)},
    {k_log_pcie_aer_fatal, Severity::fail, "Fatal PCIe error on a GPU",
     "The PCIe link of a GPU had a fatal uncorrectable error (AER): the link was reset or lost "
     "and the GPU may have fallen off the bus.",
     "fatal PCIe (AER) error on {0}, {1}: \"{2}\"",
     "drain and reboot the node; reseat the GPU, check the riser, slot and power; update the "
     "SBIOS; if it repeats ask the vendor for an RMA",
     where(k_device, k_when, k_log_line), Drain::yes},
    {k_log_pcie_aer_uncorrected, Severity::warn, "Uncorrected PCIe errors on a GPU",
     "The PCIe link of a GPU had uncorrectable, non-fatal errors (AER): transfers were lost or "
     "retried by software.",
     "uncorrected non-fatal PCIe (AER) errors on {0}, {1}: \"{2}\"",
     "reseat the GPU, check the riser and slot, update the SBIOS; watch gpu.pcie_link and the "
     "kernel log for Xid 79",
     where(k_device, k_when, k_log_line)},
    {k_log_sxid, Severity::warn, "NVSwitch error (SXid)",
     "The NVSwitch driver logged a Switch Xid: an error in the NVSwitch fabric between the GPUs. "
     "Fatal SXids stop the GPUs' NVLink traffic until a reset.",
     "SXid {0} ({1}) on {2}, {3}: \"{4}\"",
     "look the SXid up in the SXid section of NVIDIA's Fabric Manager user guide and check the "
     "Fabric Manager log; a fatal SXid needs the NVSwitch and its GPUs reset (or a reboot)",
     where("the SXid number", "its severity (fatal, non-fatal)", "the NVSwitch (its PCI address)",
           k_when, k_log_line)},
    {k_log_xid_application, Severity::info, "Xid caused by an application",
     "The NVIDIA driver logged an Xid that a program's own fault causes (an illegal address, a "
     "killed or failed program); the GPU itself is healthy.",
     "Xid {0} ({1}) on {3}, {4}: {2} (\"{6}\")",
     "{5} (NVIDIA's Xid catalogue: https://docs.nvidia.com/deploy/xid-errors/)",
     where("the Xid number", "its mnemonic in NVIDIA's catalogue", "what it means", k_device,
           k_when, "what to do, from NVIDIA's catalogue", k_log_line)},
    {k_log_xid_fatal, Severity::fail, "Fatal Xid: GPU lost or memory error",
     "The NVIDIA driver logged an Xid that leaves the GPU unusable or its memory corrupt until a "
     "reset or reboot (fell off the bus, uncorrectable or uncontained ECC error, failed row "
     "remap, failed initialisation); a repeat means failing hardware.",
     "Xid {0} ({1}) on {3}, {4}: {2} (\"{6}\")",
     "{5} (NVIDIA's Xid catalogue: https://docs.nvidia.com/deploy/xid-errors/)",
     where("the Xid number", "its mnemonic in NVIDIA's catalogue", "what it means", k_device,
           k_when, "what to do, from NVIDIA's catalogue", k_log_line),
     Drain::yes},
    {k_log_xid_hardware, Severity::warn, "Xid: GPU hardware or firmware error",
     "The NVIDIA driver logged an Xid from the GPU's hardware, firmware or links (ECC events, "
     "NVLink, GSP firmware, micro-controller, timeouts) that needs a reset or a watch.",
     "Xid {0} ({1}) on {3}, {4}: {2} (\"{6}\")",
     "{5} (NVIDIA's Xid catalogue: https://docs.nvidia.com/deploy/xid-errors/)",
     where("the Xid number", "its mnemonic in NVIDIA's catalogue", "what it means", k_device,
           k_when, "what to do, from NVIDIA's catalogue", k_log_line),
     Drain::yes},
    {k_log_xid_unlisted, Severity::info, "Xid gpucheck does not know",
     "The NVIDIA driver logged an Xid that is not in gpucheck's table; NVIDIA's Xid catalogue "
     "describes it.",
     "Xid {0} on {1}, {2} (\"{3}\")",
     "look Xid {0} up in NVIDIA's Xid catalogue, https://docs.nvidia.com/deploy/xid-errors/, "
     "and follow its resolution",
     where("the Xid number", k_device, k_when, k_log_line)},
};

std::span<const FindingSpec> own_findings() {
  return k_findings;
}

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
    return make_finding_as(lowered(Severity::info, old), k_log_xid_unlisted, group.place.gpu_index,
                           xid, group.place.text, when, group.last->text);
  }
  const FindingCode code = info->weight == XidClass::fatal      ? k_log_xid_fatal
                           : info->weight == XidClass::hardware ? k_log_xid_hardware
                                                                : k_log_xid_application;
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
          lowered(severity, old), k_log_sxid, std::nullopt, group.last->code.value_or(0),
          group.last->severity.empty() ? "unknown severity" : group.last->severity,
          group.place.text, when, group.last->text));
    } else if (kind == "fallen_off_bus") {
      // The Xid 79 of the same GPU says it already.
      if (std::find(fallen_xid_places.begin(), fallen_xid_places.end(), group.place.text) ==
          fallen_xid_places.end()) {
        Finding finding = make_finding(k_log_fallen_off_bus, group.place.gpu_index,
                                       group.place.text, when, group.last->text);
        finding.severity = lowered(finding.severity, old);
        findings.push_back(std::move(finding));
      }
    } else if (kind == "aer") {
      const FindingCode code = group.last->severity == "fatal"         ? k_log_pcie_aer_fatal
                               : group.last->severity == "uncorrected" ? k_log_pcie_aer_uncorrected
                                                                       : k_log_pcie_aer_corrected;
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
  return {k_info, &run, &own_findings};
}

} // namespace gpucheck::checks
