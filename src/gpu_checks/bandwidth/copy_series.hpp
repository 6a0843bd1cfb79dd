#pragma once
/// The pinned copies' second series (gpu.bandwidth): when one direction reads far below the
/// other, the slower one is measured again and the better series reported, the other named in
/// its note. A degraded link slows both directions alike; one direction alone far below the other
/// is most often a passing disturbance (another VM's DMA on the host). Pure, unit tested without
/// a GPU (copy_series_test.cpp).

#include <string>
#include <vector>

#include "protocol/payloads.hpp"

namespace gpucheck::gpu_checks::bandwidth {

/// One direction's series as the copies measured it (GB/s with 1e9 bytes).
struct Series {
  std::string name; ///< its metric's name
  double median = 0.0;
  double min = 0.0;
  double max = 0.0;
  int copies = 0; ///< copies per sample
};

/// One pinned direction below this fraction of the other is measured again.
inline constexpr double k_asymmetry_fraction = 0.85;

/// Whether the slower of the two directions' medians (GB/s) is measured again.
bool needs_second_series(double h2d_gbps, double d2h_gbps);

/// Two series of one direction, `first` and `second`, after each appended its metric `name` to
/// `metrics`: keeps the better series' metric in the first one's place, its note naming the other
/// series and the other direction's rate, drops the other, and returns the better series.
Series keep_better_series(std::vector<protocol::PayloadMetric>& metrics, const std::string& name,
                          const Series& first, const Series& second, double other_direction);

} // namespace gpucheck::gpu_checks::bandwidth
