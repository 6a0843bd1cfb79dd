#pragma once
/// Pure rules of the bandwidth check: what a PCIe link carries, when a figure is too low, when
/// one GPU is an outlier among its siblings. No GPU needed
/// (tests/unit/checks/gpu_bandwidth_rules_test.cpp).

#include <optional>
#include <string>
#include <vector>

namespace gpucheck::checks {

/// Pinned copies below this fraction of the link's rate are flagged (gpu.bandwidth_low). Good
/// systems reach 80-90% of it (docs/performance.md); a link trained one generation or half the
/// width lower lands at 50% or less.
inline constexpr double k_low_bandwidth_fraction = 0.6;
/// A GPU below this fraction of its same-model siblings' median is an outlier.
inline constexpr double k_outlier_fraction = 0.8;

struct LinkRate {
  int generation = 0;
  int width = 0;
  double gbps = 0.0; ///< one direction, after line encoding, 1e9 bytes/s
  std::string label; ///< "PCIe Gen5 x16"
};

/// From sysfs texts ("32.0 GT/s PCIe", "16"); nullopt when unreadable.
std::optional<LinkRate> link_rate_from_sysfs(const std::string& speed, const std::string& width);
/// From a generation and width (NVML).
std::optional<LinkRate> link_rate_from_generation(int generation, int width);

/// Whether `gbps` is below k_low_bandwidth_fraction of the link.
bool is_bandwidth_low(double gbps, const LinkRate& link);

/// value / median(values) when below k_outlier_fraction and there are at least two values.
std::optional<double> outlier_ratio(double value, const std::vector<double>& values);

} // namespace gpucheck::checks
