#include <fmt/format.h>

#include <span>

#include "checks/checks.hpp"
#include "checks/driver/facts.hpp"
#include "checks/rules/packages.hpp"
#include "checks/rules/probe_failure.hpp"
#include "findings/catalog.hpp"
#include "gpucheck/plural.hpp"

namespace gpucheck::checks {

namespace {
// Its findings, spelt here (CheckDef::findings adds them to the catalogue).
constexpr FindingCode k_nvml_driver_not_loaded{"nvml.driver_not_loaded"};
constexpr FindingCode k_nvml_gpu_lost{"nvml.gpu_lost"};
constexpr FindingCode k_nvml_init_failed{"nvml.init_failed"};
constexpr FindingCode k_nvml_library_missing{"nvml.library_missing"};
constexpr FindingCode k_nvml_no_permission{"nvml.no_permission"};
constexpr FindingCode k_nvml_unknown_error{"nvml.unknown_error"};

constexpr FindingSpec k_findings[] = {
    {k_nvml_driver_not_loaded, Severity::fail, "NVML: driver not loaded",
     "NVML found no running NVIDIA kernel driver.",
     "nvmlInit_v2 returned NVML_ERROR_DRIVER_NOT_LOADED (9){0}",
     "load the driver (sudo modprobe nvidia); see driver.kernel_module for why it is not loaded",
     where("\"; /proc/driver/nvidia/version is absent\", or empty"), Drain::yes},
    {k_nvml_gpu_lost, Severity::fail, "NVML: GPU lost",
     "A GPU stopped responding (fell off the bus, Xid 79).",
     "nvmlInit_v2 returned NVML_ERROR_GPU_IS_LOST (15)",
     "drain the machine and reboot; if it repeats, check power, cooling and the slot, and ask "
     "the vendor for an RMA",
     where(), Drain::yes},
    {k_nvml_init_failed, Severity::fail, "NVML initialisation failed",
     "NVML could not initialise; the code names the reason.",
     "nvmlInit_v2 returned NVML_ERROR_{0} ({1})",
     "run nvidia-smi to see the same error, check sudo dmesg | grep -i nvrm, and look up "
     "NVML_ERROR_{0} in the NVML documentation",
     where("the NVML error name, without NVML_ERROR_", "its number")},
    {k_nvml_library_missing, Severity::warn, "libnvidia-ml not loadable",
     "The kernel module is loaded but NVML, the driver's management library, cannot be loaded.",
     "libnvidia-ml.so.1 cannot be loaded ({0}) although the kernel module {1} is loaded",
     "install the driver's utilities for branch {2}: {3}; in a container add utility to "
     "NVIDIA_DRIVER_CAPABILITIES",
     where("why libnvidia-ml.so.1 could not be loaded (the loader's error)",
           "version of the loaded kernel module", "the driver branch (\"580\")",
           "the command for this distribution (apt: sudo apt install libnvidia-compute-580 "
           "nvidia-utils-580; dnf: nvidia-driver-cuda and nvidia-driver-cuda-libs)")},
    {k_nvml_no_permission, Severity::fail, "NVML: insufficient permissions",
     "This user may not open the GPU device nodes.",
     "nvmlInit_v2 returned NVML_ERROR_NO_PERMISSION (4)",
     "add the user to the group that owns /dev/nvidia* (often video: sudo usermod -aG video "
     "$USER, then log in again); in a container pass the devices (--gpus all)"},
    {k_nvml_unknown_error, Severity::fail, "NVML: unknown error",
     "NVML failed with an unknown error; in containers this is the classic sign of device access "
     "lost after systemctl daemon-reload.",
     "nvmlInit_v2 returned NVML_ERROR_UNKNOWN (999){0}",
     "in a container: restart it, and for a lasting fix create the /dev/char symlinks (sudo "
     "nvidia-ctk system create-dev-char-symlinks --create-all); on a host: check sudo dmesg for "
     "Xid errors and reboot",
     where("\" inside a docker container\" (the container runtime), or empty")},
};

std::span<const FindingSpec> own_findings() {
  return k_findings;
}

constexpr CheckInfo k_info{"driver.nvml", "NVML initialises",
                           "libnvidia-ml loads and nvmlInit_v2 succeeds; a failure is decoded by "
                           "its NVML return code.",
                           CheckKind::passive};

// nvmlReturn_t values (nvml.h).
constexpr int k_return_no_permission = 4;
constexpr int k_return_driver_not_loaded = 9;
constexpr int k_return_gpu_is_lost = 15;
constexpr int k_return_lib_rm_version_mismatch = 18;
constexpr int k_return_unknown = 999;

constexpr int k_return_reset_required = 16;

/// One finding per GPU that NVML counts but cannot give a handle for (F22: lost, or waiting for
/// a reset), naming it by PCI address.
std::vector<Finding> lost_gpu_findings(const SystemSnapshot& s) {
  std::vector<Finding> findings;
  for (const NvmlHandleFailure& failure : s.nvml.handle_failures) {
    const PciDevice* device = lost_gpu_function(s, failure.index);
    if (!failure.pci_bus_id.empty()) {
      device = nullptr;
      for (const PciDevice& pci : s.kernel_module.pci_devices) {
        if (canonical_bus_id(pci.bdf) == canonical_bus_id(failure.pci_bus_id)) {
          device = &pci;
        }
      }
    }
    // NVML's own address when it read one before the GPU was lost; else the PCI scan's guess.
    const std::string bdf = !failure.pci_bus_id.empty() ? failure.pci_bus_id
                            : device != nullptr         ? device->bdf
                                                        : std::string();
    std::string evidence = failure.call.empty()
                               ? fmt::format("nvmlDeviceGetHandleByIndex returned {} ({})",
                                             failure.result_name, failure.result)
                               : fmt::format("NVML gave its handle, then {} returned {} ({})",
                                             failure.call, failure.result_name, failure.result);
    if (!failure.uuid.empty()) {
      evidence += fmt::format("; its UUID {}", failure.uuid);
    }
    if (device != nullptr && device->config_all_ones.value_or(false)) {
      evidence += "; its PCI config space reads 0xffffffff (the device does not answer)";
    }
    if (log_says_fallen_off(s, bdf)) {
      evidence += "; the kernel log says it fell off the bus (Xid 79)";
    }
    const int cuda_count = static_cast<int>(s.cuda.devices.size());
    const std::string cuda = s.cuda.device_count
                                 ? fmt::format("; CUDA sees {} of NVML's {}", cuda_count,
                                               plural(s.nvml.device_count.value_or(0), "GPU"))
                                 : std::string();
    const std::string address = bdf.empty() ? std::string("an unknown PCI address") : bdf;
    if (failure.result == k_return_reset_required) {
      findings.push_back(make_finding(codes::k_gpu_reset_required, failure.index, failure.index,
                                      address, evidence + cuda));
    } else {
      findings.push_back(
          make_finding(codes::k_gpu_lost, failure.index, failure.index, address, evidence + cuda));
    }
  }
  return findings;
}

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
    return {make_result(
        k_info, "libnvidia-ml.so.1 cannot be loaded",
        {make_finding(k_nvml_library_missing, std::nullopt, why,
                      module_version_text(s.kernel_module), driver_branch_text(s),
                      driver_libraries_install(s.host.os, driver_branch_text(s), true))})};
  }
  if (!nvml.init_result) {
    return {skip_result(k_info, "nvmlInit_v2 was not called")};
  }
  const int code = *nvml.init_result;
  if (code == 0) {
    return {make_result(k_info,
                        fmt::format("NVML {} initialised: driver {}, {}",
                                    nvml.nvml_version.value_or("(version unknown)"),
                                    nvml.driver_version.value_or("unknown"),
                                    nvml.device_count ? plural(*nvml.device_count, "GPU")
                                                      : std::string("an unknown number of GPUs")),
                        lost_gpu_findings(s))};
  }
  const std::string summary =
      fmt::format("nvmlInit_v2 failed: {} ({})", nvml.init_result_name, code);
  switch (code) {
  case k_return_lib_rm_version_mismatch:
    return {skip_result(k_info, summary + "; judged by driver.version_match")};
  case k_return_driver_not_loaded:
    return {
        make_result(k_info, summary,
                    {make_finding(k_nvml_driver_not_loaded, std::nullopt,
                                  s.kernel_module.proc_version_present
                                      ? std::string()
                                      : std::string("; /proc/driver/nvidia/version is absent"))})};
  case k_return_no_permission:
    return {make_result(k_info, summary, {make_finding(k_nvml_no_permission, std::nullopt)})};
  case k_return_gpu_is_lost:
    return {make_result(k_info, summary, {make_finding(k_nvml_gpu_lost, std::nullopt)})};
  case k_return_unknown: {
    const std::string where =
        s.environment.container.kind == "none"
            ? std::string()
            : fmt::format(" inside a {} container", s.environment.container.kind);
    return {
        make_result(k_info, summary, {make_finding(k_nvml_unknown_error, std::nullopt, where)})};
  }
  default:
    return {make_result(k_info, summary,
                        {make_finding(k_nvml_init_failed, std::nullopt,
                                      nvml.init_result_name.empty() ? std::string("UNKNOWN_CODE")
                                                                    : nvml.init_result_name,
                                      code)})};
  }
}
} // namespace

CheckDef driver_nvml_check() {
  return {k_info, &run, &own_findings};
}

} // namespace gpucheck::checks
