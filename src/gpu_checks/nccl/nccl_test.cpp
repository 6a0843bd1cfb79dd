// gpu.nccl's judge over payloads built from the typed struct (protocol/payloads.hpp): bus
// bandwidth per size, a wrong sum, and a skip without NCCL.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "checks/active/judging.hpp"
#include "gpu_checks/nccl/nccl.hpp"
#include "protocol/payloads.hpp"
#include "support/registered_judge.hpp"

namespace gpucheck::gpu_checks::nccl {
namespace {

TEST(GpuNcclJudge, BusBandwidthPerSizeAndASkipWithoutNccl) {
  protocol::NcclPayload p;
  p.library = "/usr/lib/x86_64-linux-gnu/libnccl.so.2.28.3";
  p.version = 22803;
  p.ranks = 2;
  p.sizes = {{1ULL << 20, 20, 0.021, 49.9, 49.9}, {256ULL << 20, 20, 0.745, 360.3, 360.3}};
  nlohmann::json payload = {{"metrics", nlohmann::json::array()},
                            {"verify", nlohmann::json::array()}};
  protocol::write_nccl(p, payload);
  std::vector<Metric> metrics;
  checks::Judgement j =
      test::registered_span_judge("gpu.nccl", SystemSnapshot{}, payload, false, metrics);
  EXPECT_FALSE(j.skipped);
  EXPECT_TRUE(j.findings.empty());
  EXPECT_EQ(j.summary, "2 GPUs, NCCL 2.28.3: bus bandwidth 1 MiB 50 GB/s, 256 MiB 360 GB/s");
  ASSERT_FALSE(metrics.empty());
  EXPECT_EQ(metrics.back().name, "nccl_busbw_gbps");
  EXPECT_EQ(metrics.back().value, 360.3);
  EXPECT_EQ(metrics[0].name, "nccl_allreduce_1mib_busbw_gbps");
  // A wrong sum is a failure naming the GPU and the element.
  protocol::PayloadVerification v{"nccl", "256 MiB sum on 0000:3B:00.0", 67108864, 1, 16, "127",
                                  "126"};
  payload["verify"].push_back(protocol::to_json(v));
  const std::vector<Finding> findings = checks::common_findings("NCCL all-reduce", {}, payload);
  ASSERT_EQ(findings.size(), 1U);
  EXPECT_EQ(findings[0].code, "nccl.wrong_sum");
  EXPECT_EQ(findings[0].severity, Severity::fail);
  // Without NCCL: a skip with the loader's reason.
  protocol::NcclPayload missing;
  missing.missing = "libnccl.so.2: cannot open shared object file: No such file or directory";
  nlohmann::json none = {{"metrics", nlohmann::json::array()}, {"verify", nlohmann::json::array()}};
  protocol::write_nccl(missing, none);
  metrics.clear();
  j = test::registered_span_judge("gpu.nccl", SystemSnapshot{}, none, false, metrics);
  EXPECT_TRUE(j.skipped);
  EXPECT_NE(j.summary.find("libnccl.so.2: cannot open"), std::string::npos) << j.summary;
}

} // namespace
} // namespace gpucheck::gpu_checks::nccl
