#include "checks/driver_facts.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "checks/version_text.hpp"

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
      cudart != nullptr && cudart->load.loaded && !version_parts(cudart->load.version).empty()) {
    return std::to_string(version_parts(cudart->load.version).front());
  }
  if (snapshot.cuda.driver_version) {
    return std::to_string(*snapshot.cuda.driver_version / 1000);
  }
  if (snapshot.nvml.cuda_driver_version) {
    return std::to_string(*snapshot.nvml.cuda_driver_version / 1000);
  }
  return "13";
}

} // namespace gpucheck::checks
