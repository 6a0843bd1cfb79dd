#include "checks/active/bandwidth_rules.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdlib>

namespace gpucheck::checks {

namespace {
struct Generation {
  int generation;
  double gt_per_s;
  double gbytes_per_lane; ///< after 8b/10b (Gen1-2), 128b/130b (Gen3-5), FLIT (Gen6)
};
constexpr std::array<Generation, 6> k_generations{{
    {1, 2.5, 0.25},
    {2, 5.0, 0.5},
    {3, 8.0, 8.0 / 8.0 * 128.0 / 130.0},
    {4, 16.0, 16.0 / 8.0 * 128.0 / 130.0},
    {5, 32.0, 32.0 / 8.0 * 128.0 / 130.0},
    {6, 64.0, 64.0 / 8.0 * 242.0 / 256.0},
}};
} // namespace

std::optional<LinkRate> link_rate_from_generation(int generation, int width) {
  if (width <= 0) {
    return std::nullopt;
  }
  for (const Generation& g : k_generations) {
    if (g.generation == generation) {
      return LinkRate{generation, width, g.gbytes_per_lane * width,
                      fmt::format("PCIe Gen{} x{}", generation, width)};
    }
  }
  return std::nullopt;
}

std::optional<LinkRate> link_rate_from_sysfs(const std::string& speed, const std::string& width) {
  if (speed.empty() || width.empty()) {
    return std::nullopt;
  }
  char* end = nullptr;
  const double gt = std::strtod(speed.c_str(), &end);
  const long lanes = std::strtol(width.c_str(), nullptr, 10);
  if (end == speed.c_str() || lanes <= 0) {
    return std::nullopt;
  }
  for (const Generation& g : k_generations) {
    if (std::abs(g.gt_per_s - gt) < 0.01) {
      return link_rate_from_generation(g.generation, static_cast<int>(lanes));
    }
  }
  return std::nullopt;
}

bool is_bandwidth_low(double gbps, const LinkRate& link) {
  return link.gbps > 0.0 && gbps < k_low_bandwidth_fraction * link.gbps;
}

std::optional<double> outlier_ratio(double value, const std::vector<double>& values) {
  if (values.size() < 2) {
    return std::nullopt;
  }
  std::vector<double> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  const size_t n = sorted.size();
  const double median = n % 2 == 1 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
  if (median <= 0.0) {
    return std::nullopt;
  }
  const double ratio = value / median;
  return ratio < k_outlier_fraction ? std::optional<double>(ratio) : std::nullopt;
}

} // namespace gpucheck::checks
