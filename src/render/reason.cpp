#include "render/reason.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <iterator>
#include <optional>
#include <set>
#include <utility>

namespace gpucheck::render {

namespace {

/// Printable ASCII only: the reason goes into scontrol's argument, a log line and a Kubernetes
/// condition; a serial number is bytes from the machine.
std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    out.push_back(c >= ' ' && c <= '~' ? c : '?');
  }
  return out;
}

/// "GPU 1 (SERIAL)": the serial names the board to replace; else the UUID, else the bus id.
std::string gpu_label(const Report& report, int index) {
  for (const GpuInfo& gpu : report.snapshot.gpus) {
    if (gpu.index != index) {
      continue;
    }
    for (const std::string* id : {&gpu.serial, &gpu.uuid, &gpu.pci_bus_id}) {
      if (!id->empty()) {
        return fmt::format("GPU {} ({})", index, *id);
      }
    }
  }
  return fmt::format("GPU {}", index);
}

} // namespace

std::string render_reason(const Report& report, const DrainPredicate& drains) {
  std::vector<std::string> items;
  std::set<std::pair<std::string, std::optional<int>>> seen;
  for (const Severity severity : {Severity::fail, Severity::warn}) {
    for (const CheckResult& result : report.results) {
      for (const Finding& finding : result.findings) {
        if (finding.ignored || finding.severity != severity || !drains(finding.code)) {
          continue;
        }
        const std::optional<int> gpu = finding.gpu_index ? finding.gpu_index : result.gpu_index;
        if (!seen.emplace(finding.code, gpu).second) {
          continue;
        }
        items.push_back(printable(gpu ? fmt::format("{} {}", finding.code, gpu_label(report, *gpu))
                                      : finding.code));
      }
    }
  }
  if (items.empty()) {
    // Nothing drains; a node gpucheck could not see into is not therefore healthy.
    std::vector<std::string> blind;
    for (const CheckResult& result : report.results) {
      for (const Finding& finding : result.findings) {
        const bool counted = !finding.ignored && (finding.severity == Severity::fail ||
                                                  finding.severity == Severity::warn);
        if (counted &&
            std::find(std::begin(k_blind_codes), std::end(k_blind_codes), finding.code) !=
                std::end(k_blind_codes) &&
            std::find(blind.begin(), blind.end(), finding.code) == blind.end()) {
          blind.push_back(finding.code);
        }
      }
    }
    if (blind.empty()) {
      return "";
    }
    std::string line = fmt::format("{} cannot see the GPUs or the driver: {}", k_blind_marker,
                                   fmt::join(blind, ", "));
    return printable(line.substr(0, k_max_reason_bytes)) + "\n";
  }
  std::string line(k_reason_marker);
  for (std::size_t i = 0; i < items.size(); ++i) {
    const std::string item = fmt::format("{}{}", i == 0 ? " " : ", ", items[i]);
    const std::size_t rest = items.size() - i - 1;
    // Room for this item and, when more follow, for ", +N more" after it.
    const std::size_t tail = rest == 0 ? 0 : fmt::format(", +{} more", rest).size();
    if (line.size() + item.size() + tail > k_max_reason_bytes) {
      if (i == 0) {
        // Even the first item is too long (a serial of odd length): cut it, keep the count.
        const std::string more = fmt::format(", +{} more", rest);
        const std::size_t room = k_max_reason_bytes - line.size() - (rest == 0 ? 0 : more.size());
        line += item.substr(0, room);
        if (rest != 0) {
          line += more;
        }
      } else {
        line += fmt::format(", +{} more", items.size() - i);
      }
      break;
    }
    line += item;
  }
  return line + "\n";
}

} // namespace gpucheck::render
