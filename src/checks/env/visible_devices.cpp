#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <span>

#include "checks/checks.hpp"
#include "checks/rules/visible_devices.hpp"
#include "findings/catalog.hpp"
#include "gpucheck/model/text.hpp"
#include "gpucheck/plural.hpp"

namespace gpucheck::checks {

namespace {
// Its findings, spelt here (CheckDef::findings adds them to the catalogue).
constexpr FindingCode k_env_visible_devices_partly_invalid{"env.visible_devices_partly_invalid"};

constexpr FindingSpec k_findings[] = {
    {k_env_visible_devices_partly_invalid, Severity::warn, "CUDA_VISIBLE_DEVICES partly invalid",
     "CUDA stops reading CUDA_VISIBLE_DEVICES at the first invalid entry; later entries are "
     "silently ignored.",
     "CUDA_VISIBLE_DEVICES=\"{0}\": entry '{1}' is invalid ({2}), so CUDA ignores it and "
     "everything after it; CUDA enumerates only {3}",
     "fix or remove '{1}'; this machine's GPUs are {4}",
     where("the value of CUDA_VISIBLE_DEVICES", "the first invalid entry", "why it is invalid",
           "the GPUs CUDA still enumerates", "the GPUs NVML sees (index = UUID (name))")},
};

std::span<const FindingSpec> own_findings() {
  return k_findings;
}

constexpr CheckInfo k_info{
    "env.visible_devices", "CUDA_VISIBLE_DEVICES",
    "CUDA_VISIBLE_DEVICES, parsed as CUDA does, names GPUs that exist and hides none by mistake.",
    CheckKind::passive};

std::string gpu_list(const SystemSnapshot& s) {
  if (s.gpus.empty()) {
    return "unknown (NVML listed no GPU)";
  }
  std::vector<std::string> items;
  for (const GpuInfo& gpu : s.gpus) {
    items.push_back(fmt::format("{} = {} ({})", gpu.index, gpu.uuid, gpu.name));
  }
  return fmt::format("{}", fmt::join(items, ", "));
}

std::string all_indices(const SystemSnapshot& s) {
  std::vector<int> indices;
  for (const GpuInfo& gpu : s.gpus) {
    indices.push_back(gpu.index);
  }
  return indices.empty() ? std::string("0") : fmt::format("{}", fmt::join(indices, ","));
}

/// Values that hide every device on purpose or by a scheduler's convention.
std::optional<std::string> hiding_reason(const VisibleDevices& parsed) {
  if (parsed.entries.empty()) {
    return "an empty value hides every device";
  }
  const VisibleEntry& first = parsed.entries.front();
  if (first.accepted) {
    return std::nullopt;
  }
  if (first.text.starts_with('-') && first.text.size() > 1 &&
      std::isdigit(static_cast<unsigned char>(first.text[1])) != 0) {
    return "a negative index hides every device";
  }
  const std::string word = lower(first.text);
  if (word == "nodevfiles") {
    return "'NoDevFiles' is what Slurm sets for a job without GPUs";
  }
  if (word == "none" || word == "void") {
    return fmt::format("'{}' is not a device", first.text);
  }
  return std::nullopt;
}

std::vector<CheckResult> run(const CheckContext& context) {
  const SystemSnapshot& s = context.snapshot;
  const std::optional<std::string> value = s.env("CUDA_VISIBLE_DEVICES");
  if (!value) {
    return {make_result(k_info, "CUDA_VISIBLE_DEVICES is not set: CUDA sees every GPU", {})};
  }
  std::vector<VisibleGpuRef> refs;
  for (const GpuInfo& gpu : s.gpus) {
    refs.push_back({gpu.index, gpu.uuid, gpu.mig_enabled.value_or(false)});
  }
  const VisibleDevices parsed = parse_visible_devices(*value, refs, !s.gpus.empty());

  if (const std::optional<std::string> reason = hiding_reason(parsed)) {
    return {make_result(k_info, fmt::format("CUDA_VISIBLE_DEVICES=\"{}\" hides every GPU", *value),
                        {make_finding(codes::k_env_visible_devices_hides_all, std::nullopt, *value,
                                      *reason, all_indices(s))})};
  }
  if (parsed.first_invalid) {
    const VisibleEntry& bad = parsed.entries[*parsed.first_invalid];
    if (*parsed.first_invalid == 0) {
      return {make_result(k_info, fmt::format("CUDA_VISIBLE_DEVICES=\"{}\" selects no GPU", *value),
                          {make_finding(codes::k_env_visible_devices_no_match, std::nullopt, *value,
                                        bad.text, bad.problem, gpu_list(s))})};
    }
    std::vector<std::string> kept;
    for (const VisibleEntry& entry : parsed.entries) {
      if (entry.accepted) {
        kept.push_back(entry.text);
      }
    }
    return {make_result(
        k_info, fmt::format("CUDA_VISIBLE_DEVICES=\"{}\" is partly invalid", *value),
        {make_finding(k_env_visible_devices_partly_invalid, std::nullopt, *value, bad.text,
                      bad.problem, fmt::format("{}", fmt::join(kept, ", ")), gpu_list(s))})};
  }
  return {make_result(k_info,
                      fmt::format("CUDA_VISIBLE_DEVICES=\"{}\" selects {}", *value,
                                  plural(parsed.accepted_count(), "device")),
                      {})};
}
} // namespace

CheckDef env_visible_devices_check() {
  return {k_info, &run, &own_findings};
}

} // namespace gpucheck::checks
