#include "checks/rules/per_gpu.hpp"

#include <fmt/format.h>

#include "checks/rules/probe_failure.hpp"

namespace gpucheck::checks {

std::string gpu_label(const GpuInfo& gpu) {
  const std::string name = gpu.name.empty() ? std::string("unnamed GPU") : gpu.name;
  if (gpu.pci_bus_id.empty()) {
    return fmt::format("{} ({})", gpu.index, name);
  }
  return fmt::format("{} ({}, {})", gpu.index, name, gpu.pci_bus_id);
}

std::string bytes_text(uint64_t bytes) {
  constexpr double k_kib = 1024.0;
  const double value = static_cast<double>(bytes);
  if (value >= k_kib * k_kib * k_kib) {
    return fmt::format("{:.1f} GiB", value / (k_kib * k_kib * k_kib));
  }
  if (value >= k_kib * k_kib) {
    return fmt::format("{:.0f} MiB", value / (k_kib * k_kib));
  }
  return fmt::format("{} bytes", bytes);
}

std::vector<CheckResult> for_each_gpu(const CheckInfo& info, const SystemSnapshot& snapshot,
                                      const GpuJudge& judge) {
  if (snapshot.gpus.empty()) {
    if (snapshot.nvml.failure) {
      return {probe_failure_result(info, "NVML probe (nvmlInit_v2, nvmlDeviceGet*)",
                                   *snapshot.nvml.failure)};
    }
    if (!snapshot.nvml.library.loaded) {
      return {skip_result(info, "no per-GPU facts: libnvidia-ml.so.1 could not be loaded")};
    }
    if (snapshot.nvml.init_result && *snapshot.nvml.init_result != 0) {
      return {skip_result(info, fmt::format("no per-GPU facts: nvmlInit_v2 failed ({})",
                                            snapshot.nvml.init_result_name))};
    }
    return {skip_result(info, "no GPU reported by NVML")};
  }
  std::vector<CheckResult> results;
  results.reserve(snapshot.gpus.size());
  for (const GpuInfo& gpu : snapshot.gpus) {
    results.push_back(judge(info, gpu, snapshot));
  }
  return results;
}

} // namespace gpucheck::checks
