#include <fmt/format.h>

#include "checks/checks.hpp"
#include "checks/driver_facts.hpp"
#include "checks/probe_failure.hpp"
#include "findings/catalog.hpp"

namespace gpucheck::checks {

namespace {
constexpr CheckInfo k_info{"driver.installed", "NVIDIA driver installed",
                           "An NVIDIA kernel module or driver library is present.",
                           CheckKind::passive};

std::vector<CheckResult> run(const CheckContext& context) {
  const SystemSnapshot& s = context.snapshot;
  const KernelModuleInfo& module = s.kernel_module;
  if (module.proc_version_present) {
    return {make_result(k_info,
                        fmt::format("NVIDIA kernel module {} ({}) is loaded",
                                    module_version_text(module),
                                    module.flavor.value_or("flavor unknown")),
                        {})};
  }
  if (s.cuda.library.loaded || s.nvml.library.loaded) {
    return {make_result(k_info,
                        "NVIDIA user-space driver libraries are installed (kernel module: see "
                        "driver.kernel_module)",
                        {})};
  }
  if (s.cuda.failure) {
    // The library loaded far enough to crash: it exists, but whether it works is unknown.
    return {probe_failure_result(k_info, "CUDA driver probe (dlopen libcuda.so.1, cuInit)",
                                 *s.cuda.failure)};
  }
  const std::string why =
      s.cuda.library.error.empty() ? std::string("not found") : s.cuda.library.error;
  return {make_result(
      k_info, "no NVIDIA driver is installed",
      {make_finding(codes::k_driver_missing, std::nullopt, why, pci_gpu_summary(module))})};
}
} // namespace

CheckDef driver_installed_check() {
  return {k_info, &run};
}

} // namespace gpucheck::checks
