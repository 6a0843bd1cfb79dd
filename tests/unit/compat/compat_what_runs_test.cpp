// Rule 8, "what can this machine run", for machines taken from the facts sheet.

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "compat/lookup.hpp"
#include "compat/matrix.hpp"
#include "compat/what_runs.hpp"
#include "unit/compat_test_support.hpp"

namespace gpucheck::compat {
namespace {

MachineQuery query(const std::string& driver, std::vector<std::string> ccs, int driver_cuda = 0) {
  MachineQuery q;
  q.driver_text = driver;
  q.driver = Version::parse(driver);
  if (driver_cuda != 0) {
    q.driver_cuda = cuda_from_int(driver_cuda);
  }
  for (const std::string& cc : ccs) {
    q.gpu_ccs.push_back(*parse_cc(cc));
  }
  return q;
}

const PytorchWheel& wheel(const std::string& version, const std::string& name) {
  for (const PytorchWheel& w : embedded_matrix().pytorch) {
    if (w.version.str() == version && w.wheel == name) {
      return w;
    }
  }
  throw std::logic_error("no such wheel in the matrix: " + version + " " + name);
}

TEST(WhatRuns, H200OnR580) {
  const WhatRuns w = what_runs(embedded_matrix(), query("580.159.04", {"sm_90"}, 13000));
  EXPECT_EQ(w.newest_cuda, "13.0");
  EXPECT_EQ(w.newest_cuda_mvc, "13.4");
  ASSERT_TRUE(w.pytorch);
  EXPECT_EQ(w.pytorch->name, "PyTorch 2.14 cu132");
  EXPECT_TRUE(w.pytorch->minor_version);
  ASSERT_TRUE(w.pytorch_native);
  EXPECT_EQ(w.pytorch_native->name, "PyTorch 2.14 cu130");
  ASSERT_TRUE(w.tensorflow);
  EXPECT_EQ(w.tensorflow->name, "TensorFlow 2.21.0");
  ASSERT_TRUE(w.jax);
  EXPECT_EQ(w.jax->name, "jax[cuda13]");
  ASSERT_FALSE(w.cudnn.empty());
  EXPECT_EQ(w.cudnn.back(), "9.17.0 (CUDA 12.0-12.9, CUDA 13.0-13.1 builds)");
  EXPECT_FALSE(w.driver_unknown_to_matrix);
}

TEST(WhatRuns, HypotheticalR535Ampere) {
  const WhatRuns w = what_runs(embedded_matrix(), query("535.104.05", {"sm_86"}));
  EXPECT_EQ(w.newest_cuda, "12.2");
  EXPECT_EQ(w.newest_cuda_mvc, "12.9");
  ASSERT_TRUE(w.pytorch);
  EXPECT_EQ(w.pytorch->name, "PyTorch 2.14 cu126");
  EXPECT_TRUE(w.pytorch->minor_version);
  ASSERT_TRUE(w.pytorch_native);
  EXPECT_EQ(w.pytorch_native->name, "PyTorch 2.5 cu121");
  ASSERT_TRUE(w.jax);
  EXPECT_EQ(w.jax->name, "jax[cuda12]");
  ASSERT_TRUE(w.tensorflow);
  EXPECT_EQ(w.tensorflow->name, "TensorFlow 2.21.0");
}

TEST(WhatRuns, BlackwellOnR570GetsTheLastCu128) {
  const WhatRuns w = what_runs(embedded_matrix(), query("570.26", {"sm_120"}));
  ASSERT_TRUE(w.pytorch);
  EXPECT_EQ(w.pytorch->name, "PyTorch 2.11 cu128");
  ASSERT_TRUE(w.jax);
  EXPECT_EQ(w.jax->name, "jax[cuda12]");
}

TEST(WhatRuns, VoltaOnR580KeepsCu126) {
  const WhatRuns w = what_runs(embedded_matrix(), query("580.65.06", {"sm_70"}));
  ASSERT_TRUE(w.pytorch);
  EXPECT_EQ(w.pytorch->name, "PyTorch 2.14 cu126");
  ASSERT_TRUE(w.jax);
  EXPECT_EQ(w.jax->name, "jax[cuda12]");
}

TEST(WhatRuns, VoltaOnR580RunsCuda12AtMost) {
  // R580 runs CUDA 13.0, but CUDA 13 dropped Volta: the newest CUDA for sm_70 is 12.9.
  const WhatRuns w = what_runs(embedded_matrix(), query("580.65.06", {"sm_70"}));
  EXPECT_EQ(w.newest_cuda, "12.9");
  EXPECT_FALSE(w.newest_cuda_mvc);
  ASSERT_FALSE(w.notes.empty());
  EXPECT_NE(w.notes.back().find("the newest CUDA major for it is 12"), std::string::npos);
  ASSERT_TRUE(w.tensorflow);
  for (const std::string& cudnn : w.cudnn) {
    EXPECT_EQ(cudnn.find("CUDA 13"), std::string::npos) << cudnn;
  }
}

TEST(WhatRuns, VoltaOnR590RunsNothing) {
  // R580 is the last branch for Volta: a newer driver offers no CUDA, no framework at all.
  const WhatRuns w = what_runs(embedded_matrix(), query("590.44.01", {"sm_70"}));
  EXPECT_FALSE(w.newest_cuda);
  EXPECT_FALSE(w.pytorch);
  EXPECT_FALSE(w.tensorflow);
  EXPECT_FALSE(w.jax);
  EXPECT_TRUE(w.cudnn.empty());
  ASSERT_FALSE(w.notes.empty());
  EXPECT_NE(w.notes.back().find("R580 is the last driver branch"), std::string::npos)
      << w.notes.back();
  // Its twin: the same GPU on R580 runs CUDA 12 builds.
  EXPECT_TRUE(what_runs(embedded_matrix(), query("580.65.06", {"sm_70"})).pytorch);
}

TEST(WhatRuns, HopperOnR470RunsNothing) {
  const WhatRuns w = what_runs(embedded_matrix(), query("470.256.02", {"sm_90"}));
  EXPECT_FALSE(w.pytorch);
  EXPECT_FALSE(w.jax);
  EXPECT_FALSE(w.tensorflow);
  ASSERT_FALSE(w.notes.empty());
  EXPECT_NE(w.notes.back().find("needs a driver for CUDA 11.8 or newer"), std::string::npos)
      << w.notes.back();
}

TEST(WhatRuns, KeplerOnR470GetsCu118) {
  const WhatRuns w = what_runs(embedded_matrix(), query("470.82.01", {"3.7"}));
  ASSERT_TRUE(w.pytorch);
  EXPECT_EQ(w.pytorch->name, "PyTorch 2.5 cu118");
  EXPECT_FALSE(w.jax);
}

TEST(WhatRuns, UnknownNewerDriverIsAssumedToRunEverything) {
  const WhatRuns w = what_runs(embedded_matrix(), query("620.10", {"sm_90"}));
  EXPECT_TRUE(w.driver_unknown_to_matrix);
  ASSERT_TRUE(w.pytorch);
  EXPECT_EQ(w.pytorch->name, "PyTorch 2.14 cu132");
  EXPECT_FALSE(w.pytorch->minor_version);
  ASSERT_EQ(w.notes.size(), 1u);
  EXPECT_NE(w.notes[0].find("unknown to this matrix"), std::string::npos);
}

TEST(WheelFit, Sm120WithCu118IsNotCovered) {
  const WheelVerdict v =
      fit_pytorch_wheel(embedded_matrix(), wheel("2.5", "cu118"), query("580.65.06", {"sm_120"}));
  EXPECT_EQ(v.fit, WheelFit::gpu_not_covered);
  EXPECT_NE(v.reason.find("sm_120"), std::string::npos);
}

TEST(WheelFit, Sm121RunsCu130ThroughSass) {
  const WheelVerdict v =
      fit_pytorch_wheel(embedded_matrix(), wheel("2.9", "cu130"), query("580.65.06", {"12.1"}));
  EXPECT_EQ(v.fit, WheelFit::fits);
}

TEST(WheelFit, Cu130NeedsR580) {
  const WheelVerdict v =
      fit_pytorch_wheel(embedded_matrix(), wheel("2.9", "cu130"), query("575.57.08", {"sm_90"}));
  EXPECT_EQ(v.fit, WheelFit::driver_too_old);
  EXPECT_NE(v.reason.find("580.65.06"), std::string::npos);
}

TEST(WheelFit, UnreadArchListIsUnknownNotGuessed) {
  const WheelVerdict v =
      fit_pytorch_wheel(embedded_matrix(), wheel("2.6", "cu124"), query("580.65.06", {"sm_90"}));
  EXPECT_EQ(v.fit, WheelFit::archs_unknown);
}

TEST(WheelFit, Cu128On2_8KeepsVolta) {
  const WheelVerdict v =
      fit_pytorch_wheel(embedded_matrix(), wheel("2.8", "cu128"), query("570.26", {"sm_70"}));
  EXPECT_EQ(v.fit, WheelFit::fits);
  const WheelVerdict dropped =
      fit_pytorch_wheel(embedded_matrix(), wheel("2.11", "cu128"), query("570.26", {"sm_70"}));
  EXPECT_EQ(dropped.fit, WheelFit::gpu_not_covered);
}

TEST(WhatRuns, FromSnapshotPlacesGpusByName) {
  const SystemSnapshot s = testing::make_snapshot(
      {.driver = "580.159.04", .driver_cuda = 13000, .gpus = {{"NVIDIA H200", 0, 0}}});
  const MachineQuery q = query_from_snapshot(s, embedded_matrix());
  ASSERT_EQ(q.gpu_ccs.size(), 1u);
  EXPECT_EQ(q.gpu_ccs[0].str(), "9.0");
}

TEST(WhatRuns, JsonHasTheAnswerKeys) {
  const nlohmann::json j =
      to_json(what_runs(embedded_matrix(), query("580.159.04", {"sm_90"}, 13000)));
  EXPECT_EQ(j["newest_cuda"], "13.0");
  EXPECT_EQ(j["pytorch"]["name"], "PyTorch 2.14 cu132");
  EXPECT_EQ(j["pytorch"]["minor_version_compatibility"], true);
  EXPECT_EQ(j["matrix_version"], embedded_matrix().matrix_version);
}

} // namespace
} // namespace gpucheck::compat
