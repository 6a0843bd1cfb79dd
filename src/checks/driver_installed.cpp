#include <fmt/format.h>

#include "checks/checks.hpp"
#include "checks/driver_facts.hpp"
#include "checks/packages.hpp"
#include "checks/probe_failure.hpp"
#include "findings/catalog.hpp"

namespace gpucheck::checks {

namespace {
constexpr CheckInfo k_info{"driver.installed", "NVIDIA driver installed",
                           "An NVIDIA kernel module or driver library is present.",
                           CheckKind::passive};

/// The remedy for a machine with no NVIDIA driver, by situation (issue 35): nothing to install
/// where no GPU is on the bus, never a driver inside a container, Windows' driver under WSL2,
/// else the distribution's own way.
std::string missing_driver_remedy(const SystemSnapshot& s) {
  const bool gpu_on_bus = !nvidia_gpu_functions(s.kernel_module).empty();
  const std::string& kind = s.environment.container.kind;
  const bool container = !kind.empty() && kind != "none";
  if (s.environment.wsl) {
    return "install or update the NVIDIA driver on Windows, which serves WSL2 (its libraries "
           "appear in /usr/lib/wsl/lib); install no Linux NVIDIA driver inside the distribution";
  }
  if (!gpu_on_bus && container) {
    return "nothing to install: no NVIDIA GPU shows on this machine's PCI bus, and a driver is "
           "never installed inside a container; run the container on a node with a GPU, started "
           "with --gpus all (NVIDIA Container Toolkit) or a CDI device (--device "
           "nvidia.com/gpu=all)";
  }
  if (!gpu_on_bus) {
    return "nothing to install: no NVIDIA GPU is on this machine's PCI bus (a virtual machine "
           "shows one only when a GPU is passed through to it: check the instance type or the "
           "hypervisor's passthrough)";
  }
  if (container) {
    return "install the driver on the host, not in this container: the host's kernel has no "
           "nvidia module loaded; then start the container with --gpus all (NVIDIA Container "
           "Toolkit) or a CDI device (--device nvidia.com/gpu=all)";
  }
  return driver_install(s.host.os) + ", then reboot";
}

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
  return {make_result(k_info, "no NVIDIA driver is installed",
                      {make_finding(codes::k_driver_missing, std::nullopt, why,
                                    pci_gpu_summary(module), missing_driver_remedy(s))})};
}
} // namespace

CheckDef driver_installed_check() {
  return {k_info, &run};
}

} // namespace gpucheck::checks
