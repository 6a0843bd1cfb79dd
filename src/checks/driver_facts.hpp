#pragma once
/// Facts about the driver stack phrased for findings (versions, PCI lists), shared by the
/// driver, CUDA and environment checks.

#include <string>
#include <vector>

#include "gpucheck/model/snapshot.hpp"

namespace gpucheck::checks {

/// NVIDIA display/3D controllers (PCI class 0x03xxxx); the audio and USB functions of the same
/// boards are bound to other drivers and are not GPUs.
std::vector<const PciDevice*> nvidia_gpu_functions(const KernelModuleInfo& module);

/// "NVIDIA PCI devices on the bus: 0000:3b:00.0 (0x2335)" or "no NVIDIA GPU was found on the
/// PCI bus".
std::string pci_gpu_summary(const KernelModuleInfo& module);

/// The kernel module version, or "unknown".
std::string module_version_text(const KernelModuleInfo& module);

/// The driver branch ("580") from the module or NVML version, or "<branch>" when unknown.
std::string driver_branch_text(const SystemSnapshot& snapshot);

/// The major CUDA version programs here use: the loaded libcudart's, else the driver's; "13"
/// when neither is known.
std::string cuda_major_text(const SystemSnapshot& snapshot);

} // namespace gpucheck::checks
