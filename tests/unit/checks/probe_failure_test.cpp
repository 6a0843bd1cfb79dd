#include "checks/rules/probe_failure.hpp"

#include <gtest/gtest.h>

#include "unit/snapshot_builder.hpp"

namespace gpucheck::checks {
namespace {

constexpr CheckInfo k_info{"test.probe", "test", "test", CheckKind::passive};

TEST(ProbeFailure, SignalNamesSignalAndQuotesStderr) {
  const ChildFailure failure = testing::crashed("SIGSEGV", 11, "line one\nline two\n");
  const CheckResult result = probe_failure_result(k_info, "CUDA driver probe", failure);
  EXPECT_EQ(result.status, Status::error);
  ASSERT_EQ(result.findings.size(), 1U);
  EXPECT_EQ(result.findings[0].code, "probe.crashed");
  EXPECT_EQ(result.findings[0].message,
            "the CUDA driver probe crashed with SIGSEGV; stderr: \"line one|line two\"");
}

TEST(ProbeFailure, TimeoutNamesTheLimit) {
  const Finding finding = probe_failure_finding("NVML probe", testing::timed_out(15.0), 2);
  EXPECT_EQ(finding.code, "probe.timed_out");
  EXPECT_EQ(finding.gpu_index, 2);
  EXPECT_EQ(finding.message,
            "the NVML probe did not finish within 15 s and was killed; stderr: (nothing on "
            "stderr)");
}

TEST(ProbeFailure, OtherKindsAreFailed) {
  ChildFailure failure;
  failure.kind = ChildFailureKind::exit;
  failure.exit_code = 3;
  const Finding finding = probe_failure_finding("cuDNN probe", failure);
  EXPECT_EQ(finding.code, "probe.failed");
  EXPECT_NE(finding.message.find("exit code 3"), std::string::npos);
}

TEST(ProbeFailure, LongStderrKeepsTheEnd) {
  const ChildFailure failure = testing::crashed("SIGABRT", 6, fmt::format("{:x>1003}", "END"));
  const std::string excerpt = stderr_excerpt(failure);
  EXPECT_LT(excerpt.size(), 420U);
  EXPECT_NE(excerpt.find("END\""), std::string::npos);
}

} // namespace
} // namespace gpucheck::checks
