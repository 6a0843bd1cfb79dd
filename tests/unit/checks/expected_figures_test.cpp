// Expected figures: each measured figure's floor on its GPU model (a fraction of the datasheet),
// and identical GPUs of one run compared with one another. Figures below are the ones healthy
// H100s and H200s measured on the device tool's machines (docs/performance.md).

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "checks/rules/expected_figures.hpp"
#include "compat/gpu_models.hpp"
#include "gpucheck/model/json_io.hpp"

namespace gpucheck::checks {
namespace {

constexpr const char* k_h200_name = "NVIDIA H200";
constexpr const char* k_h100_name = "NVIDIA H100 80GB HBM3";

GpuTarget gpu_named(const std::string& name, int index = 0) {
  GpuTarget gpu;
  gpu.gpu_index = index;
  gpu.ordinal = index;
  gpu.name = name;
  return gpu;
}

CheckResult result_with(std::vector<Metric> metrics, int index = 0) {
  CheckResult result;
  result.check_id = "gpu.compute";
  result.status = Status::pass;
  result.gpu_index = index;
  result.metrics = std::move(metrics);
  return result;
}

size_t count_code(const CheckResult& result, const std::string& code) {
  size_t n = 0;
  for (const Finding& f : result.findings) {
    n += f.code == code ? 1 : 0;
  }
  return n;
}

// What H200s measured (2026-11-28): the lowest of each figure's healthy readings.
const std::vector<Metric> k_h200_healthy{
    {"fp32_fma_gflops", 30844.0, "GFLOP/s", ""},
    {"d2d_gbps", 2009.5, "GB/s", ""},
    {"conv_fp16_nhwc_32x256x56x56_tflops", 728.5, "TFLOP/s", ""},
    {"conv_fp32_nchw_64x64x56x56_tflops", 54.8, "TFLOP/s", ""},
    {"p2p_gbps", 386.7, "GB/s", ""},
    {"nccl_busbw_gbps", 297.3, "GB/s", ""},
};
// What H100s measured (2026-11-27): the convolutions, peer copies and all-reduce.
const std::vector<Metric> k_h100_healthy{
    {"conv_fp16_nhwc_32x256x56x56_tflops", 733.0, "TFLOP/s", ""},
    {"p2p_gbps", 389.0, "GB/s", ""},
    {"nccl_busbw_gbps", 296.9, "GB/s", ""},
};

TEST(ExpectedFigures, HealthyH200AndH100FiguresPassAndCarryTheirFloor) {
  for (const auto& [model, metrics] :
       {std::pair{k_h200_name, k_h200_healthy}, std::pair{k_h100_name, k_h100_healthy}}) {
    CheckResult result = result_with(metrics);
    add_expectations(gpu_named(model), result, false);
    EXPECT_EQ(result.status, Status::pass) << model;
    EXPECT_TRUE(result.findings.empty()) << model << ": " << result.findings.front().message;
    for (const Metric& metric : result.metrics) {
      ASSERT_TRUE(metric.expected_min.has_value()) << model << " " << metric.name;
      // With a margin: a healthy figure stays at least 15% above its floor.
      EXPECT_GT(metric.value, 1.15 * *metric.expected_min) << model << " " << metric.name;
      EXPECT_NE(metric.expected.find("https://www.nvidia.com/"), std::string::npos);
    }
  }
}

TEST(ExpectedFigures, TheSameFiguresLoweredWarnNamingFigureFloorAndSource) {
  std::vector<Metric> low = k_h200_healthy;
  for (Metric& metric : low) {
    metric.value *= 0.5;
  }
  CheckResult result = result_with(low);
  add_expectations(gpu_named(k_h200_name, 3), result, false);
  EXPECT_EQ(result.status, Status::warn);
  ASSERT_EQ(count_code(result, "gpu.below_expected"), low.size());
  const Finding& fma = result.findings.front();
  EXPECT_EQ(fma.severity, Severity::warn);
  EXPECT_EQ(fma.gpu_index, 3);
  EXPECT_NE(fma.message.find("fp32_fma_gflops = 15422 GFLOP/s is below the 23450 GFLOP/s"),
            std::string::npos)
      << fma.message;
  EXPECT_NE(fma.message.find("0.35 of the datasheet's FP32 67 TFLOPS"), std::string::npos)
      << fma.message;
  // An all-reduce at PCIe speed on an NVLink node (the hole the anchors leave).
  CheckResult nccl = result_with({{"nccl_busbw_gbps", 24.0, "GB/s", ""}});
  add_expectations(gpu_named(k_h100_name), nccl, false);
  EXPECT_EQ(count_code(nccl, "gpu.below_expected"), 1U);
}

TEST(ExpectedFigures, UnderContentionALowFigureIsANote) {
  std::vector<Metric> low = k_h200_healthy;
  low[0].value = 12000.0;
  CheckResult result = result_with(low);
  add_expectations(gpu_named(k_h200_name), result, true);
  EXPECT_EQ(result.status, Status::pass);
  ASSERT_EQ(count_code(result, "gpu.below_expected"), 1U);
  EXPECT_EQ(result.findings.front().severity, Severity::info);
  EXPECT_NE(result.findings.front().message.find("measured under contention"), std::string::npos);
}

TEST(ExpectedFigures, AModelWithoutADatasheetRowHasNoFloor) {
  CheckResult result = result_with({{"fp32_fma_gflops", 1.0, "GFLOP/s", ""}});
  // The H100's PCIe board has other clocks than its SXM one: no floor borrowed from it.
  add_expectations(gpu_named("NVIDIA H100 PCIe"), result, false);
  EXPECT_EQ(result.status, Status::pass);
  EXPECT_TRUE(result.findings.empty());
  EXPECT_FALSE(result.metrics.front().expected_min.has_value());
  EXPECT_FALSE(
      expected_floor(k_h200_name, "h2d_gbps").has_value()); // the host link has its own rule
  // A MIG slice, or a part with fewer SMs than the datasheet's board: no floor either.
  EXPECT_TRUE(expected_floor(k_h200_name, "fp32_fma_gflops", 132).has_value());
  CheckResult slice = result_with({{"fp32_fma_gflops", 4000.0, "GFLOP/s", ""}});
  add_expectations(gpu_named(k_h200_name), slice, false, 16);
  EXPECT_TRUE(slice.findings.empty());
  EXPECT_FALSE(slice.metrics.front().expected_min.has_value());
}

TEST(ExpectedFigures, HostCopiesShowTheirLinksFloorAndLeaveTheVerdictToTheBandwidthRule) {
  GpuTarget gpu = gpu_named("NVIDIA GeForce RTX 4090"); // any model: the link decides
  gpu.pcie_gen = 5;
  gpu.pcie_width = 16;
  CheckResult result =
      result_with({{"h2d_gbps", 55.4, "GB/s", ""}, {"d2h_gbps", 12.0, "GB/s", ""}});
  add_expectations(gpu, result, false);
  for (const Metric& metric : result.metrics) {
    ASSERT_TRUE(metric.expected_min.has_value()) << metric.name;
    EXPECT_NEAR(*metric.expected_min, 0.6 * 63.0, 0.2) << metric.name;
    EXPECT_NE(metric.expected.find("PCIe Gen5 x16"), std::string::npos) << metric.expected;
  }
  EXPECT_TRUE(result.findings.empty()); // gpu.bandwidth_low's to say
  EXPECT_EQ(result.status, Status::pass);
}

TEST(ExpectedFigures, TheLongLevelsFiguresShowTheirFloors) {
  // One H200, --level long --duration 4 (2026-11-28): memory test 3980-3983 GB/s; the burn's
  // BF16 GEMM 683-686 TFLOP/s, judged by gpu.burn_slow against the model's reference.
  CheckResult memtest = result_with({{"memtest_throughput_gbps", 3980.0, "GB/s", ""}});
  add_expectations(gpu_named(k_h200_name), memtest, false);
  ASSERT_TRUE(memtest.metrics.front().expected_min.has_value());
  EXPECT_DOUBLE_EQ(*memtest.metrics.front().expected_min, 0.6 * 4800.0);
  EXPECT_TRUE(memtest.findings.empty());
  // The burn's floors come from its typed report (add_peer_verdicts, src/gpu_checks/burn/),
  // never from its metrics' names: none here.
  CheckResult burn =
      result_with({{"burn_bf16_tflops", 683.4, "TFLOP/s", "median of 583 GEMMs 8192^3"}});
  add_expectations(gpu_named(k_h200_name), burn, false);
  EXPECT_FALSE(burn.metrics[0].expected_min.has_value());
  EXPECT_TRUE(burn.findings.empty()); // gpu.burn_slow's to say
}

TEST(ExpectedFigures, EveryModelIsSourced) {
  ASSERT_FALSE(compat::gpu_model_specs().empty());
  for (const compat::GpuModelSpec& model : compat::gpu_model_specs()) {
    EXPECT_NE(model.source.find("https://www.nvidia.com/"), std::string::npos) << model.name;
    EXPECT_GT(model.hbm_gbps, 0.0) << model.name;
    EXPECT_GT(model.fp32_tflops, 0.0) << model.name;
    EXPECT_GT(model.fp16_tensor_tflops, model.fp32_tflops) << model.name;
    EXPECT_EQ(compat::find_gpu_model(model.name), &model);
  }
}

std::vector<CheckResult> four_gpus(const std::vector<double>& fma) {
  std::vector<CheckResult> results;
  for (size_t i = 0; i < fma.size(); ++i) {
    results.push_back(
        result_with({{"fp32_fma_gflops", fma[i], "GFLOP/s", ""}}, static_cast<int>(i)));
  }
  return results;
}

TEST(ExpectedFigures, OneSiblingPlantedSlowIsNamedAndTheOthersPass) {
  const std::vector<GpuTarget> gpus{gpu_named(k_h200_name, 0), gpu_named(k_h200_name, 1),
                                    gpu_named(k_h200_name, 2), gpu_named(k_h200_name, 3)};
  // Healthy twin: four H200s as measured, within 1% of one another.
  std::vector<CheckResult> healthy = four_gpus({31207.0, 31094.0, 31288.0, 30948.0});
  compare_siblings(healthy, gpus);
  for (const CheckResult& r : healthy) {
    EXPECT_TRUE(r.findings.empty()) << r.findings.front().message;
  }
  // GPU 2 at 70% of the others: above the model's floor, so only the siblings show it.
  std::vector<CheckResult> planted = four_gpus({31207.0, 31094.0, 21850.0, 30948.0});
  compare_siblings(planted, gpus);
  for (size_t i = 0; i < planted.size(); ++i) {
    EXPECT_EQ(count_code(planted[i], "gpu.slower_than_siblings"), i == 2 ? 1U : 0U) << i;
  }
  EXPECT_EQ(planted[2].status, Status::warn);
  EXPECT_NE(planted[2].findings.front().message.find("is 70% of the median of 4 GPUs"),
            std::string::npos)
      << planted[2].findings.front().message;
  // Under contention the same figure is a note.
  std::vector<CheckResult> busy = four_gpus({31207.0, 31094.0, 21850.0, 30948.0});
  busy[2].metrics.front().note = "measured under contention";
  compare_siblings(busy, gpus);
  EXPECT_EQ(busy[2].status, Status::pass);
  EXPECT_EQ(busy[2].findings.front().severity, Severity::info);
}

/// One FP32 convolution figure per GPU: its best and its heuristic algorithm's figure.
std::vector<CheckResult>
convolutions(const std::vector<std::pair<double, double>>& best_and_heuristic,
             const std::string& heuristic = "IMPLICIT_PRECOMP_GEMM") {
  std::vector<CheckResult> results;
  for (size_t i = 0; i < best_and_heuristic.size(); ++i) {
    Metric metric{"conv_fp32_nchw_64x64x56x56_tflops", best_and_heuristic[i].first, "TFLOP/s", ""};
    metric.sibling_basis =
        SiblingBasis{best_and_heuristic[i].second, "cuDNN's heuristic algorithm " + heuristic};
    results.push_back(result_with({metric}, static_cast<int>(i)));
  }
  return results;
}

TEST(ExpectedFigures, AConvolutionIsNamedSlowOnlyWhenItsBasisIsSlowToo) {
  const std::vector<GpuTarget> gpus{gpu_named(k_h200_name, 0), gpu_named(k_h200_name, 1),
                                    gpu_named(k_h200_name, 2), gpu_named(k_h200_name, 3)};
  const auto named = [](const std::vector<CheckResult>& results) {
    std::vector<size_t> out;
    for (size_t i = 0; i < results.size(); ++i) {
      if (count_code(results[i], "gpu.slower_than_siblings") != 0) {
        out.push_back(i);
      }
    }
    return out;
  };
  // Healthy, as measured on two H200s: cudnnFind ranked IMPLICIT_PRECOMP_GEMM (41.3 TFLOP/s)
  // first on GPU 0 and FFT_TILING (66.3) elsewhere; the heuristic's figure agrees on all.
  std::vector<CheckResult> picked =
      convolutions({{41.3, 40.1}, {66.3, 40.0}, {66.4, 40.2}, {65.9, 39.9}});
  compare_siblings(picked, gpus);
  EXPECT_TRUE(named(picked).empty());
  EXPECT_EQ(picked[0].status, Status::pass);
  // One timing disturbed: the heuristic's figure low on GPU 1, its best as its siblings'.
  std::vector<CheckResult> disturbed =
      convolutions({{66.3, 40.1}, {66.3, 27.0}, {66.4, 40.2}, {65.9, 39.9}});
  compare_siblings(disturbed, gpus);
  EXPECT_TRUE(named(disturbed).empty());
  // GPU 3 computes slower in fact: its best and its heuristic's algorithm both at 70%.
  std::vector<CheckResult> planted =
      convolutions({{66.3, 40.1}, {66.3, 40.0}, {66.4, 40.2}, {46.3, 28.0}});
  compare_siblings(planted, gpus);
  EXPECT_EQ(named(planted), std::vector<size_t>{3});
  EXPECT_EQ(planted[3].status, Status::warn);
  ASSERT_FALSE(planted[3].findings.empty());
  EXPECT_NE(planted[3].findings.front().message.find(
                "conv_fp32_nchw_64x64x56x56_tflops (cuDNN's heuristic algorithm "
                "IMPLICIT_PRECOMP_GEMM 28.0 TFLOP/s, 70% of its median, as well) = 46.3 TFLOP/s "
                "is 70% of the median of 4 GPUs"),
            std::string::npos)
      << planted[3].findings.front().message;
  // A GPU whose heuristic chose another algorithm cannot be confirmed against the others.
  std::vector<CheckResult> other = convolutions({{66.3, 40.1}, {66.3, 40.0}, {66.4, 40.2}});
  other.push_back(convolutions({{46.3, 20.0}}, "GEMM").front());
  other.back().gpu_index = 3;
  compare_siblings(other, gpus);
  EXPECT_TRUE(named(other).empty());
}

TEST(ExpectedFigures, OnlyIdenticalModelsAreCompared) {
  const std::vector<GpuTarget> gpus{gpu_named(k_h200_name, 0), gpu_named(k_h100_name, 1)};
  std::vector<CheckResult> mixed = four_gpus({31207.0, 15000.0});
  compare_siblings(mixed, gpus);
  EXPECT_TRUE(mixed[0].findings.empty());
  EXPECT_TRUE(mixed[1].findings.empty());
}

TEST(ExpectedFigures, TheJsonCarriesTheFloorWhereThereIsOne) {
  Metric plain{"h2d_gbps", 55.3, "GB/s", "median of 5"};
  EXPECT_TRUE(nlohmann::json(plain)["expected_min"].is_null());
  EXPECT_EQ(nlohmann::json(plain)["expected"], "");
  Metric expected{"d2d_gbps", 2070.0, "GB/s", ""};
  expected.expected_min = 1440.0;
  expected.expected = "0.3 of the datasheet's memory bandwidth 4800 GB/s: ...";
  const nlohmann::json j = expected;
  EXPECT_EQ(j["expected_min"], 1440.0);
  EXPECT_EQ(j["expected"], expected.expected);
  EXPECT_EQ(j.get<Metric>(), expected);
  EXPECT_EQ(nlohmann::json(plain).get<Metric>(), plain);
}

} // namespace
} // namespace gpucheck::checks
