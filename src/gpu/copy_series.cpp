#include "gpu/copy_series.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <vector>

namespace gpucheck::gpu {

bool needs_second_series(double h2d_gbps, double d2h_gbps) {
  return std::min(h2d_gbps, d2h_gbps) < k_asymmetry_fraction * std::max(h2d_gbps, d2h_gbps);
}

nlohmann::json keep_better_series(nlohmann::json& out, const std::string& name,
                                  const nlohmann::json& first, const nlohmann::json& second,
                                  double other_direction) {
  const double a = first.value("median", 0.0);
  const double b = second.value("median", 0.0);
  const bool second_better = b >= a;
  nlohmann::json& metrics = out["metrics"];
  std::vector<size_t> at; // the entries of `name`, in the order written
  for (size_t i = 0; i < metrics.size(); ++i) {
    if (metrics[i].is_object() && metrics[i].value("name", "") == name) {
      at.push_back(i);
    }
  }
  if (at.size() >= 2) {
    nlohmann::json kept = metrics[second_better ? at[1] : at[0]];
    kept["note"] =
        fmt::format("{}; measured twice, the {} series gave {:.1f} GB/s (the other direction "
                    "{:.1f})",
                    kept.value("note", ""), second_better ? "first" : "second",
                    second_better ? a : b, other_direction);
    metrics.erase(metrics.begin() + static_cast<std::ptrdiff_t>(at[1]));
    metrics[at[0]] = std::move(kept);
  }
  return second_better ? second : first;
}

} // namespace gpucheck::gpu
