#pragma once
/// Per-GPU checks: one result per GPU, and the shared "no GPU facts" handling.

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "gpucheck/check.hpp"

namespace gpucheck::checks {

/// "0 (NVIDIA H200, 0000:3B:00.0)": how findings name a GPU.
std::string gpu_label(const GpuInfo& gpu);
/// What gpu_label() stands for in a finding's arguments (FindingSpec::placeholders).
inline constexpr std::string_view k_where_gpu = "GPU (index, name, PCI bus id)";

/// Human byte count with binary units: 1536 MiB -> "1.5 GiB".
std::string bytes_text(uint64_t bytes);

using GpuJudge = std::function<CheckResult(const CheckInfo& info, const GpuInfo& gpu,
                                           const SystemSnapshot& snapshot)>;

/// Runs `judge` on every GPU of the snapshot. When there are none, returns one result: error if
/// the NVML probe crashed or hung, otherwise skip saying why there are no per-GPU facts.
std::vector<CheckResult> for_each_gpu(const CheckInfo& info, const SystemSnapshot& snapshot,
                                      const GpuJudge& judge);

} // namespace gpucheck::checks
