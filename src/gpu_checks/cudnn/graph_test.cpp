// The parts of the cuDNN graph-API convolution path that need no GPU: tensor strides, which
// engine configs a run tries, and how a config is described.
#include "gpu_checks/cudnn/graph.hpp"

#include <gtest/gtest.h>

namespace gpucheck::gpu_checks::cudnn {
namespace {

TEST(CudnnGraph, PackedStridesFollowTheLayout) {
  // X of 2x3x5x7 (N,C,H,W).
  EXPECT_EQ(packed_strides({2, 3, 5, 7}, false), (std::array<int64_t, 4>{105, 35, 7, 1}));
  EXPECT_EQ(packed_strides({2, 3, 5, 7}, true), (std::array<int64_t, 4>{105, 1, 21, 3}));
  // W of 64x256x3x3 (K,C,R,S) as KRSC.
  EXPECT_EQ(packed_strides({64, 256, 3, 3}, true), (std::array<int64_t, 4>{2304, 1, 768, 256}));
}

GraphEngineConfig config(int64_t engine, int rank, std::vector<std::string> notes = {},
                         bool fallback = false, bool rtc = false,
                         std::vector<std::pair<int64_t, int64_t>> knobs = {}) {
  GraphEngineConfig c;
  c.engine = engine;
  c.rank = rank;
  c.numerical_notes = std::move(notes);
  c.fallback = fallback;
  c.runtime_compiled = rtc;
  c.knobs = std::move(knobs);
  return c;
}

TEST(CudnnGraph, StandardRunTriesTheFirstFewPrecompiledModeAConfigs) {
  const std::vector<GraphEngineConfig> configs = {
      config(7, 0, {}, false, true), // runtime compiled: not in a standard run
      config(1, 1),
      config(1, 2, {}, false, false, {{3, 1}}), // same engine, other knobs: distinct
      config(1, 3),                             // duplicate of rank 1
      config(2, 4),
      config(4, 5),
      config(5, 0, {}, true), // fallback
  };
  EXPECT_EQ(configs_to_try(configs, false, false), (std::vector<size_t>{1, 2, 4}));
  EXPECT_EQ(configs_to_try(configs, true, false), (std::vector<size_t>{0, 1, 2, 4, 5, 6}));
}

TEST(CudnnGraph, StrictFp32DropsTensorCoreAndDownConvertingEngines) {
  const std::vector<GraphEngineConfig> configs = {
      config(1, 0, {"TENSOR_CORE"}),
      config(2, 1, {"DOWN_CONVERT_INPUTS", "FFT"}),
      config(3, 2, {"FFT", "NONDETERMINISTIC"}),
      config(4, 3, {"WINOGRAD"}),
      config(5, 4),
  };
  EXPECT_FALSE(fits_strict_fp32(configs[0]));
  EXPECT_FALSE(fits_strict_fp32(configs[1]));
  EXPECT_TRUE(fits_strict_fp32(configs[2]));
  EXPECT_EQ(configs_to_try(configs, true, true), (std::vector<size_t>{2, 3, 4}));
  EXPECT_EQ(configs_to_try(configs, false, true), (std::vector<size_t>{2, 3, 4}));
  EXPECT_EQ(configs_to_try(configs, false, false), (std::vector<size_t>{0, 1, 2}));
}

TEST(CudnnGraph, ConfigsAreDescribedByEngineAndKnobs) {
  EXPECT_EQ(describe(config(12, 0)), "engine 12");
  EXPECT_EQ(describe(config(0, 0, {}, false, false, {{3, 1}, {17, -2}})),
            "engine 0, knobs 3=1 17=-2");
  EXPECT_EQ(numerical_note_name(0), "TENSOR_CORE");
  EXPECT_EQ(numerical_note_name(3), "FFT");
  EXPECT_EQ(numerical_note_name(42), "note 42");
}

} // namespace
} // namespace gpucheck::gpu_checks::cudnn
