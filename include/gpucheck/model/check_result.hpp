#pragma once
/// The result of one check (possibly for one GPU): a status, findings and metrics.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpucheck/model/finding.hpp"
#include "gpucheck/model/status.hpp"

namespace gpucheck {

/// What a metric is about beyond its check and its result's GPU, as fields: the Prometheus
/// renderer's labels. A report's JSON keeps only the name; metric_labels_of() reads these back
/// from it (gpucheck's naming: "gpu3_numa_node", "p2p_0_1_write_gbps", "p2p_0_1_64mib_gbps",
/// "nccl_allreduce_256mib_busbw_gbps"), and checks set them with the name (pair_metric(), ...).
struct MetricLabels {
  std::string family;                 ///< the name without these parts; "" when it has none
  std::optional<int> gpu;             ///< one GPU's figure in a result of the whole system
  std::optional<int> gpu_a;           ///< a pair of GPUs: from (or the lower index) ...
  std::optional<int> gpu_b;           ///< ... and to
  std::optional<uint64_t> size_bytes; ///< the size of the message or copy

  bool operator==(const MetricLabels&) const = default;
};

/// The labels a metric named `name` carries by gpucheck's naming (above); none for any other.
MetricLabels metric_labels_of(std::string_view name);

/// What else siblings compare when a figure rests on a choice that may differ from GPU to GPU (a
/// convolution's best: whichever algorithm timed fastest there): the figure of one method that
/// each sibling measured the same way. A GPU is named slower only when both are low, its basis
/// among the figures of the same `method`.
struct SiblingBasis {
  double value = 0.0;
  std::string method; ///< "cuDNN's heuristic algorithm IMPLICIT_PRECOMP_GEMM"

  bool operator==(const SiblingBasis&) const = default;
};

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
  MetricLabels labels;  ///< set with the name by whoever names it (see MetricLabels)
  /// Set by the check's judge where the figure alone does not compare across GPUs; used while
  /// judging only (compare_siblings()): reports do not carry it.
  std::optional<SiblingBasis> sibling_basis;

  bool operator==(const Metric&) const = default;
};

/// `metric` with the labels its name carries: for metrics named without them (a report read
/// back, a test's fixture).
Metric labelled(Metric metric);

/// A figure between two GPUs: "PREFIX_A_B_REST" (p2p_0_1_write_gbps), family "PREFIX_REST".
Metric pair_metric(std::string_view prefix, int a, int b, std::string_view rest, double value,
                   std::string unit, std::string note);
/// A figure of one size: "HEAD_Nmib_TAIL" (nccl_allreduce_256mib_busbw_gbps), family
/// "HEAD_TAIL"; with a pair too, "PREFIX_A_B_Nmib_TAIL" (p2p_0_1_64mib_gbps), family
/// "PREFIX_size_TAIL".
Metric sized_metric(std::string_view head, uint64_t bytes, std::string_view tail, double value,
                    std::string unit, std::string note);
Metric sized_pair_metric(std::string_view prefix, int a, int b, uint64_t bytes,
                         std::string_view tail, double value, std::string unit, std::string note);
/// One GPU's figure in a system result: "gpuN_REST" (gpu3_numa_node), family "gpu_REST".
Metric gpu_metric(int gpu, std::string_view rest, double value, std::string unit, std::string note);

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
