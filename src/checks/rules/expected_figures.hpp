#pragma once
/// What each measured figure should be: a floor per GPU model, a fraction of the figure in
/// NVIDIA's datasheet (compat/gpu_models.hpp) chosen from healthy GPUs with a margin, and the
/// comparison of identical GPUs of one run with one another (docs/checks.md, "Expected figures").
/// Pure rules; no GPU needed (tests/unit/checks/expected_figures_test.cpp).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "checks/active/judging.hpp"
#include "compat/gpu_models.hpp"
#include "gpucheck/model/check_result.hpp"

namespace gpucheck::checks {

/// The floors, as fractions of the datasheet figure: each at least 30% under what healthy H100s
/// and H200s measured (docs/checks.md, "Expected figures", gives the figures each was chosen
/// from).
inline constexpr double k_device_copy_fraction = 0.3; ///< device-local copy / memory bandwidth
inline constexpr double k_conv_fp16_fraction = 0.55;  ///< FP16 convolution / dense tensor peak
inline constexpr double k_conv_fp32_fraction = 0.45;  ///< FP32 convolution (no TF32) / FP32 peak
inline constexpr double k_p2p_fraction = 0.6;         ///< peer copies / NVLink one way
inline constexpr double k_nccl_fraction = 0.5;        ///< all-reduce bus bandwidth / NVLink one way

/// The floor of `metric` (its name, in its unit) on GPU model `model`; nullopt where the model
/// or the metric has none, or where the device has other SMs than the datasheet's board (a MIG
/// slice, a cut-down part sold under the name): `sm_count` as the child saw it, when known.
struct Expectation {
  double min = 0.0;
  std::string words; ///< "0.35 of the datasheet's FP32 67 TFLOPS: NVIDIA H200 ... (https://...)"
};
std::optional<Expectation> expected_floor(std::string_view model, std::string_view metric,
                                          std::optional<int> sm_count = std::nullopt);

/// The metrics compared among identical GPUs (host copies have gpu.bandwidth_outlier).
const std::vector<std::string_view>& sibling_metrics();

/// A metric's floor as a check of its own folder declares it (gpu_checks::MetricSpec):
/// `fraction` of a datasheet figure of the GPU's model, in the metric's unit.
struct DatasheetFloor {
  double compat::GpuModelSpec::*figure = nullptr; ///< &GpuModelSpec::fp32_tflops, ...
  double scale = 1.0; ///< the metric's unit per the figure's (1000: TFLOPS as GFLOP/s)
  double fraction = 0.0;
  std::string_view what; ///< the figure in words, {} where its value goes ("FP32 {} TFLOPS")
  bool siblings = false; ///< identical GPUs of a run are compared on it too
};
/// Give `metric` its floor at start-up (gpu_checks::install()), before any check runs.
void add_metric_floor(std::string_view metric, const DatasheetFloor& floor);

/// Set each metric's expected floor on `gpu`'s model and add gpu.below_expected for a figure
/// below it: a warning, or a note when the GPU was measured beside other processes.
void add_expectations(const GpuTarget& gpu, CheckResult& result, bool contended,
                      std::optional<int> sm_count = std::nullopt);

/// For each GPU model with two or more GPUs among `results` (one per entry of `gpus`), add
/// gpu.slower_than_siblings to a GPU whose sibling metric is below k_outlier_fraction (0.8,
/// active/bandwidth_rules.hpp) of the model's median (a note when its figure was measured under
/// contention). A metric with a sibling basis is named only when its basis is below that
/// fraction of the median of the same method's basis figures as well.
void compare_siblings(std::vector<CheckResult>& results, const std::vector<GpuTarget>& gpus);

} // namespace gpucheck::checks
