#include <fmt/format.h>

#include "checks/checks.hpp"
#include "checks/driver_facts.hpp"
#include "checks/probe_failure.hpp"
#include "gpucheck/finding_catalog.hpp"

namespace gpucheck::checks {

namespace {
constexpr CheckInfo k_info{"driver.nvml", "NVML initialises",
                           "libnvidia-ml loads and nvmlInit_v2 succeeds; a failure is decoded by "
                           "its NVML return code.",
                           CheckKind::passive};

// nvmlReturn_t values (nvml.h).
constexpr int k_nvml_no_permission = 4;
constexpr int k_nvml_driver_not_loaded = 9;
constexpr int k_nvml_gpu_is_lost = 15;
constexpr int k_nvml_lib_rm_version_mismatch = 18;
constexpr int k_nvml_unknown = 999;

std::vector<CheckResult> run(const CheckContext& context) {
  const SystemSnapshot& s = context.snapshot;
  const NvmlInfo& nvml = s.nvml;
  if (nvml.failure) {
    return {
        probe_failure_result(k_info, "NVML probe (nvmlInit_v2, nvmlDeviceGet*)", *nvml.failure)};
  }
  if (!nvml.library.loaded) {
    if (!s.kernel_module.proc_version_present) {
      return {skip_result(k_info, "libnvidia-ml.so.1 is not loadable and no kernel module is "
                                  "loaded (see driver.installed)")};
    }
    const std::string why =
        nvml.library.error.empty() ? std::string("not found") : nvml.library.error;
    return {
        make_result(k_info, "libnvidia-ml.so.1 cannot be loaded",
                    {make_finding("nvml.library_missing", std::nullopt, why,
                                  module_version_text(s.kernel_module), driver_branch_text(s))})};
  }
  if (!nvml.init_result) {
    return {skip_result(k_info, "nvmlInit_v2 was not called")};
  }
  const int code = *nvml.init_result;
  if (code == 0) {
    return {make_result(k_info,
                        fmt::format("NVML {} initialised: driver {}, {} GPU(s)",
                                    nvml.nvml_version.value_or("(version unknown)"),
                                    nvml.driver_version.value_or("unknown"),
                                    nvml.device_count ? std::to_string(*nvml.device_count)
                                                      : std::string("unknown number of")),
                        {})};
  }
  const std::string summary =
      fmt::format("nvmlInit_v2 failed: {} ({})", nvml.init_result_name, code);
  switch (code) {
  case k_nvml_lib_rm_version_mismatch:
    return {skip_result(k_info, summary + "; judged by driver.version_match")};
  case k_nvml_driver_not_loaded:
    return {
        make_result(k_info, summary,
                    {make_finding("nvml.driver_not_loaded", std::nullopt,
                                  s.kernel_module.proc_version_present
                                      ? std::string()
                                      : std::string("; /proc/driver/nvidia/version is absent"))})};
  case k_nvml_no_permission:
    return {make_result(k_info, summary, {make_finding("nvml.no_permission", std::nullopt)})};
  case k_nvml_gpu_is_lost:
    return {make_result(k_info, summary, {make_finding("nvml.gpu_lost", std::nullopt)})};
  case k_nvml_unknown: {
    const std::string where =
        s.environment.container.kind == "none"
            ? std::string()
            : fmt::format(" inside a {} container", s.environment.container.kind);
    return {
        make_result(k_info, summary, {make_finding("nvml.unknown_error", std::nullopt, where)})};
  }
  default:
    return {make_result(k_info, summary,
                        {make_finding("nvml.init_failed", std::nullopt,
                                      nvml.init_result_name.empty() ? std::string("UNKNOWN_CODE")
                                                                    : nvml.init_result_name,
                                      code)})};
  }
}
} // namespace

CheckDef driver_nvml_check() {
  return {k_info, &run};
}

} // namespace gpucheck::checks
