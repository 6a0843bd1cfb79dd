#pragma once
/// The facts the compatibility rules read, taken from a SystemSnapshot in one place.

#include <optional>
#include <string>
#include <vector>

#include "compat/matrix.hpp"
#include "gpucheck/model/snapshot.hpp"

namespace gpucheck::compat {

struct MachineGpu {
  int index = 0;
  std::string name;
  std::optional<std::string> pci_device_id;
  std::optional<Version> cc; ///< as reported, else placed by the matrix from name / PCI id
  const GpuProduct* product = nullptr; ///< matrix entry matched by name / PCI id, if any
};

/// A CUDA build found on the machine: a runtime, a cuDNN's built-for CUDA, a toolkit.
struct CudaBuild {
  std::string what; ///< for messages: "CUDA runtime 13.0.88 (/usr/lib/libcudart.so.13)"
  Version cuda;     ///< major.minor
};

struct InstalledCudnn {
  std::string version; ///< "9.19.0"
  std::optional<Version> value;
  std::optional<Version> built_for; ///< cudnnGetCudartVersion as major.minor
  std::string path;
};

struct MachineFacts {
  std::optional<std::string> driver_text; ///< "580.159.04" (kernel module, else NVML)
  std::optional<Version> driver;
  std::optional<Version> driver_cuda;        ///< cuDriverGetVersion as major.minor
  std::optional<std::string> compat_libcuda; ///< path of a libcuda loaded from a compat/ dir
  std::vector<MachineGpu> gpus;
  std::vector<CudaBuild> runtimes;
  std::vector<InstalledCudnn> cudnn;
  std::optional<std::string> nvcc_text;
  std::optional<Version> nvcc; ///< major.minor
};

/// Read the facts from a snapshot; GPUs without a compute capability are placed by the matrix.
MachineFacts machine_facts(const SystemSnapshot& snapshot, const Matrix& matrix);

} // namespace gpucheck::compat
