#include "checks/rules/expected_figures.hpp"

#include <fmt/format.h>

#include <map>

#include "checks/active/bandwidth_rules.hpp"
#include "compat/gpu_models.hpp"
#include "findings/catalog.hpp"
#include "findings/codes.hpp"

namespace gpucheck::checks {

namespace {
constexpr std::string_view k_under_contention = "measured under contention";

/// The datasheet figure a metric is compared with, in the metric's unit, and its words.
struct Peak {
  double value = 0.0;
  double fraction = 0.0;
  std::string what; ///< "FP32 67 TFLOPS"
};

/// The floors that checks of their own folders declared (add_metric_floor()).
std::vector<std::pair<std::string_view, DatasheetFloor>>& added_floors() {
  static std::vector<std::pair<std::string_view, DatasheetFloor>> floors;
  return floors;
}

std::vector<std::string_view>& sibling_names() {
  static std::vector<std::string_view> metrics{"d2d_gbps", "conv_fp16_nhwc_32x256x56x56_tflops",
                                               "conv_fp32_nchw_64x64x56x56_tflops"};
  return metrics;
}

std::optional<Peak> peak_of(const compat::GpuModelSpec& model, std::string_view metric) {
  for (const auto& [name, floor] : added_floors()) {
    if (name == metric) {
      const double figure = model.*floor.figure;
      return Peak{figure * floor.scale, floor.fraction,
                  fmt::format(fmt::runtime(floor.what), fmt::format("{:g}", figure))};
    }
  }
  if (metric == "d2d_gbps") {
    return Peak{model.hbm_gbps, k_device_copy_fraction,
                fmt::format("memory bandwidth {:g} GB/s", model.hbm_gbps)};
  }
  if (metric == "conv_fp16_nhwc_32x256x56x56_tflops") {
    return Peak{model.fp16_tensor_tflops, k_conv_fp16_fraction,
                fmt::format("dense FP16 tensor {:g} TFLOPS", model.fp16_tensor_tflops)};
  }
  if (metric == "conv_fp32_nchw_64x64x56x56_tflops") {
    return Peak{model.fp32_tflops, k_conv_fp32_fraction,
                fmt::format("FP32 {:g} TFLOPS", model.fp32_tflops)};
  }
  if ((metric == "p2p_gbps" || metric == "nccl_busbw_gbps") && model.nvlink_gbps > 0.0) {
    return Peak{model.nvlink_gbps, metric == "p2p_gbps" ? k_p2p_fraction : k_nccl_fraction,
                fmt::format("NVLink {} x{} {:g} GB/s one way", model.nvlink_generation,
                            model.nvlink_links, model.nvlink_gbps)};
  }
  return std::nullopt;
}

bool under_contention(const Metric& metric) {
  return metric.note.find(k_under_contention) != std::string::npos;
}

std::string number(double value) {
  return value >= 100.0 ? fmt::format("{:.0f}", value) : fmt::format("{:.1f}", value);
}
} // namespace

std::optional<Expectation> expected_floor(std::string_view model, std::string_view metric,
                                          std::optional<int> sm_count) {
  const compat::GpuModelSpec* spec = compat::find_gpu_model(model);
  if (spec == nullptr || (sm_count && *sm_count != spec->sm_count)) {
    return std::nullopt;
  }
  const std::optional<Peak> peak = peak_of(*spec, metric);
  if (!peak) {
    return std::nullopt;
  }
  return Expectation{
      peak->value * peak->fraction,
      fmt::format("{:g} of the datasheet's {}: {}", peak->fraction, peak->what, spec->source)};
}

const std::vector<std::string_view>& sibling_metrics() {
  return sibling_names();
}

void add_metric_floor(std::string_view metric, const DatasheetFloor& floor) {
  added_floors().emplace_back(metric, floor);
  if (floor.siblings) {
    sibling_names().push_back(metric);
  }
}

void add_expectations(const GpuTarget& gpu, CheckResult& result, bool contended,
                      std::optional<int> sm_count) {
  // The host copies' floor is their link's (any model): shown beside the figure; below it is
  // gpu.bandwidth_low, which the bandwidth check judges against the link as it trained.
  const std::optional<LinkRate> link =
      gpu.pcie_gen && gpu.pcie_width ? link_rate_from_generation(*gpu.pcie_gen, *gpu.pcie_width)
                                     : std::nullopt;
  for (Metric& metric : result.metrics) {
    if (link && (metric.name == "h2d_gbps" || metric.name == "d2h_gbps")) {
      metric.expected_min = k_low_bandwidth_fraction * link->gbps;
      metric.expected =
          fmt::format("{:g} of what {} carries one way, {:.1f} GB/s (the link's best, from NVML)",
                      k_low_bandwidth_fraction, link->label, link->gbps);
      continue;
    }
    const std::optional<Expectation> floor = expected_floor(gpu.name, metric.name, sm_count);
    if (!floor) {
      continue;
    }
    metric.expected_min = floor->min;
    metric.expected = floor->words;
    if (metric.value >= floor->min) {
      continue;
    }
    const bool noted = contended || under_contention(metric);
    Finding finding = make_finding(codes::k_gpu_below_expected, gpu.gpu_index, gpu.gpu_index,
                                   gpu.name, metric.name, number(metric.value), metric.unit,
                                   number(floor->min), floor->words);
    if (noted) {
      // What the GPU did beside others, not what it can do.
      finding.severity = Severity::info;
      finding.message += " (measured under contention)";
    } else {
      result.status = worst_of(result.status, Status::warn);
    }
    result.findings.push_back(std::move(finding));
  }
}

void compare_siblings(std::vector<CheckResult>& results, const std::vector<GpuTarget>& gpus) {
  using Member = std::pair<size_t, size_t>; // (result, metric)
  for (const std::string_view name : sibling_metrics()) {
    std::map<std::string, std::vector<Member>> by_model;
    // (model, method) -> the basis figures of that method (Metric::sibling_basis)
    std::map<std::pair<std::string, std::string>, std::vector<double>> bases;
    for (size_t r = 0; r < results.size() && r < gpus.size(); ++r) {
      for (size_t m = 0; m < results[r].metrics.size(); ++m) {
        const Metric& metric = results[r].metrics[m];
        if (metric.name != name || metric.value <= 0.0) {
          continue;
        }
        by_model[gpus[r].name].emplace_back(r, m);
        if (const auto& basis = metric.sibling_basis; basis && basis->value > 0.0) {
          bases[{gpus[r].name, basis->method}].push_back(basis->value);
        }
      }
    }
    for (const auto& [model, members] : by_model) {
      std::vector<double> values;
      for (const auto& [r, m] : members) {
        values.push_back(results[r].metrics[m].value);
      }
      for (const auto& [r, m] : members) {
        // The bandwidth check's rule: below k_outlier_fraction of the model's median.
        const Metric& metric = results[r].metrics[m];
        const std::optional<double> ratio = outlier_ratio(metric.value, values);
        if (!ratio) {
          continue;
        }
        std::string figure = metric.name;
        if (const auto& basis = metric.sibling_basis) {
          // The figure rests on a choice made on each GPU: the GPU is named only when the
          // figure of one method that its siblings measured alike is low as well.
          const auto same = bases.find({model, basis->method});
          const std::optional<double> basis_ratio =
              same == bases.end() ? std::nullopt : outlier_ratio(basis->value, same->second);
          if (!basis_ratio) {
            continue;
          }
          figure =
              fmt::format("{} ({} {} {}, {:.0f}% of its median, as well)", metric.name,
                          basis->method, number(basis->value), metric.unit, 100.0 * *basis_ratio);
        }
        const GpuTarget& gpu = gpus[r];
        Finding finding = make_finding(codes::k_gpu_slower_than_siblings, gpu.gpu_index,
                                       gpu.gpu_index, model, figure, number(metric.value),
                                       metric.unit, fmt::format("{:.0f}", 100.0 * *ratio),
                                       values.size(), number(metric.value / *ratio));
        if (under_contention(metric)) {
          finding.severity = Severity::info;
          finding.message += " (measured under contention)";
        } else {
          results[r].status = worst_of(results[r].status, Status::warn);
        }
        results[r].findings.push_back(std::move(finding));
      }
    }
  }
}

} // namespace gpucheck::checks
