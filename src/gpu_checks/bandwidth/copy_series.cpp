#include "gpu_checks/bandwidth/copy_series.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>

namespace gpucheck::gpu_checks::bandwidth {

bool needs_second_series(double h2d_gbps, double d2h_gbps) {
  return std::min(h2d_gbps, d2h_gbps) < k_asymmetry_fraction * std::max(h2d_gbps, d2h_gbps);
}

Series keep_better_series(std::vector<protocol::PayloadMetric>& metrics, const std::string& name,
                          const Series& first, const Series& second, double other_direction) {
  const bool second_better = second.median >= first.median;
  std::vector<size_t> at; // the entries of `name`, in the order written
  for (size_t i = 0; i < metrics.size(); ++i) {
    if (metrics[i].name == name) {
      at.push_back(i);
    }
  }
  if (at.size() >= 2) {
    protocol::PayloadMetric kept = metrics[second_better ? at[1] : at[0]];
    kept.note = fmt::format("{}; measured twice, the {} series gave {:.1f} GB/s (the other "
                            "direction {:.1f})",
                            kept.note, second_better ? "first" : "second",
                            second_better ? first.median : second.median, other_direction);
    metrics.erase(metrics.begin() + static_cast<std::ptrdiff_t>(at[1]));
    metrics[at[0]] = std::move(kept);
  }
  return second_better ? second : first;
}

} // namespace gpucheck::gpu_checks::bandwidth
