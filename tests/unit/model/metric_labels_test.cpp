// A metric's labels as fields: the checks set them with the name, a report read from JSON gets
// them back from the name, and the two agree.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "gpucheck/model/check_result.hpp"
#include "gpucheck/model/json_io.hpp"

namespace gpucheck {
namespace {

constexpr uint64_t k_mib = 1ULL << 20;

TEST(MetricLabels, EachKindOfNameReadsBackAsTheFieldsItWasMadeWith) {
  const std::vector<Metric> made = {
      pair_metric("p2p", 0, 1, "write_gbps", 388.0, "GB/s", ""),
      pair_metric("p2p", 12, 3, "latency_us", 2.0, "us", ""),
      pair_metric("path", 2, 5, "nvlinks", 18.0, "links", ""),
      sized_metric("nccl_allreduce", 256 * k_mib, "busbw_gbps", 298.0, "GB/s", ""),
      sized_metric("nccl_allreduce", k_mib, "algbw_gbps", 20.0, "GB/s", ""),
      sized_pair_metric("p2p", 1, 0, 64 * k_mib, "gbps", 380.0, "GB/s", ""),
      gpu_metric(3, "numa_node", 1.0, "", ""),
  };
  const std::vector<std::string> names = {"p2p_0_1_write_gbps",
                                          "p2p_12_3_latency_us",
                                          "path_2_5_nvlinks",
                                          "nccl_allreduce_256mib_busbw_gbps",
                                          "nccl_allreduce_1mib_algbw_gbps",
                                          "p2p_1_0_64mib_gbps",
                                          "gpu3_numa_node"};
  ASSERT_EQ(made.size(), names.size());
  for (size_t i = 0; i < made.size(); ++i) {
    EXPECT_EQ(made[i].name, names[i]);
    EXPECT_EQ(metric_labels_of(made[i].name), made[i].labels) << made[i].name;
    // Through a report's JSON, as `merge` and --from-snapshot read them.
    EXPECT_EQ(nlohmann::json(made[i]).get<Metric>(), made[i]) << made[i].name;
  }
  EXPECT_EQ(made[0].labels.family, "p2p_write_gbps");
  EXPECT_EQ(made[0].labels.gpu_a, 0);
  EXPECT_EQ(made[0].labels.gpu_b, 1);
  EXPECT_EQ(made[3].labels.family, "nccl_allreduce_busbw_gbps");
  EXPECT_EQ(made[3].labels.size_bytes, 256 * k_mib);
  EXPECT_FALSE(made[3].labels.gpu_a);
  // The sweep's sizes are one family with the size a label, apart from the pairs' own figures.
  EXPECT_EQ(made[5].labels.family, "p2p_size_gbps");
  EXPECT_EQ(made[5].labels.size_bytes, 64 * k_mib);
  EXPECT_EQ(made[6].labels.family, "gpu_numa_node");
  EXPECT_EQ(made[6].labels.gpu, 3);
}

TEST(MetricLabels, OtherNamesCarryNone) {
  for (const char* name :
       {"h2d_gbps", "p2p_gbps", "nccl_busbw_gbps", "conv_fp16_nhwc_32x256x56x56_tflops",
        "burn_bf16_tflops", "gpu_numa_node", "gpux_numa", "p2p_0_1", "p2p_a_1_write_gbps",
        "nvlink_active", "mib_gbps", "x_mib_y", "a_2mib_", "host_h2d_all_gpus_gbps", "", "_",
        "p2p__1_2"}) {
    EXPECT_EQ(metric_labels_of(name), MetricLabels{}) << name;
  }
  // A size word anywhere but first: the last one is the label.
  const MetricLabels sized = metric_labels_of("a_2mib_b_16mib_c");
  EXPECT_EQ(sized.family, "a_2mib_b_c");
  EXPECT_EQ(sized.size_bytes, 16 * k_mib);
}

} // namespace
} // namespace gpucheck
