// Table-driven verdicts of the compatibility rules, each case taken from the facts sheet
// (/work/shared/reference/compat-facts.md): machine facts in, check status and finding codes out.

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "checks/compat/common.hpp"
#include "compat/matrix.hpp"
#include "compat/rules.hpp"
#include "unit/compat_test_support.hpp"

namespace gpucheck::compat {
namespace {

using testing::TestGpu;
using testing::TestMachine;

enum class Rule { driver_runtime, driver_cudnn, gpu_driver, gpu_arch, gpu_cudnn, toolkit, forward };

struct Case {
  const char* name;
  Rule rule;
  TestMachine machine;
  Status status;
  std::set<std::string> codes;
};

RuleOutcome apply(Rule rule, const SystemSnapshot& s, const Matrix& m) {
  switch (rule) {
  case Rule::driver_runtime:
    return driver_runtime_rule(s, m);
  case Rule::driver_cudnn:
    return driver_cudnn_rule(s, m);
  case Rule::gpu_driver:
    return gpu_driver_rule(s, m);
  case Rule::gpu_arch:
    return gpu_toolkit_rule(s, m);
  case Rule::gpu_cudnn:
    return gpu_cudnn_rule(s, m);
  case Rule::toolkit:
    return toolkit_driver_rule(s, m);
  case Rule::forward:
    return forward_compat_rule(s, m);
  }
  return {};
}

const TestGpu k_h200{"NVIDIA H200", 9, 0};
const TestGpu k_v100{"Tesla V100-SXM2-16GB", 7, 0};
const TestGpu k_k80{"Tesla K80", 3, 7};

// clang-format off
const Case k_cases[] = {
    // Rule 1: driver vs CUDA runtime (section 1.1, 1.2).
    {"12.0 on exactly 525.60.13", Rule::driver_runtime, {.driver = "525.60.13", .driver_cuda = 12000, .cudart = "12.0.107"}, Status::pass, {}},
    {"12.4 on exactly 525.60.13: MVC", Rule::driver_runtime, {.driver = "525.60.13", .driver_cuda = 12000, .cudart = "12.4.99"}, Status::pass, {"compat.minor_version_compat"}},
    {"12.4 on 525.60.12: one below the 12.x floor", Rule::driver_runtime, {.driver = "525.60.12", .driver_cuda = 12000, .cudart = "12.4.99"}, Status::fail, {"compat.driver_too_old"}},
    {"12.8 on 525.60.13, CUDA from the data", Rule::driver_runtime, {.driver = "525.60.13", .cudart = "12.8"}, Status::pass, {"compat.minor_version_compat"}},
    {"12.0 on 525.60.12, CUDA from the data", Rule::driver_runtime, {.driver = "525.60.12", .cudart = "12.0"}, Status::fail, {"compat.driver_too_old"}},
    {"13.0 on 575.57.08 (12.9 U1 driver)", Rule::driver_runtime, {.driver = "575.57.08", .driver_cuda = 12090, .cudart = "13.0.48"}, Status::fail, {"compat.driver_too_old"}},
    {"13.0 on 575.57.08, CUDA from the data", Rule::driver_runtime, {.driver = "575.57.08", .cudart = "13.0"}, Status::fail, {"compat.driver_too_old"}},
    {"13.0 on 580.65.06", Rule::driver_runtime, {.driver = "580.65.06", .cudart = "13.0"}, Status::pass, {}},
    {"13.2 on 580.65.06: MVC", Rule::driver_runtime, {.driver = "580.65.06", .driver_cuda = 13000, .cudart = "13.2"}, Status::pass, {"compat.minor_version_compat"}},
    {"13.0 on 580.65.05", Rule::driver_runtime, {.driver = "580.65.05", .cudart = "13.0"}, Status::fail, {"compat.driver_too_old"}},
    {"11.8 on 450.80.02: MVC floor", Rule::driver_runtime, {.driver = "450.80.02", .cudart = "11.8"}, Status::pass, {"compat.minor_version_compat"}},
    {"11.8 on 450.80.01", Rule::driver_runtime, {.driver = "450.80.01", .cudart = "11.8"}, Status::fail, {"compat.driver_too_old"}},
    {"11.0 on 450.51.05", Rule::driver_runtime, {.driver = "450.51.05", .cudart = "11.0"}, Status::pass, {}},
    {"11.4 on 470.42.01", Rule::driver_runtime, {.driver = "470.42.01", .cudart = "11.4"}, Status::pass, {}},
    {"10.2 on 440.33", Rule::driver_runtime, {.driver = "440.33", .cudart = "10.2"}, Status::pass, {}},
    {"10.2 on 418.39: no MVC before 11", Rule::driver_runtime, {.driver = "418.39", .cudart = "10.2"}, Status::fail, {"compat.driver_too_old"}},
    {"10.1 on 418.39", Rule::driver_runtime, {.driver = "418.39", .cudart = "10.1"}, Status::pass, {}},
    {"12.9 on 580.159.04", Rule::driver_runtime, {.driver = "580.159.04", .driver_cuda = 13000, .cudart = "12.9"}, Status::pass, {}},
    {"13.0 on 580.159.04 (the H200 machine)", Rule::driver_runtime, {.driver = "580.159.04", .driver_cuda = 13000, .cudart = "13.0"}, Status::pass, {}},
    {"13.0 on unknown 620.10", Rule::driver_runtime, {.driver = "620.10", .cudart = "13.0"}, Status::pass, {"compat.driver_unknown"}},
    {"13.0 on unknown 620.10.02 reporting 14.0", Rule::driver_runtime, {.driver = "620.10.02", .driver_cuda = 14000, .cudart = "13.0"}, Status::pass, {"compat.driver_unknown"}},
    {"14.0 on unknown 620.10", Rule::driver_runtime, {.driver = "620.10", .cudart = "14.0"}, Status::pass, {"compat.driver_unknown", "compat.cuda_unknown"}},
    {"unknown 620.10 without a runtime", Rule::driver_runtime, {.driver = "620.10"}, Status::pass, {"compat.driver_unknown"}},
    {"12.2 on 535.104.05", Rule::driver_runtime, {.driver = "535.104.05", .cudart = "12.2"}, Status::pass, {}},
    {"12.6 on 535.104.05: MVC", Rule::driver_runtime, {.driver = "535.104.05", .cudart = "12.6"}, Status::pass, {"compat.minor_version_compat"}},
    {"13.0 on 535.104.05", Rule::driver_runtime, {.driver = "535.104.05", .cudart = "13.0"}, Status::fail, {"compat.driver_too_old"}},
    {"12.8 on 570.26", Rule::driver_runtime, {.driver = "570.26", .cudart = "12.8"}, Status::pass, {}},
    {"13.4 on 615.31: branch-only minimum", Rule::driver_runtime, {.driver = "615.31", .cudart = "13.4"}, Status::pass, {}},
    {"13.4 on 610.43.02: MVC", Rule::driver_runtime, {.driver = "610.43.02", .cudart = "13.4"}, Status::pass, {"compat.minor_version_compat"}},
    {"12.9 on 575.51.03", Rule::driver_runtime, {.driver = "575.51.03", .cudart = "12.9"}, Status::pass, {}},
    {"no runtime: skip", Rule::driver_runtime, {.driver = "580.65.06"}, Status::skip, {}},
    {"no driver: skip", Rule::driver_runtime, {.cudart = "13.0"}, Status::skip, {}},

    // Rule 2: driver vs the CUDA cuDNN was built for (section 4.1, 4.3).
    {"cuDNN 9.19 built for 13.1 on 580.159.04", Rule::driver_cudnn, {.driver = "580.159.04", .driver_cuda = 13000, .cudnn = "9.19.0", .cudnn_cudart = 13010}, Status::pass, {"compat.minor_version_compat"}},
    {"cuDNN 9.17 built for CUDA 13 on driver 570", Rule::driver_cudnn, {.driver = "570.124.06", .driver_cuda = 12080, .cudnn = "9.17.0", .cudnn_cudart = 13000}, Status::fail, {"compat.driver_too_old"}},
    {"cuDNN 9.10.2 built for 12.8 on 570.26", Rule::driver_cudnn, {.driver = "570.26", .cudnn = "9.10.2", .cudnn_cudart = 12080}, Status::pass, {}},
    {"cuDNN 9.10.2 built for 12.9 on 535.104.05", Rule::driver_cudnn, {.driver = "535.104.05", .cudnn = "9.10.2", .cudnn_cudart = 12090}, Status::pass, {"compat.minor_version_compat"}},
    {"cuDNN 8.9.7 built for 11.8 on 450.80.02", Rule::driver_cudnn, {.driver = "450.80.02", .cudnn = "8.9.7", .cudnn_cudart = 11080}, Status::pass, {"compat.minor_version_compat"}},
    {"cuDNN 9.1 built for 12.4 on 520.61.05", Rule::driver_cudnn, {.driver = "520.61.05", .cudnn = "9.1.0", .cudnn_cudart = 12040}, Status::fail, {"compat.driver_too_old"}},
    {"cuDNN without its built-for CUDA: skip", Rule::driver_cudnn, {.driver = "580.65.06", .cudnn = "9.19.0"}, Status::skip, {}},

    // Rule 3: GPU architecture vs driver branch (section 2.2).
    {"V100 on R580", Rule::gpu_driver, {.driver = "580.65.06", .gpus = {k_v100}}, Status::pass, {}},
    {"V100 on R590", Rule::gpu_driver, {.driver = "590.44.01", .gpus = {k_v100}}, Status::fail, {"compat.gpu_dropped_by_driver"}},
    {"K80 on R470", Rule::gpu_driver, {.driver = "470.82.01", .gpus = {k_k80}}, Status::pass, {}},
    {"Kepler on R525", Rule::gpu_driver, {.driver = "525.60.13", .gpus = {k_k80}}, Status::fail, {"compat.gpu_dropped_by_driver"}},
    {"P100 on R595", Rule::gpu_driver, {.driver = "595.45.04", .gpus = {{"Tesla P100-PCIE-16GB", 6, 0}}}, Status::fail, {"compat.gpu_dropped_by_driver"}},
    {"GTX 750 on R580", Rule::gpu_driver, {.driver = "580.95.05", .gpus = {{"NVIDIA GeForce GTX 750 Ti", 5, 0}}}, Status::pass, {}},
    {"H200 on unknown 620.10", Rule::gpu_driver, {.driver = "620.10", .gpus = {k_h200}}, Status::pass, {}},
    {"Fermi on R418", Rule::gpu_driver, {.driver = "418.39", .gpus = {{"Tesla M2090", 2, 0}}}, Status::fail, {"compat.gpu_dropped_by_driver"}},
    {"T4 on R615", Rule::gpu_driver, {.driver = "615.31", .gpus = {{"Tesla T4", 7, 5}}}, Status::pass, {}},
    {"H100 placed by name on R590", Rule::gpu_driver, {.driver = "590.44.01", .gpus = {{"NVIDIA H100 80GB HBM3"}}}, Status::pass, {}},
    {"V100 placed by name on R590", Rule::gpu_driver, {.driver = "590.44.01", .gpus = {{"Tesla V100-SXM2-32GB"}}}, Status::fail, {"compat.gpu_dropped_by_driver"}},
    {"unknown GPU without CC", Rule::gpu_driver, {.driver = "590.44.01", .gpus = {{"Mystery Accelerator"}}}, Status::pass, {"compat.gpu_unknown"}},
    {"mixed V100 and H200 on R590", Rule::gpu_driver, {.driver = "590.48.01", .gpus = {k_h200, k_v100}}, Status::fail, {"compat.gpu_dropped_by_driver"}},
    {"no GPU: skip", Rule::gpu_driver, {.driver = "580.65.06"}, Status::skip, {}},

    // Rule 4: GPU architecture vs runtime / toolkit (section 2.1).
    {"sm_70 with CUDA 13.0", Rule::gpu_arch, {.cudart = "13.0", .gpus = {k_v100}}, Status::fail, {"compat.gpu_arch_removed"}},
    {"sm_70 with CUDA 12.9: deprecated", Rule::gpu_arch, {.cudart = "12.9", .gpus = {k_v100}}, Status::pass, {"compat.gpu_arch_deprecated"}},
    {"sm_70 with CUDA 12.6", Rule::gpu_arch, {.cudart = "12.6", .gpus = {k_v100}}, Status::pass, {}},
    {"sm_75 with CUDA 13.0", Rule::gpu_arch, {.cudart = "13.0", .gpus = {{"Tesla T4", 7, 5}}}, Status::pass, {}},
    {"sm_35 with CUDA 12.0", Rule::gpu_arch, {.cudart = "12.0", .gpus = {{"Tesla K40m", 3, 5}}}, Status::fail, {"compat.gpu_arch_removed"}},
    {"sm_37 with CUDA 11.8: deprecated", Rule::gpu_arch, {.cudart = "11.8", .gpus = {k_k80}}, Status::pass, {"compat.gpu_arch_deprecated"}},
    {"sm_30 with CUDA 11.0", Rule::gpu_arch, {.cudart = "11.0", .gpus = {{"Tesla K10", 3, 0}}}, Status::fail, {"compat.gpu_arch_removed"}},
    {"sm_90 with CUDA 11.4", Rule::gpu_arch, {.cudart = "11.4", .gpus = {k_h200}}, Status::warn, {"compat.gpu_arch_newer_than_toolkit"}},
    {"sm_90 with CUDA 11.8", Rule::gpu_arch, {.cudart = "11.8", .gpus = {k_h200}}, Status::pass, {}},
    {"sm_89 with CUDA 11.4 runs sm_86 SASS", Rule::gpu_arch, {.cudart = "11.4", .gpus = {{"NVIDIA L4", 8, 9}}}, Status::pass, {}},
    {"sm_120 with CUDA 12.6", Rule::gpu_arch, {.cudart = "12.6", .gpus = {{"NVIDIA GeForce RTX 5090", 12, 0}}}, Status::warn, {"compat.gpu_arch_newer_than_toolkit"}},
    {"sm_120 with CUDA 12.8", Rule::gpu_arch, {.cudart = "12.8", .gpus = {{"NVIDIA GeForce RTX 5090", 12, 0}}}, Status::pass, {}},
    {"sm_121 with CUDA 12.8 runs sm_120 SASS", Rule::gpu_arch, {.cudart = "12.8", .gpus = {{"NVIDIA GB10", 12, 1}}}, Status::pass, {}},
    {"sm_100 with CUDA 13.0", Rule::gpu_arch, {.cudart = "13.0", .gpus = {{"NVIDIA B200", 10, 0}}}, Status::pass, {}},
    {"sm_90 with nvcc 13.0", Rule::gpu_arch, {.gpus = {k_h200}, .nvcc = "13.0.88"}, Status::pass, {}},
    {"sm_61 with nvcc 13.0", Rule::gpu_arch, {.gpus = {{"Tesla P40", 6, 1}}, .nvcc = "13.0.88"}, Status::fail, {"compat.gpu_arch_removed"}},
    {"sm_50 with CUDA 12.8: deprecated", Rule::gpu_arch, {.cudart = "12.8", .gpus = {{"NVIDIA GeForce GTX 750 Ti", 5, 0}}}, Status::pass, {"compat.gpu_arch_deprecated"}},
    {"Xavier sm_72 with CUDA 13.0", Rule::gpu_arch, {.cudart = "13.0", .gpus = {{"Jetson AGX Xavier", 7, 2}}}, Status::fail, {"compat.gpu_arch_removed"}},
    {"no runtime or toolkit: skip", Rule::gpu_arch, {.gpus = {k_h200}}, Status::skip, {}},

    // Rule 5: GPU architecture vs cuDNN (section 4.1).
    {"sm_90 with cuDNN 9.19 (no data: unconfirmed)", Rule::gpu_cudnn, {.cudnn = "9.19.0", .gpus = {k_h200}}, Status::pass, {"compat.cudnn_arch_unconfirmed"}},
    {"sm_90 with cuDNN 9.14 (between 9.10.2 and 9.17)", Rule::gpu_cudnn, {.cudnn = "9.14.0", .gpus = {k_h200}}, Status::pass, {"compat.cudnn_arch_unconfirmed"}},
    {"sm_70 with cuDNN 9.14: neighbours disagree", Rule::gpu_cudnn, {.cudnn = "9.14.0", .gpus = {k_v100}}, Status::warn, {"compat.cudnn_arch_unconfirmed"}},
    {"sm_70 with cuDNN 9.17.0", Rule::gpu_cudnn, {.cudnn = "9.17.0", .gpus = {k_v100}}, Status::fail, {"compat.cudnn_arch_unsupported"}},
    {"sm_70 with cuDNN 9.10.2", Rule::gpu_cudnn, {.cudnn = "9.10.2", .gpus = {k_v100}}, Status::pass, {}},
    {"sm_35 with cuDNN 8.9.7", Rule::gpu_cudnn, {.cudnn = "8.9.7", .gpus = {{"Tesla K40m", 3, 5}}}, Status::fail, {"compat.cudnn_arch_unsupported"}},
    {"sm_120 with cuDNN 9.10.2 built for 12.8", Rule::gpu_cudnn, {.cudnn = "9.10.2", .cudnn_cudart = 12080, .gpus = {{"NVIDIA GeForce RTX 5090", 12, 0}}}, Status::pass, {}},
    {"sm_120 with cuDNN 9.10.2 built for 12.6", Rule::gpu_cudnn, {.cudnn = "9.10.2", .cudnn_cudart = 12060, .gpus = {{"NVIDIA GeForce RTX 5090", 12, 0}}}, Status::warn, {"compat.cudnn_arch_newer"}},
    {"sm_120 with cuDNN 9.5.1", Rule::gpu_cudnn, {.cudnn = "9.5.1", .gpus = {{"NVIDIA GeForce RTX 5090", 12, 0}}}, Status::warn, {"compat.cudnn_arch_newer"}},
    {"sm_120 with cuDNN 8.9.7", Rule::gpu_cudnn, {.cudnn = "8.9.7", .gpus = {{"NVIDIA GeForce RTX 5090", 12, 0}}}, Status::fail, {"compat.cudnn_arch_unsupported"}},
    {"sm_75 with cuDNN 9.17.0", Rule::gpu_cudnn, {.cudnn = "9.17.0", .gpus = {{"Tesla T4", 7, 5}}}, Status::pass, {}},
    {"sm_121 with cuDNN 9.17.0", Rule::gpu_cudnn, {.cudnn = "9.17.0", .gpus = {{"NVIDIA GB10", 12, 1}}}, Status::pass, {}},
    {"no cuDNN: skip", Rule::gpu_cudnn, {.gpus = {k_h200}}, Status::skip, {}},

    // Rule 6: nvcc vs driver.
    {"nvcc 13.0 on 575.57.08", Rule::toolkit, {.driver = "575.57.08", .driver_cuda = 12090, .nvcc = "13.0.88"}, Status::warn, {"compat.toolkit_too_new"}},
    {"nvcc 13.2 on 580.65.06: SASS only", Rule::toolkit, {.driver = "580.65.06", .driver_cuda = 13000, .nvcc = "13.2.51"}, Status::pass, {"compat.toolkit_minor_version"}},
    {"nvcc 12.4 on 550.54.14", Rule::toolkit, {.driver = "550.54.14", .nvcc = "12.4.99"}, Status::pass, {}},
    {"nvcc 11.8 on 450.80.02", Rule::toolkit, {.driver = "450.80.02", .nvcc = "11.8.89"}, Status::pass, {"compat.toolkit_minor_version"}},
    {"no nvcc: skip", Rule::toolkit, {.driver = "580.65.06"}, Status::skip, {}},

    // Rule 7: forward-compatibility package (section 1.3).
    {"compat 12.9 on a GeForce card", Rule::forward, {.driver = "535.104.05", .driver_cuda = 12090, .gpus = {{"NVIDIA GeForce RTX 4090", 8, 9}}, .libcuda_path = "/usr/local/cuda-12.9/compat/libcuda.so.1"}, Status::fail, {"compat.forward_compat_unsupported_gpu"}},
    {"compat 12.9 on H100 with R535", Rule::forward, {.driver = "535.104.05", .driver_cuda = 12090, .gpus = {{"NVIDIA H100 80GB HBM3", 9, 0}}, .libcuda_path = "/usr/local/cuda-12.9/compat/libcuda.so.1"}, Status::pass, {"compat.forward_compat_ok"}},
    {"compat 13.0 on R580: not needed", Rule::forward, {.driver = "580.65.06", .driver_cuda = 13000, .gpus = {k_h200}, .libcuda_path = "/usr/local/cuda-13.0/compat/libcuda.so.1"}, Status::warn, {"compat.forward_compat_not_needed"}},
    {"compat 12.9 on R580: older package", Rule::forward, {.driver = "580.65.06", .driver_cuda = 12090, .gpus = {k_h200}, .libcuda_path = "/usr/local/cuda-12.9/compat/libcuda.so.1"}, Status::fail, {"compat.forward_compat_wrong_branch"}},
    {"compat 13.0 on R550: not a base branch", Rule::forward, {.driver = "550.54.14", .driver_cuda = 13000, .gpus = {k_h200}, .libcuda_path = "/usr/local/cuda-13.0/compat/libcuda.so.1"}, Status::fail, {"compat.forward_compat_wrong_branch"}},
    {"compat 13.4 from its file name on A100 with R570", Rule::forward, {.driver = "570.124.06", .gpus = {{"NVIDIA A100-SXM4-80GB", 8, 0}}, .libcuda_path = "/usr/local/cuda-13.4/compat/libcuda.so.615.31"}, Status::pass, {"compat.forward_compat_ok"}},
    {"compat on an RTX A6000: select SKUs only", Rule::forward, {.driver = "535.104.05", .driver_cuda = 12090, .gpus = {{"NVIDIA RTX A6000", 8, 6}}, .libcuda_path = "/usr/local/cuda-12.9/compat/libcuda.so.1"}, Status::warn, {"compat.forward_compat_conditional"}},
    {"compat on an unknown GPU", Rule::forward, {.driver = "535.104.05", .driver_cuda = 12090, .gpus = {{"Mystery Accelerator", 9, 0}}, .libcuda_path = "/usr/local/cuda-12.9/compat/libcuda.so.1"}, Status::warn, {"compat.forward_compat_conditional"}},
    {"no compat package: skip", Rule::forward, {.driver = "580.65.06", .driver_cuda = 13000, .gpus = {k_h200}}, Status::skip, {}},
};
// clang-format on

class CompatRules : public ::testing::TestWithParam<Case> {};

TEST_P(CompatRules, VerdictAndCodes) {
  const Case& c = GetParam();
  const Matrix& matrix = embedded_matrix();
  constexpr CheckInfo k_info{"compat.test", "test", "test", CheckKind::passive};
  const std::vector<CheckResult> results =
      checks::compat_result(k_info, apply(c.rule, testing::make_snapshot(c.machine), matrix));
  ASSERT_EQ(results.size(), 1u);
  std::set<std::string> codes;
  for (const Finding& f : results[0].findings) {
    codes.insert(f.code);
    EXPECT_FALSE(f.message.empty()) << f.code;
  }
  EXPECT_EQ(to_string(results[0].status), to_string(c.status)) << results[0].summary;
  EXPECT_EQ(codes, c.codes) << results[0].summary;
}

INSTANTIATE_TEST_SUITE_P(FactsSheet, CompatRules, ::testing::ValuesIn(k_cases),
                         [](const ::testing::TestParamInfo<Case>& param_info) {
                           std::string name =
                               std::to_string(param_info.index) + "_" + param_info.param.name;
                           for (char& ch : name) {
                             if (std::isalnum(static_cast<unsigned char>(ch)) == 0) {
                               ch = '_';
                             }
                           }
                           return name;
                         });

TEST(CompatRulesCount, AtLeastEightyCases) {
  EXPECT_GE(std::size(k_cases), 80u);
}

TEST(CompatRulesMessages, TooOldNamesTheExactDrivers) {
  const RuleOutcome out = driver_runtime_rule(
      testing::make_snapshot({.driver = "575.57.08", .driver_cuda = 12090, .cudart = "13.0.48"}),
      embedded_matrix());
  ASSERT_EQ(out.findings.size(), 1u);
  EXPECT_NE(out.findings[0].message.find("575.57.08"), std::string::npos);
  EXPECT_NE(out.findings[0].message.find("580.65.06"), std::string::npos);
  EXPECT_NE(out.findings[0].remedy.find(">= 580.65.06"), std::string::npos);
}

TEST(CompatRulesMessages, MinorVersionNamesThePtxCaveat) {
  const RuleOutcome out = driver_cudnn_rule(
      testing::make_snapshot(
          {.driver = "580.159.04", .driver_cuda = 13000, .cudnn = "9.19.0", .cudnn_cudart = 13010}),
      embedded_matrix());
  ASSERT_EQ(out.findings.size(), 1u);
  EXPECT_NE(out.findings[0].message.find("cudaErrorUnsupportedPtxVersion"), std::string::npos);
  EXPECT_NE(out.findings[0].remedy.find("590.44.01"), std::string::npos);
}

TEST(CompatRulesMessages, UnknownDriverSaysUnknownToThisMatrix) {
  const RuleOutcome out = driver_runtime_rule(
      testing::make_snapshot({.driver = "620.10", .cudart = "13.0"}), embedded_matrix());
  ASSERT_EQ(out.findings.size(), 1u);
  EXPECT_NE(out.findings[0].message.find("unknown to this matrix"), std::string::npos);
  EXPECT_EQ(out.findings[0].severity, Severity::info);
}

TEST(CompatRulesMessages, UnverifiedEntryMakesAFindingUnconfirmed) {
  // A matrix whose 13.x minor-version entry is marked unverified: the MVC verdict must say so.
  Matrix matrix = embedded_matrix();
  for (MinorVersionCompat& mvc : matrix.minor_version_compatibility) {
    mvc.provenance.status = SourceStatus::unverified;
  }
  const RuleOutcome out = driver_runtime_rule(
      testing::make_snapshot({.driver = "580.65.06", .driver_cuda = 13000, .cudart = "13.2"}),
      matrix);
  ASSERT_EQ(out.findings.size(), 1u);
  EXPECT_NE(out.findings[0].message.find("unconfirmed"), std::string::npos);
}

TEST(CompatRulesMessages, GpuDroppedNamesTheLastBranch) {
  const RuleOutcome out = gpu_driver_rule(
      testing::make_snapshot({.driver = "590.44.01", .gpus = {k_v100}}), embedded_matrix());
  ASSERT_EQ(out.findings.size(), 1u);
  EXPECT_NE(out.findings[0].message.find("R580"), std::string::npos);
  EXPECT_EQ(out.findings[0].gpu_index, 0);
}

} // namespace
} // namespace gpucheck::compat
