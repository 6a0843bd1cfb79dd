#pragma once
/// The result of one check (possibly for one GPU): a status, findings and metrics.

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "gpucheck/model/finding.hpp"
#include "gpucheck/model/status.hpp"

namespace gpucheck {

/// A measured number with its unit, e.g. {"h2d_gbps", 55.1, "GB/s"}.
struct Metric {
  std::string name;
  double value = 0.0;
  std::string unit;
  std::string note; ///< e.g. "median of 5", "measured under contention"
  /// The least this figure should be on this GPU model, in `unit` (docs/checks.md, "Expected
  /// figures"); unset where gpucheck knows none.
  std::optional<double> expected_min;
  std::string expected; ///< where expected_min comes from, in words ("" when unset)

  bool operator==(const Metric&) const = default;
};

struct CheckResult {
  std::string check_id; ///< registry id, e.g. "gpu.ecc"
  std::string title;    ///< short human title
  Status status = Status::skip;
  std::string summary;          ///< one line: what was seen, or why skipped / errored
  std::optional<int> gpu_index; ///< for per-GPU results
  std::vector<Finding> findings;
  std::vector<Metric> metrics;
  std::chrono::milliseconds duration{0};

  bool operator==(const CheckResult&) const = default;
};

} // namespace gpucheck
