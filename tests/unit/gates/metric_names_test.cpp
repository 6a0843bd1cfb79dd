// The metric names --min accepts (gates/metric_names.hpp).
#include <gtest/gtest.h>

#include "gates/metric_names.hpp"

namespace gpucheck::gates {
namespace {

TEST(MetricNames, NamesAndPatternsOfEveryCheckAreKnown) {
  for (const char* name :
       {"h2d_gbps", "d2h_gbps", "d2d_gbps", "h2d_bidir_gbps", "host_h2d_all_gpus_gbps",
        "fp32_fma_gflops", "p2p_gbps", "p2p_0_1_write_gbps", "p2p_12_3_latency_us",
        "p2p_1_0_256mib_gbps", "nccl_busbw_gbps", "nccl_allreduce_256mib_busbw_gbps",
        "conv_fp16_nhwc_tflops", "burn_fp16_tflops", "path_0_7_nvlinks", "gpu3_numa_node",
        "memtest_coverage_percent", "host_peak_rss_mib", "import_s"}) {
    EXPECT_TRUE(is_known_metric(name)) << name;
  }
}

TEST(MetricNames, MisspeltNamesAndHalfPatternsAreNot) {
  for (const char* name : {"", "h2d", "h2d_gpbs", "h2d_gbps_", "bogus_metric", "p2p__write_gbps",
                           "p2p_0_1_writ_gbps", "conv__tflops", "conv_fp16_tflop", "gpu_numa_node",
                           "nccl_allreduce_mib_busbw_gbps", "burn_fp16-x_tflops"}) {
    EXPECT_FALSE(is_known_metric(name)) << name;
  }
}

TEST(MetricNames, TheErrorNamesTheMetricAndListsTheKnownOnes) {
  const Expected<std::string_view> known = check_known_metric("h2d_gpbs");
  ASSERT_FALSE(known);
  EXPECT_NE(known.error().message.find("'h2d_gpbs' is not a metric any check reports"),
            std::string::npos);
  for (const std::string_view name : known_metric_names()) {
    EXPECT_NE(known.error().message.find(name), std::string::npos) << name;
  }
  EXPECT_TRUE(check_known_metric("d2h_gbps"));
}

} // namespace
} // namespace gpucheck::gates
