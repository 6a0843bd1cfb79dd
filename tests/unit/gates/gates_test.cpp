// CI gates over synthetic snapshots and results: every gate passing and failing, with the exact
// code and the numbers in its message; ignores; the --fail-on gate; the order of the gate stage.
#include "gates/gates.hpp"

#include <gtest/gtest.h>

#include <random>

#include "compat/machine.hpp"
#include "compat/matrix.hpp"
#include "findings/catalog.hpp"
#include "gpucheck/check.hpp"
#include "gpucheck/model/stack_versions.hpp"
#include "unit/snapshot_builder.hpp"

namespace gpucheck::gates {
namespace {

using gpucheck::testing::healthy_h200;

GateSpec with_requirement(std::string_view text) {
  GateSpec spec;
  spec.requirements.push_back(parse_requirement(text).value());
  return spec;
}

GateSpec with_minimum(std::string_view text) {
  GateSpec spec;
  spec.minimums.push_back(parse_minimum(text).value());
  return spec;
}

const CheckResult& only_gate(const std::vector<CheckResult>& gates) {
  EXPECT_EQ(gates.size(), 1u);
  return gates.front();
}

std::vector<std::string> codes_of(const CheckResult& result) {
  std::vector<std::string> codes;
  for (const Finding& f : result.findings) {
    codes.push_back(f.code);
  }
  return codes;
}

CheckResult bandwidth_result(int gpu, std::optional<double> h2d_gbps) {
  static const CheckInfo info{"gpu.bandwidth", "Host<->device bandwidth", "", CheckKind::active};
  if (!h2d_gbps) {
    return error_result(info, "the child crashed with SIGSEGV", gpu);
  }
  CheckResult result = make_result(info, "copies verified", {}, gpu);
  result.metrics.push_back({"h2d_gbps", *h2d_gbps, "GB/s", "median of 20"});
  result.metrics.push_back({"d2h_gbps", *h2d_gbps + 1.0, "GB/s", "median of 20"});
  return result;
}

CheckResult warn_result(const std::string& id, const std::string& code, int gpu) {
  const CheckInfo info{id, "x", "", CheckKind::passive};
  return make_result(info, "warned",
                     {make_finding_as(Severity::warn, FindingCode{code}, gpu, 0, 0, 0, 0, 0)}, gpu);
}

TEST(Gates, ExpectGpusPassesOnTheCountCudaSees) {
  GateSpec spec;
  spec.expect_gpus = 8;
  const CheckResult gate = only_gate(evaluate_gates(spec, healthy_h200(8), {}));
  EXPECT_EQ(gate.check_id, "gate.expect_gpus");
  EXPECT_EQ(gate.status, Status::pass);
  EXPECT_EQ(gate.summary, "8 GPUs, as expected (CUDA sees 8, NVML sees 8)");
}

TEST(Gates, ExpectGpusFailsWithTheCountFound) {
  std::mt19937 rng(std::random_device{}());
  const int present = std::uniform_int_distribution<int>(1, 7)(rng);
  GateSpec spec;
  spec.expect_gpus = 8;
  const CheckResult gate = only_gate(evaluate_gates(spec, healthy_h200(present), {}));
  EXPECT_EQ(gate.status, Status::fail);
  ASSERT_EQ(codes_of(gate), std::vector<std::string>{"gate.gpu_count_mismatch"});
  EXPECT_EQ(gate.findings[0].message,
            fmt::format("found {0} GPUs, expected 8 (CUDA sees {0}, NVML sees {0})", present));
}

TEST(Gates, ExpectGpusFailsWithoutADriver) {
  GateSpec spec;
  spec.expect_gpus = 1;
  const CheckResult gate = only_gate(evaluate_gates(spec, SystemSnapshot{}, {}));
  EXPECT_EQ(gate.status, Status::fail);
  EXPECT_EQ(gate.findings.at(0).message,
            "found 0 GPUs, expected 1 (neither CUDA nor NVML reported a GPU count)");
}

TEST(Gates, ExpectGpusUsesNvmlWhenCudaCouldNotCount) {
  SystemSnapshot s = healthy_h200(4);
  s.cuda.device_count.reset();
  GateSpec spec;
  spec.expect_gpus = 4;
  EXPECT_EQ(only_gate(evaluate_gates(spec, s, {})).status, Status::pass);
  spec.expect_gpus = 2;
  EXPECT_EQ(only_gate(evaluate_gates(spec, s, {})).findings.at(0).message,
            "found 4 GPUs, expected 2 (NVML sees 4)");
}

TEST(Gates, DriverRequirementPassesAndFailsByHowMuch) {
  SystemSnapshot s = healthy_h200();
  const CheckResult pass = only_gate(evaluate_gates(with_requirement("driver>=550"), s, {}));
  EXPECT_EQ(pass.check_id, "gate.require.driver");
  EXPECT_EQ(pass.status, Status::pass);
  EXPECT_EQ(pass.summary, "driver 580.159.04 meets driver>=550");

  s.kernel_module.version = "535.104.05";
  const CheckResult fail = only_gate(evaluate_gates(with_requirement("driver>=550"), s, {}));
  EXPECT_EQ(fail.status, Status::fail);
  ASSERT_EQ(codes_of(fail), std::vector<std::string>{"gate.requirement_not_met"});
  EXPECT_EQ(fail.findings[0].message, "driver 535.104.05 < required 550");
  EXPECT_EQ(fail.summary, "driver 535.104.05 < required 550");
  EXPECT_NE(fail.findings[0].remedy.find("driver>=550"), std::string::npos);
}

TEST(Gates, EachComponentIsReadFromItsFact) {
  SystemSnapshot s = healthy_h200();
  LibraryFamily cublas;
  cublas.family = "cublas";
  cublas.load = gpucheck::testing::loaded("libcublas.so.13", "/x/libcublas.so.13.1.0.3", "13.1.0");
  s.libraries.push_back(cublas);
  LibraryFamily nccl;
  nccl.family = "nccl";
  nccl.load = gpucheck::testing::loaded("libnccl.so.2", "/x/libnccl.so.2.27.7", "2.27.7");
  s.libraries.push_back(nccl);
  s.toolkit.nvcc_version = "13.0.88";
  const struct {
    std::string_view met;
    std::string_view unmet;
    std::string_view message;
  } cases[] = {
      {"cuda>=12.4", "cuda>=13.1", "cuda 13.0 < required 13.1"},
      {"cudart==13.0", "cudart<13", "cudart 13.0.88 >= required 13"},
      {"cudnn>=9.1", "cudnn>=9.20", "cudnn 9.19.0 < required 9.20"},
      {"cublas>12", "cublas!=13.1", "cublas 13.1.0 == required 13.1"},
      {"nccl>=2.18", "nccl<=2.26", "nccl 2.27.7 > required 2.26"},
      {"toolkit>=12.4", "toolkit>13.0", "toolkit 13.0.88 <= required 13.0"},
      {"cc>=8.0", "cc<9.0", "cc 9.0 >= required 9.0 on GPU 0 (NVIDIA H200)"},
  };
  for (const auto& c : cases) {
    const CheckResult met = only_gate(evaluate_gates(with_requirement(c.met), s, {}));
    EXPECT_EQ(met.status, Status::pass) << c.met << ": " << met.summary;
    const CheckResult unmet = only_gate(evaluate_gates(with_requirement(c.unmet), s, {}));
    EXPECT_EQ(unmet.status, Status::fail) << c.unmet;
    ASSERT_EQ(unmet.findings.size(), 1u) << c.unmet;
    EXPECT_EQ(unmet.findings[0].message, c.message);
  }
}

TEST(Gates, CudaFallsBackToNvmlWhenLibcudaSaysZeroAsCompatDoes) {
  // libcuda loaded but cuDriverGetVersion gave 0; NVML knows 12.4. The gate reads what compat
  // reads (gpucheck::driver_cuda_version); it used to stop at libcuda's 0 and call it unknown.
  SystemSnapshot s = healthy_h200();
  s.cuda.driver_version = 0;
  s.nvml.cuda_driver_version = 12040;
  const CheckResult met = only_gate(evaluate_gates(with_requirement("cuda>=12.4"), s, {}));
  EXPECT_EQ(met.status, Status::pass) << met.summary;
  const CheckResult unmet = only_gate(evaluate_gates(with_requirement("cuda>=12.8"), s, {}));
  ASSERT_EQ(unmet.findings.size(), 1U);
  EXPECT_EQ(unmet.findings[0].message, "cuda 12.4 < required 12.8");
  EXPECT_EQ(driver_cuda_version(s), 12040);
  s.nvml.cuda_driver_version.reset();
  EXPECT_EQ(driver_cuda_version(s), std::nullopt);
  const CheckResult unknown = only_gate(evaluate_gates(with_requirement("cuda>=12.4"), s, {}));
  ASSERT_EQ(unknown.findings.size(), 1U);
  EXPECT_EQ(unknown.findings[0].code, "gate.requirement_unknown");
  EXPECT_NE(unknown.findings[0].message.find("neither libcuda nor NVML"), std::string::npos)
      << unknown.findings[0].message;
  s.cuda.driver_version = 13000;
  EXPECT_EQ(driver_cuda_version(s), 13000); // libcuda's own answer first
}

TEST(Gates, DriverIsTheKernelModulesElseNvmlsAsCompatReadsIt) {
  // The gate, compat and cuda.init read one rule (gpucheck::driver_version).
  SystemSnapshot s = healthy_h200();
  s.kernel_module.version = "580.159.04";
  s.nvml.driver_version = "580.95.05";
  EXPECT_EQ(driver_version(s), "580.159.04");
  EXPECT_EQ(compat::machine_facts(s, compat::embedded_matrix()).driver_text, "580.159.04");
  EXPECT_EQ(only_gate(evaluate_gates(with_requirement("driver>=580.100"), s, {})).status,
            Status::pass);
  s.kernel_module.version.reset(); // no module version readable (a container): NVML's
  EXPECT_EQ(driver_version(s), "580.95.05");
  EXPECT_EQ(compat::machine_facts(s, compat::embedded_matrix()).driver_text, "580.95.05");
  EXPECT_EQ(only_gate(evaluate_gates(with_requirement("driver>=580.100"), s, {})).status,
            Status::fail);
  s.nvml.driver_version.reset();
  EXPECT_EQ(driver_version(s), std::nullopt);
  const CheckResult unknown = only_gate(evaluate_gates(with_requirement("driver>=580"), s, {}));
  ASSERT_EQ(unknown.findings.size(), 1U);
  EXPECT_EQ(unknown.findings[0].code, "gate.requirement_unknown");
}

TEST(Gates, MissingComponentIsAFailureThatSaysWhy) {
  SystemSnapshot s = healthy_h200();
  s.libraries.erase(s.libraries.begin() + 1); // cuDNN
  const CheckResult cudnn = only_gate(evaluate_gates(with_requirement("cudnn>=9.1"), s, {}));
  EXPECT_EQ(cudnn.status, Status::fail);
  ASSERT_EQ(codes_of(cudnn), std::vector<std::string>{"gate.requirement_unknown"});
  EXPECT_EQ(cudnn.findings[0].message,
            "cudnn version unknown (libcudnn was not probed); required cudnn>=9.1");

  s.libraries[0].load = gpucheck::testing::not_loaded("libcudart.so.13");
  const CheckResult cudart = only_gate(evaluate_gates(with_requirement("cudart>=12"), s, {}));
  EXPECT_NE(cudart.findings.at(0).message.find("libcudart is not loadable: libcudart.so.13: "
                                               "cannot open shared object file"),
            std::string::npos)
      << cudart.findings[0].message;

  const CheckResult toolkit = only_gate(evaluate_gates(with_requirement("toolkit>=12"), s, {}));
  EXPECT_EQ(toolkit.findings.at(0).code, "gate.requirement_unknown");

  const CheckResult cc =
      only_gate(evaluate_gates(with_requirement("cc>=8.0"), SystemSnapshot{}, {}));
  EXPECT_EQ(cc.findings.at(0).message, "cc version unknown (no GPU was found); required cc>=8.0");
  const CheckResult driver =
      only_gate(evaluate_gates(with_requirement("driver>=550"), SystemSnapshot{}, {}));
  EXPECT_EQ(driver.findings.at(0).code, "gate.requirement_unknown");
}

TEST(Gates, ComputeCapabilityIsJudgedPerGpu) {
  SystemSnapshot s = healthy_h200(3);
  s.gpus[1].cc_major = 7;
  s.gpus[1].cc_minor = 5;
  s.gpus[1].name = "Tesla T4";
  const CheckResult gate = only_gate(evaluate_gates(with_requirement("cc>=8.0"), s, {}));
  EXPECT_EQ(gate.status, Status::fail);
  ASSERT_EQ(gate.findings.size(), 1u);
  EXPECT_EQ(gate.findings[0].message, "cc 7.5 < required 8.0 on GPU 1 (Tesla T4)");
  EXPECT_EQ(gate.findings[0].gpu_index, 1);
  s.gpus[1].cc_major = 9;
  s.gpus[1].cc_minor = 0;
  EXPECT_EQ(only_gate(evaluate_gates(with_requirement("cc>=8.0"), s, {})).summary,
            "cc 9.0 on all 3 GPUs meets cc>=8.0");
}

TEST(Gates, RequirementsOfOneComponentShareOneResult) {
  GateSpec spec = with_requirement("driver>=550");
  spec.requirements.push_back(parse_requirement("driver<580").value());
  spec.requirements.push_back(parse_requirement("cudnn>=9").value());
  const std::vector<CheckResult> gates = evaluate_gates(spec, healthy_h200(), {});
  ASSERT_EQ(gates.size(), 2u);
  EXPECT_EQ(gates[0].check_id, "gate.require.driver");
  EXPECT_EQ(gates[0].status, Status::fail);
  EXPECT_EQ(gates[0].findings.at(0).message, "driver 580.159.04 >= required 580");
  EXPECT_EQ(gates[1].check_id, "gate.require.cudnn");
  EXPECT_EQ(gates[1].status, Status::pass);
}

TEST(Gates, MinimumPassesWhenEveryGpuMeetsIt) {
  const std::vector<CheckResult> results = {bandwidth_result(0, 55.25), bandwidth_result(1, 41.0)};
  const CheckResult gate = only_gate(evaluate_gates(with_minimum("h2d_gbps=20"), {}, results));
  EXPECT_EQ(gate.check_id, "gate.min.h2d_gbps");
  EXPECT_EQ(gate.status, Status::pass);
  EXPECT_EQ(gate.summary, "h2d_gbps >= 20 in all 2 results (lowest 41 on GPU 1)");
}

TEST(Gates, MinimumFailsOnTheGpuBelowIt) {
  std::mt19937 rng(std::random_device{}());
  const int slow = std::uniform_int_distribution<int>(0, 3)(rng);
  std::vector<CheckResult> results;
  for (int gpu = 0; gpu < 4; ++gpu) {
    results.push_back(bandwidth_result(gpu, gpu == slow ? 12.1 : 52.0));
  }
  const CheckResult gate = only_gate(evaluate_gates(with_minimum("h2d_gbps=20"), {}, results));
  EXPECT_EQ(gate.status, Status::fail);
  ASSERT_EQ(codes_of(gate), std::vector<std::string>{"gate.metric_below_minimum"});
  EXPECT_EQ(gate.findings[0].message,
            fmt::format("h2d_gbps 12.1 < 20 on GPU {} (gpu.bandwidth)", slow));
  EXPECT_EQ(gate.findings[0].gpu_index, slow);
}

TEST(Gates, MinimumsOfTheMultiGpuChecksJudgeTheirNodeResult) {
  // gpu.p2p and gpu.nccl give one result for the node (no GPU index), with p2p_gbps (the slowest
  // direction of any pair) and nccl_busbw_gbps (at the largest size).
  const CheckInfo p2p_info{"gpu.p2p", "Peer-to-peer copies", "", CheckKind::active};
  const CheckInfo nccl_info{"gpu.nccl", "NCCL all-reduce", "", CheckKind::active};
  CheckResult p2p = make_result(p2p_info, "2 GPUs", {});
  p2p.metrics.push_back({"p2p_gbps", 371.5, "GB/s", "the slowest direction of any pair"});
  CheckResult nccl = make_result(nccl_info, "2 GPUs", {});
  nccl.metrics.push_back({"nccl_busbw_gbps", 352.0, "GB/s", "at the largest size, 256 MiB"});
  GateSpec spec = with_minimum("p2p_gbps=300");
  spec.minimums.push_back(with_minimum("nccl_busbw_gbps=360").minimums.front());
  const std::vector<CheckResult> gates = evaluate_gates(spec, {}, {p2p, nccl});
  ASSERT_EQ(gates.size(), 2U);
  EXPECT_EQ(gates[0].status, Status::pass);
  EXPECT_EQ(gates[0].summary, "p2p_gbps >= 300 (lowest 371.5)");
  EXPECT_EQ(gates[1].status, Status::fail);
  ASSERT_EQ(codes_of(gates[1]), std::vector<std::string>{"gate.metric_below_minimum"});
  EXPECT_NE(gates[1].findings[0].message.find("nccl_busbw_gbps 352 < 360"), std::string::npos)
      << gates[1].findings[0].message;
}

TEST(Gates, MinimumFailsWhereTheMetricWasNotMeasured) {
  const std::vector<CheckResult> results = {bandwidth_result(0, 50.0),
                                            bandwidth_result(1, std::nullopt)};
  const CheckResult gate = only_gate(evaluate_gates(with_minimum("h2d_gbps=20"), {}, results));
  EXPECT_EQ(gate.status, Status::fail);
  ASSERT_EQ(codes_of(gate), std::vector<std::string>{"gate.metric_not_measured"});
  EXPECT_EQ(gate.findings[0].message,
            "h2d_gbps was not measured on GPU 1: gpu.bandwidth error: the child crashed with "
            "SIGSEGV");
}

TEST(Gates, MinimumWithoutTheMetricIsASkipNotAPass) {
  const CheckInfo info{"gpu.bandwidth", "b", "", CheckKind::active};
  const std::vector<CheckResult> results = {skip_result(info, "--quick: no GPU work", 0)};
  const CheckResult gate = only_gate(evaluate_gates(with_minimum("h2d_gbps=20"), {}, results));
  EXPECT_EQ(gate.status, Status::skip);
  EXPECT_NE(gate.summary.find("no check reported h2d_gbps"), std::string::npos) << gate.summary;
  const CheckResult typo =
      only_gate(evaluate_gates(with_minimum("h2d_gpbs=20"), {}, {bandwidth_result(0, 50.0)}));
  EXPECT_EQ(typo.status, Status::skip);
}

TEST(Gates, FailOnWarnListsTheWarnings) {
  const std::vector<CheckResult> results = {warn_result("gpu.pcie", "gpu.pcie_width_degraded", 2),
                                            bandwidth_result(0, 50.0)};
  const CheckResult gate = fail_on_warn_gate(results);
  EXPECT_EQ(gate.check_id, "gate.fail_on");
  EXPECT_EQ(gate.status, Status::fail);
  ASSERT_EQ(codes_of(gate), std::vector<std::string>{"gate.warnings_present"});
  EXPECT_EQ(gate.findings[0].message, "1 result warned with --fail-on warn: gpu.pcie [GPU 2]");
  const CheckResult clean = fail_on_warn_gate({bandwidth_result(0, 50.0)});
  EXPECT_EQ(clean.status, Status::pass);
  EXPECT_EQ(clean.summary, "no warnings");
}

TEST(Gates, IgnoredFindingsStayButDoNotCount) {
  std::vector<CheckResult> results = {warn_result("gpu.pcie", "gpu.pcie_width_degraded", 2)};
  const CheckInfo info{"gpu.ecc", "ECC", "", CheckKind::passive};
  results.push_back(make_result(
      info, "x",
      {make_finding_as(Severity::fail, FindingCode{"gpu.row_remap_pending"}, 1, 1, 0, 1, 1),
       make_finding_as(Severity::warn, FindingCode{"gpu.pcie_width_degraded"}, 1, 0, 0, 0, 0, 0)},
      1));
  results.push_back(error_result(info, "probe crashed", 3));
  apply_ignores(results, {"gpu.pcie_width_degraded"});
  EXPECT_EQ(results[0].status, Status::pass);
  ASSERT_EQ(results[0].findings.size(), 1u);
  EXPECT_TRUE(results[0].findings[0].ignored);
  EXPECT_EQ(results[1].status, Status::fail); // the remap pending still counts
  EXPECT_FALSE(results[1].findings[0].ignored);
  EXPECT_TRUE(results[1].findings[1].ignored);
  EXPECT_EQ(results[2].status, Status::error); // an error without findings is not touched
}

TEST(Gates, ApplyGatesOrdersIgnoresGatesThenFailOn) {
  GateSpec spec;
  spec.expect_gpus = 1;
  spec.fail_on_warn = true;
  std::vector<CheckResult> results = {warn_result("gpu.pcie", "gpu.pcie_width_degraded", 0)};

  std::vector<CheckResult> strict = apply_gates(spec, healthy_h200(), results);
  ASSERT_EQ(strict.size(), 3u);
  EXPECT_EQ(strict[1].check_id, "gate.expect_gpus");
  EXPECT_EQ(strict[2].check_id, "gate.fail_on");
  EXPECT_EQ(strict[2].status, Status::fail);

  spec.ignored_codes = {"gpu.pcie_width_degraded"};
  std::vector<CheckResult> lenient = apply_gates(spec, healthy_h200(), results);
  ASSERT_EQ(lenient.size(), 3u);
  EXPECT_EQ(lenient[0].status, Status::pass);
  EXPECT_EQ(lenient[2].status, Status::pass);
  EXPECT_EQ(lenient[2].summary, "no warnings (1 ignored finding)");

  // A gate's own finding can be ignored too.
  spec.expect_gpus = 2;
  spec.ignored_codes.push_back("gate.gpu_count_mismatch");
  std::vector<CheckResult> ignored_gate = apply_gates(spec, healthy_h200(), results);
  EXPECT_EQ(ignored_gate[1].status, Status::pass);
  EXPECT_TRUE(ignored_gate[1].findings.at(0).ignored);
}

TEST(Gates, EmptySpecLeavesResultsAlone) {
  const std::vector<CheckResult> results = {warn_result("gpu.pcie", "gpu.pcie_width_degraded", 0)};
  EXPECT_EQ(apply_gates(GateSpec{}, healthy_h200(), results), results);
}

} // namespace
} // namespace gpucheck::gates
