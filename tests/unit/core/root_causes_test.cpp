// find_root_causes: which finding explains which other results.
#include <gtest/gtest.h>

#include "core/root_causes.hpp"
#include "findings/catalog.hpp"

namespace gpucheck {
namespace {

CheckResult result_with_codes(std::string id, Status status, std::vector<std::string> codes = {},
                              std::optional<int> gpu = std::nullopt) {
  CheckResult r;
  r.check_id = std::move(id);
  r.status = status;
  r.gpu_index = gpu;
  for (std::string& code : codes) {
    Finding f;
    f.code = std::move(code);
    f.severity = status == Status::warn ? Severity::warn : Severity::fail;
    f.message = "message of " + f.code;
    f.remedy = "remedy of " + f.code;
    f.gpu_index = gpu;
    r.findings.push_back(std::move(f));
  }
  return r;
}

std::vector<std::string> explained(const RootCause& cause) {
  std::vector<std::string> ids;
  for (const ResultRef& ref : cause.explains) {
    ids.push_back(ref.check_id + (ref.gpu_index ? "#" + std::to_string(*ref.gpu_index) : ""));
  }
  return ids;
}

TEST(RootCauses, NoDriverExplainsEverySkippedGpuCheck) {
  const std::vector<CheckResult> results{
      result_with_codes("driver.installed", Status::fail, {"driver.missing"}),
      result_with_codes("driver.nvml", Status::skip),
      result_with_codes("cuda.init", Status::skip),
      result_with_codes("env.container", Status::skip), // not in a container: unrelated
      result_with_codes("gpu.compute", Status::skip),
      result_with_codes("lib.cudnn", Status::pass),
  };
  const std::vector<RootCause> causes = find_root_causes(results);
  ASSERT_EQ(causes.size(), 1U);
  EXPECT_EQ(causes[0].code, "driver.missing");
  EXPECT_EQ(causes[0].check_id, "driver.installed");
  EXPECT_EQ(causes[0].remedy, "remedy of driver.missing");
  EXPECT_EQ(explained(causes[0]),
            (std::vector<std::string>{"driver.nvml", "cuda.init", "gpu.compute"}));
}

TEST(RootCauses, ModuleMismatchExplainsNvmlAndCuInit) {
  const std::vector<CheckResult> results{
      result_with_codes("driver.nvml", Status::skip),
      result_with_codes("driver.version_match", Status::fail, {"driver.version_mismatch"}),
      result_with_codes("cuda.init", Status::fail, {"cuda.system_driver_mismatch"}),
      result_with_codes("compat.driver_runtime", Status::fail, {"compat.driver_too_old"}),
      result_with_codes("gpu.ecc", Status::skip),
  };
  const std::vector<RootCause> causes = find_root_causes(results);
  ASSERT_EQ(causes.size(), 1U);
  EXPECT_EQ(causes[0].code, "driver.version_mismatch");
  // An old driver is a fault of its own, not a consequence.
  EXPECT_EQ(explained(causes[0]),
            (std::vector<std::string>{"driver.nvml", "cuda.init", "gpu.ecc"}));
}

TEST(RootCauses, HiddenDevicesExplainNoDevice) {
  const std::vector<CheckResult> results{
      result_with_codes("cuda.init", Status::fail, {"cuda.no_device"}),
      result_with_codes("env.visible_devices", Status::fail, {"env.visible_devices_hides_all"}),
  };
  const std::vector<RootCause> causes = find_root_causes(results);
  ASSERT_EQ(causes.size(), 1U);
  EXPECT_EQ(causes[0].code, "env.visible_devices_hides_all");
  EXPECT_EQ(explained(causes[0]), (std::vector<std::string>{"cuda.init"}));
}

TEST(RootCauses, ContainerWithoutGpusComesBeforeTheMissingDriver) {
  const std::vector<CheckResult> results{
      result_with_codes("driver.installed", Status::fail, {"driver.missing"}),
      result_with_codes("env.container", Status::fail, {"env.nvidia_visible_devices_none"}),
      result_with_codes("gpu.ecc", Status::skip),
  };
  const std::vector<RootCause> causes = find_root_causes(results);
  ASSERT_EQ(causes.size(), 1U); // driver.missing is a consequence, not a cause of its own
  EXPECT_EQ(causes[0].code, "env.nvidia_visible_devices_none");
  EXPECT_EQ(explained(causes[0]), (std::vector<std::string>{"driver.installed", "gpu.ecc"}));
}

TEST(RootCauses, LostGpuExplainsItsOwnResultsOnly) {
  std::vector<CheckResult> results{
      result_with_codes("driver.nvml", Status::fail, {"gpu.lost"}, std::nullopt),
      result_with_codes("driver.kernel_log", Status::fail, {"log.xid_fatal"}),
      result_with_codes("gpu.ecc", Status::pass, {}, 0),
      result_with_codes("gpu.compute", Status::skip, {}, 1),
      result_with_codes("gpu.compute", Status::skip, {}, 0),
  };
  results[0].findings[0].gpu_index = 1;
  results[1].findings[0].gpu_index = 1;
  const std::vector<RootCause> causes = find_root_causes(results);
  ASSERT_EQ(causes.size(), 1U);
  EXPECT_EQ(causes[0].gpu_index, 1);
  EXPECT_EQ(explained(causes[0]), (std::vector<std::string>{"driver.kernel_log", "gpu.compute#1"}));
}

TEST(RootCauses, NothingExplainedNoCause) {
  const std::vector<CheckResult> results{
      result_with_codes("driver.installed", Status::fail, {"driver.missing"}),
      result_with_codes("env.container", Status::skip),
  };
  EXPECT_TRUE(find_root_causes(results).empty());
  std::vector<CheckResult> ignored{
      result_with_codes("env.visible_devices", Status::fail, {"env.visible_devices_hides_all"}),
      result_with_codes("cuda.init", Status::fail, {"cuda.no_device"}),
  };
  ignored[0].findings[0].ignored = true;
  EXPECT_TRUE(find_root_causes(ignored).empty());
}

} // namespace
} // namespace gpucheck
