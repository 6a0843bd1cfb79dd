#pragma once
/// The version of each component a --require gate can name, read from a snapshot: what the gate
/// compares, or why there is nothing to compare.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpucheck/model/snapshot.hpp"
#include "gpucheck/model/version.hpp"

namespace gpucheck::gates {

/// One version found for a component (or the reason none was found).
struct FoundVersion {
  std::optional<Version> version; ///< nullopt: not found, `missing_reason` says why
  std::string text;               ///< as found, "580.159.04"; empty when not found
  std::string missing_reason;     ///< "libcudnn is not loadable: ..." when not found
  std::optional<int> gpu_index;   ///< for per-GPU components (cc)
  std::string gpu_name;           ///< for per-GPU components
};

/// The versions of `subject` (one of k_requirement_subjects) on this machine:
///   driver  the kernel module's version, else NVML's driver version
///   cuda    the CUDA version the driver supports (cuDriverGetVersion, else NVML)
///   cudart, cudnn, cublas, nccl  the version of the library the loader picks for the bare name
///   toolkit nvcc's version, else the first toolkit installation found
///   cc      each GPU's compute capability (one entry per GPU)
/// Machine-wide components give exactly one entry; cc gives one per GPU, or one entry without a
/// version when there is no GPU.
std::vector<FoundVersion> found_versions(const SystemSnapshot& snapshot, std::string_view subject);

} // namespace gpucheck::gates
