// The H200 GPU machine as a snapshot: H200, driver 580.159.04 (CUDA 13.0), CUDA runtime
// 13.0, system cuDNN 9.14 and PyTorch's wheel cuDNN 9.19 (built for CUDA 13.1). Every
// compatibility check must pass; the expected notes are the MVC one for the 13.1 cuDNN and the
// "unconfirmed" architecture notes for the two cuDNN releases the matrix has no table for.

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "gpucheck/registry.hpp"
#include "gpucheck/runner.hpp"
#include "unit/compat_test_support.hpp"

namespace gpucheck::compat {
namespace {

SystemSnapshot h200_machine() {
  SystemSnapshot s = testing::make_snapshot({.driver = "580.159.04",
                                             .driver_cuda = 13000,
                                             .cudart = "13.0.96",
                                             .cudnn = "9.14.0",
                                             .cudnn_cudart = 13000,
                                             .gpus = {{"NVIDIA H200", 9, 0}}});
  LibraryFamily& cudnn = s.libraries.back();
  LibraryCopy wheel;
  wheel.path = "/venv/lib/python3.12/site-packages/nvidia/cudnn/lib/libcudnn.so.9";
  wheel.origin = "pip";
  wheel.version = "9.19.0";
  wheel.reported_version = "9.19.0";
  wheel.cudart_version = 13010;
  cudnn.copies.push_back(wheel);
  return s;
}

TEST(CompatH200Machine, VerdictsAreRight) {
  const SystemSnapshot snapshot = h200_machine();
  const CheckContext context{snapshot, CheckOptions{}};
  const std::vector<CheckResult> results = run_checks(all_checks(), context, {{"compat"}, {}});
  std::map<std::string, std::pair<Status, std::multiset<std::string>>> seen;
  for (const CheckResult& r : results) {
    std::multiset<std::string> codes;
    for (const Finding& f : r.findings) {
      codes.insert(f.code);
    }
    seen[r.check_id] = {r.status, codes};
  }
  const std::map<std::string, std::pair<Status, std::multiset<std::string>>> expected = {
      {"compat.driver_runtime", {Status::pass, {}}},
      {"compat.driver_cudnn", {Status::pass, {"compat.minor_version_compat"}}},
      {"compat.toolkit_driver", {Status::skip, {}}},
      {"compat.forward_compat", {Status::skip, {}}},
      {"compat.gpu_driver", {Status::pass, {}}},
      {"compat.gpu_arch", {Status::pass, {}}},
      {"compat.gpu_cudnn",
       {Status::pass, {"compat.cudnn_arch_unconfirmed", "compat.cudnn_arch_unconfirmed"}}},
      {"compat.what_runs", {Status::pass, {"compat.what_runs"}}},
  };
  EXPECT_EQ(seen, expected);
  for (const CheckResult& r : results) {
    if (r.check_id == "compat.what_runs") {
      EXPECT_EQ(r.summary, "CUDA up to 13.0 (13.4 through minor-version compatibility); "
                           "PyTorch: PyTorch 2.14 cu132 (through minor-version compatibility); "
                           "TensorFlow: TensorFlow 2.21.0; JAX: jax[cuda13]");
    }
  }
}

} // namespace
} // namespace gpucheck::compat
