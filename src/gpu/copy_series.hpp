#pragma once
/// The pinned copies' second series (gpu.bandwidth): when one direction reads far below the
/// other, the slower one is measured again and the better series reported, the other named in
/// its note. A degraded link slows both directions alike; one direction alone far below the other
/// is most often a passing disturbance (another VM's DMA on the host). Pure JSON work, unit
/// tested without a GPU (tests/unit/gpu/copy_series_test.cpp).

#include <nlohmann/json.hpp>

#include <string>

namespace gpucheck::gpu {

/// One pinned direction below this fraction of the other is measured again.
inline constexpr double k_asymmetry_fraction = 0.85;

/// Whether the slower of the two directions' medians (GB/s) is measured again.
bool needs_second_series(double h2d_gbps, double d2h_gbps);

/// Two series of one direction, `first` and `second` as Bench::measure() returned them (each
/// with its "median"), after each appended its metric `name` to out["metrics"]: keeps the better
/// series' metric in the first one's place, its note naming the other series and the other
/// direction's rate, drops the other, and returns the better series' summary.
nlohmann::json keep_better_series(nlohmann::json& out, const std::string& name,
                                  const nlohmann::json& first, const nlohmann::json& second,
                                  double other_direction);

} // namespace gpucheck::gpu
