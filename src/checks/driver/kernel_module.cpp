#include <fmt/format.h>
#include <fmt/ranges.h>

#include <span>

#include "checks/checks.hpp"
#include "checks/driver/facts.hpp"
#include "checks/rules/packages.hpp"
#include "findings/catalog.hpp"
#include "gpucheck/plural.hpp"

namespace gpucheck::checks {

namespace {
// Its findings, spelt here (CheckDef::findings adds them to the catalogue).
constexpr FindingCode k_driver_gpu_other_driver{"driver.gpu_other_driver"};
constexpr FindingCode k_driver_gpu_unbound{"driver.gpu_unbound"};

constexpr FindingSpec k_findings[] = {
    {k_driver_gpu_other_driver, Severity::warn, "GPU bound to another driver",
     "An NVIDIA PCI device is bound to a driver other than nvidia (vfio-pci reserves it for a "
     "virtual machine).",
     "NVIDIA PCI device {0} ({1}) is bound to {2}, not to nvidia",
     "if this host should use the GPU, unbind it from {2} (e.g. sudo driverctl unset-override {0}) "
     "and reload the nvidia module",
     where("the device's PCI address", "its PCI device id",
           "the driver bound to it (vfio-pci, ...)")},
    {k_driver_gpu_unbound, Severity::fail, "GPU without driver",
     "The nvidia module is loaded but did not claim this GPU (unsupported by this driver branch "
     "or by the open/proprietary flavour, or a failed probe).",
     "NVIDIA PCI device {0} ({1}) has no kernel driver bound although driver {2} is loaded",
     "read sudo dmesg | grep -i nvrm for why the driver rejected it (a GPU too old or too new for "
     "branch {2}, an open module on a pre-Turing GPU), install a driver that supports it, then "
     "reload the module or reboot",
     where("the device's PCI address", "its PCI device id", "version of the loaded nvidia module"),
     Drain::yes},
};

std::span<const FindingSpec> own_findings() {
  return k_findings;
}

constexpr CheckInfo k_info{
    "driver.kernel_module", "NVIDIA kernel module loaded and bound",
    "The nvidia kernel module is loaded when the user-space driver is installed, and every "
    "NVIDIA GPU on the PCI bus is bound to it.",
    CheckKind::passive};

std::string user_space_libraries(const SystemSnapshot& s) {
  std::vector<std::string> libs;
  for (const LibraryLoad* load : {&s.cuda.library, &s.nvml.library}) {
    if (load->loaded) {
      libs.push_back(fmt::format("{} -> {}", load->name,
                                 load->real_path.empty() ? load->path : load->real_path));
    }
  }
  return fmt::format("{}", fmt::join(libs, ", "));
}

std::vector<CheckResult> run(const CheckContext& context) {
  const SystemSnapshot& s = context.snapshot;
  const KernelModuleInfo& module = s.kernel_module;
  const bool user_space = s.cuda.library.loaded || s.nvml.library.loaded;
  if (!module.proc_version_present && !user_space) {
    return {skip_result(k_info, "no NVIDIA driver is installed (see driver.installed)")};
  }
  if (!module.proc_version_present && s.environment.wsl) {
    // WSL2 has no Linux kernel module by design: the Windows driver serves the GPU through
    // /dev/dxg (env.wsl judges that layout). Installing a Linux driver here would break it.
    return {make_result(k_info,
                        "WSL2: the Windows driver serves the GPU; there is no Linux kernel "
                        "module by design (see env.wsl)",
                        {})};
  }
  if (!module.proc_version_present) {
    const std::string kernel = s.host.kernel.empty() ? std::string("$(uname -r)") : s.host.kernel;
    return {make_result(
        k_info, "the nvidia kernel module is not loaded",
        {make_finding(codes::k_driver_module_not_loaded, std::nullopt, user_space_libraries(s),
                      pci_gpu_summary(module), kernel, kernel_module_rebuild(s.host.os, kernel))})};
  }
  std::vector<Finding> findings;
  const std::vector<const PciDevice*> gpus = nvidia_gpu_functions(module);
  for (const PciDevice* device : gpus) {
    if (device->driver.empty()) {
      findings.push_back(make_finding(k_driver_gpu_unbound, std::nullopt, device->bdf,
                                      device->device_id, module_version_text(module)));
    } else if (device->driver != "nvidia" && device->driver != "nouveau") {
      // nouveau is judged by env.nouveau.
      findings.push_back(make_finding(k_driver_gpu_other_driver, std::nullopt, device->bdf,
                                      device->device_id, device->driver));
    }
  }
  return {make_result(k_info,
                      fmt::format("nvidia module {} loaded; {} on the PCI bus",
                                  module_version_text(module), plural(gpus.size(), "NVIDIA GPU")),
                      std::move(findings))};
}
} // namespace

CheckDef driver_kernel_module_check() {
  return {k_info, &run, &own_findings};
}

} // namespace gpucheck::checks
