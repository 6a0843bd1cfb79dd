// `gpucheck matrix --driver/--gpu` and `--matrix FILE` (src/cli/matrix_command.cpp).

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>

#include "cli/matrix_command.hpp"

namespace gpucheck::cli {
namespace {

TEST(MatrixCommand, HypotheticalDriverAndGpus) {
  MatrixOptions options;
  options.driver = "535.104.05";
  options.gpus = {"sm_86,8.9", "H100"};
  const Expected<compat::MachineQuery> q = matrix_query(options, compat::embedded_matrix(), {});
  ASSERT_TRUE(q) << q.error().message;
  ASSERT_EQ(q->gpu_ccs.size(), 3u);
  EXPECT_EQ(q->gpu_ccs[0].str(), "8.6");
  EXPECT_EQ(q->gpu_ccs[1].str(), "8.9");
  EXPECT_EQ(q->gpu_ccs[2].str(), "9.0");
  EXPECT_EQ(q->driver_text, "535.104.05");
}

TEST(MatrixCommand, GpuNamesAsPeopleTypeThem) {
  MatrixOptions options;
  options.driver = "580.65.06";
  options.gpus = {"RTX 3090", "a100", "H100 SXM", "rtx 4090"};
  const Expected<compat::MachineQuery> q = matrix_query(options, compat::embedded_matrix(), {});
  ASSERT_TRUE(q) << q.error().message;
  ASSERT_EQ(q->gpu_ccs.size(), 4u);
  EXPECT_EQ(q->gpu_ccs[0].str(), "8.6");
  EXPECT_EQ(q->gpu_ccs[1].str(), "8.0");
  EXPECT_EQ(q->gpu_ccs[2].str(), "9.0");
  EXPECT_EQ(q->gpu_ccs[3].str(), "8.9");
  options.gpus = {"Voodoo 5"};
  EXPECT_FALSE(matrix_query(options, compat::embedded_matrix(), {}));
}

TEST(MatrixCommand, MissingPartsComeFromTheProbe) {
  compat::MachineQuery probed;
  probed.driver_text = "580.159.04";
  probed.driver = Version::parse("580.159.04");
  probed.gpu_ccs = {Version({9, 0})};
  MatrixOptions options;
  options.gpus = {"sm_70"};
  const Expected<compat::MachineQuery> q = matrix_query(options, compat::embedded_matrix(), probed);
  ASSERT_TRUE(q);
  EXPECT_EQ(q->driver_text, "580.159.04");
  ASSERT_EQ(q->gpu_ccs.size(), 1u);
  EXPECT_EQ(q->gpu_ccs[0].str(), "7.0");
}

TEST(MatrixCommand, BadValuesAreUsageErrors) {
  MatrixOptions bad_driver;
  bad_driver.driver = "latest";
  EXPECT_FALSE(matrix_query(bad_driver, compat::embedded_matrix(), {}));
  MatrixOptions bad_gpu;
  bad_gpu.driver = "580.65.06";
  bad_gpu.gpus = {"Mystery Accelerator"};
  const Expected<compat::MachineQuery> q = matrix_query(bad_gpu, compat::embedded_matrix(), {});
  ASSERT_FALSE(q);
  EXPECT_NE(q.error().message.find("Mystery Accelerator"), std::string::npos);
}

TEST(MatrixCommand, RendersTextAndJson) {
  MatrixOptions options;
  options.driver = "535.104.05";
  options.gpus = {"sm_86"};
  const compat::MachineQuery q = *matrix_query(options, compat::embedded_matrix(), {});
  const std::string text = render_matrix(compat::embedded_matrix(), q, false);
  EXPECT_NE(text.find("PyTorch:     PyTorch 2.14 cu126 (through minor-version compatibility)"),
            std::string::npos)
      << text;
  const nlohmann::json j = nlohmann::json::parse(render_matrix(compat::embedded_matrix(), q, true));
  EXPECT_EQ(j["driver"], "535.104.05");
  EXPECT_EQ(j["newest_cuda"], "12.2");
}

TEST(MatrixCommand, InvalidMatrixFileIsRejectedWithPlaceAndProblem) {
  const std::string path = ::testing::TempDir() + "/gpucheck_bad_matrix.json";
  {
    nlohmann::json j = nlohmann::json::parse(compat::embedded_matrix_json());
    j["minor_version_compatibility"][0]["linux_min_driver"] = "570.1";
    std::ofstream(path) << j.dump();
  }
  const Expected<std::string> activated = activate_matrix_file(path);
  ASSERT_FALSE(activated);
  EXPECT_NE(activated.error().message.find(path + ": $.minor_version_compatibility[0]"),
            std::string::npos)
      << activated.error().message;
  EXPECT_EQ(&compat::active_matrix(), &compat::embedded_matrix());
  std::remove(path.c_str());
}

} // namespace
} // namespace gpucheck::cli
