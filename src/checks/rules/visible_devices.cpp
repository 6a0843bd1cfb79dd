#include "checks/rules/visible_devices.hpp"
#include "gpucheck/model/text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>

namespace gpucheck::checks {

namespace {

bool starts_with_nocase(std::string_view text, std::string_view prefix) {
  if (text.size() < prefix.size()) {
    return false;
  }
  return std::equal(prefix.begin(), prefix.end(), text.begin(), [](char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) ==
           std::tolower(static_cast<unsigned char>(b));
  });
}

std::optional<long> parse_integer(std::string_view text) {
  long value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || ptr != text.data() + text.size()) {
    return std::nullopt;
  }
  return value;
}

VisibleEntry classify(std::string_view text, std::span<const VisibleGpuRef> gpus, bool gpus_known) {
  VisibleEntry entry;
  entry.text = std::string(text);
  if (text.empty()) {
    entry.problem = "empty entry";
    return entry;
  }
  if (const std::optional<long> number = parse_integer(text)) {
    if (*number < 0) {
      entry.problem = "a negative index hides every device from here on";
      return entry;
    }
    if (gpus_known && *number >= static_cast<long>(gpus.size())) {
      entry.problem = fmt::format("no GPU has index {} (NVML sees {})", *number, gpus.size());
      return entry;
    }
    entry.kind = VisibleEntryKind::index;
    entry.ordinal = static_cast<int>(*number);
    return entry;
  }
  if (starts_with_nocase(text, "GPU-")) {
    if (!gpus_known) {
      entry.kind = VisibleEntryKind::gpu_uuid;
      return entry;
    }
    std::vector<int> matches;
    for (const VisibleGpuRef& gpu : gpus) {
      if (starts_with_nocase(gpu.uuid, text)) {
        matches.push_back(gpu.index);
      }
    }
    if (matches.empty()) {
      entry.problem = "no GPU has this UUID";
      return entry;
    }
    if (matches.size() > 1) {
      entry.problem = fmt::format("the UUID prefix matches {} GPUs", matches.size());
      return entry;
    }
    entry.kind = VisibleEntryKind::gpu_uuid;
    entry.nvml_index = matches.front();
    return entry;
  }
  if (starts_with_nocase(text, "MIG-")) {
    const bool any_mig =
        std::any_of(gpus.begin(), gpus.end(), [](const VisibleGpuRef& g) { return g.mig_enabled; });
    if (gpus_known && !any_mig) {
      entry.problem = "a MIG device id, but no GPU has MIG enabled";
      return entry;
    }
    entry.kind = VisibleEntryKind::mig_uuid;
    return entry;
  }
  entry.problem = "neither an index nor a GPU-/MIG- UUID";
  return entry;
}

} // namespace

std::size_t VisibleDevices::accepted_count() const {
  return static_cast<std::size_t>(std::count_if(entries.begin(), entries.end(),
                                                [](const VisibleEntry& e) { return e.accepted; }));
}

VisibleDevices parse_visible_devices(std::string_view value, std::span<const VisibleGpuRef> gpus,
                                     bool gpus_known) {
  VisibleDevices result;
  value = trim(value);
  if (value.empty()) {
    return result;
  }
  std::size_t start = 0;
  while (start <= value.size()) {
    std::size_t comma = value.find(',', start);
    if (comma == std::string_view::npos) {
      comma = value.size();
    }
    VisibleEntry entry = classify(trim(value.substr(start, comma - start)), gpus, gpus_known);
    if (result.first_invalid) {
      entry.accepted = false;
      if (entry.problem.empty()) {
        entry.problem = "ignored: CUDA stops at the first invalid entry";
      }
    } else if (entry.kind == VisibleEntryKind::invalid) {
      result.first_invalid = result.entries.size();
    } else {
      entry.accepted = true;
    }
    result.entries.push_back(std::move(entry));
    start = comma + 1;
  }
  return result;
}

} // namespace gpucheck::checks
