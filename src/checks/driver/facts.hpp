#pragma once
/// Facts about the driver stack phrased for findings (versions, PCI lists), shared by the
/// driver, CUDA and environment checks.

#include <string>
#include <string_view>
#include <vector>

#include "gpucheck/model/snapshot.hpp"

namespace gpucheck::checks {

/// NVIDIA display/3D controllers (PCI class 0x03xxxx); the audio and USB functions of the same
/// boards are bound to other drivers and are not GPUs.
std::vector<const PciDevice*> nvidia_gpu_functions(const KernelModuleInfo& module);

/// A PCI bus id in one spelling for comparison: "00000000:3B:00.0" -> "0000:3b:00.0".
std::string canonical_bus_id(std::string_view bus_id);

/// The PCI function of the GPU with this NVML index when NVML gave no handle for it: NVML
/// numbers GPUs in PCI order, so the index-th NVIDIA display function when the counts agree,
/// else the functions no NVML GPU claims, in order. nullptr when it cannot be told.
const PciDevice* lost_gpu_function(const SystemSnapshot& snapshot, int nvml_index);

/// "NVIDIA PCI devices on the bus: 0000:3b:00.0 (0x2335)" or "no NVIDIA GPU was found on the
/// PCI bus".
std::string pci_gpu_summary(const KernelModuleInfo& module);

/// Whether an Xid 79 or a "fallen off the bus" line in the kernel log names this PCI address.
bool log_says_fallen_off(const SystemSnapshot& snapshot, const std::string& bdf);

/// The kernel module version, or "unknown".
std::string module_version_text(const KernelModuleInfo& module);

/// The driver branch ("580") from the module or NVML version, or "<branch>" when unknown.
std::string driver_branch_text(const SystemSnapshot& snapshot);

/// The major CUDA version programs here use: the loaded libcudart's, else the driver's; "13"
/// when neither is known.
std::string cuda_major_text(const SystemSnapshot& snapshot);

} // namespace gpucheck::checks
