#include "checks/driver/facts.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cctype>
#include <cstdlib>

#include "checks/rules/path_text.hpp"
#include "gpucheck/model/stack_versions.hpp"

namespace gpucheck::checks {

std::vector<const PciDevice*> nvidia_gpu_functions(const KernelModuleInfo& module) {
  std::vector<const PciDevice*> gpus;
  for (const PciDevice& device : module.pci_devices) {
    if (device.class_code.starts_with("0x03")) {
      gpus.push_back(&device);
    }
  }
  return gpus;
}

std::string canonical_bus_id(std::string_view bus_id) {
  std::string text;
  for (const char c : bus_id) {
    text += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  const size_t first = text.find(':');
  const size_t last = text.rfind(':');
  if (first == std::string::npos || first == last) {
    return text;
  }
  // The domain is 4 or 8 hex digits ("0000", "00000000"): compare it as a number.
  const unsigned long domain = std::strtoul(text.substr(0, first).c_str(), nullptr, 16);
  return fmt::format("{:04x}{}", domain, text.substr(first));
}

const PciDevice* lost_gpu_function(const SystemSnapshot& snapshot, int nvml_index) {
  const std::vector<const PciDevice*> functions = nvidia_gpu_functions(snapshot.kernel_module);
  const int handles = static_cast<int>(snapshot.nvml.handle_failures.size());
  if (snapshot.nvml.device_count &&
      static_cast<int>(functions.size()) == *snapshot.nvml.device_count && nvml_index >= 0 &&
      nvml_index < static_cast<int>(functions.size())) {
    return functions[static_cast<size_t>(nvml_index)];
  }
  std::vector<const PciDevice*> unclaimed;
  for (const PciDevice* device : functions) {
    bool claimed = false;
    for (const GpuInfo& gpu : snapshot.gpus) {
      claimed = claimed || (!gpu.pci_bus_id.empty() &&
                            canonical_bus_id(gpu.pci_bus_id) == canonical_bus_id(device->bdf));
    }
    if (!claimed) {
      unclaimed.push_back(device);
    }
  }
  if (static_cast<int>(unclaimed.size()) != handles) {
    return nullptr;
  }
  for (int i = 0; i < handles; ++i) {
    if (snapshot.nvml.handle_failures[static_cast<size_t>(i)].index == nvml_index) {
      return unclaimed[static_cast<size_t>(i)];
    }
  }
  return nullptr;
}

std::string pci_gpu_summary(const KernelModuleInfo& module) {
  const std::vector<const PciDevice*> gpus = nvidia_gpu_functions(module);
  if (gpus.empty()) {
    return "no NVIDIA GPU was found on the PCI bus";
  }
  std::vector<std::string> names;
  for (const PciDevice* device : gpus) {
    names.push_back(fmt::format("{} ({})", device->bdf, device->device_id));
  }
  return fmt::format("NVIDIA GPUs on the PCI bus: {}", fmt::join(names, ", "));
}

std::string module_version_text(const KernelModuleInfo& module) {
  return module.version.value_or("unknown");
}

bool log_says_fallen_off(const SystemSnapshot& snapshot, const std::string& bdf) {
  for (const KernelLogEvent& event : snapshot.kernel_log.events) {
    const bool fallen = event.kind == "fallen_off_bus" || (event.kind == "xid" && event.code == 79);
    // An Xid line names bus and device only (function 0).
    if (fallen && !bdf.empty() &&
        canonical_bus_id(event.pci_bus_id).substr(0, 10) == canonical_bus_id(bdf).substr(0, 10)) {
      return true;
    }
  }
  return false;
}

std::string driver_branch_text(const SystemSnapshot& snapshot) {
  std::string branch;
  if (snapshot.kernel_module.version) {
    branch = driver_branch(*snapshot.kernel_module.version);
  }
  if (branch.empty() && snapshot.nvml.driver_version) {
    branch = driver_branch(*snapshot.nvml.driver_version);
  }
  return branch.empty() ? std::string("<branch>") : branch;
}

std::string cuda_major_text(const SystemSnapshot& snapshot) {
  if (const LibraryFamily* cudart = snapshot.library("cudart");
      cudart != nullptr && cudart->load.loaded && !Version::leading(cudart->load.version).empty()) {
    return std::to_string(Version::leading(cudart->load.version).major_number());
  }
  if (const std::optional<int> cuda = driver_cuda_version(snapshot)) {
    return std::to_string(*cuda / 1000);
  }
  return "13";
}

} // namespace gpucheck::checks
