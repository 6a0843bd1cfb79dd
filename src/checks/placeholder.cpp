#include "checks/checks.hpp"
#include "gpucheck/finding_catalog.hpp"

namespace gpucheck::checks {

namespace {
constexpr CheckInfo k_info{"driver.present", "NVIDIA driver present", "placeholder",
                           CheckKind::passive};
std::vector<CheckResult> run(const CheckContext& context) {
  if (!context.snapshot.kernel_module.proc_version_present) {
    return {make_result(k_info, "no NVIDIA kernel module",
                        {make_finding("driver.missing", std::nullopt)})};
  }
  return {make_result(k_info, "kernel module loaded", {})};
}
} // namespace

CheckDef placeholder_check() {
  return {k_info, &run};
}

} // namespace gpucheck::checks
