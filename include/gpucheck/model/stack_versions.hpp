#pragma once
/// The driver's CUDA version as one rule for every reader of a snapshot (compat, gates, checks):
/// it was worked out in several places, which disagreed on a libcuda that reports 0; and the one
/// text of a CUDA version number.

#include <cstdint>
#include <optional>
#include <string>

#include "gpucheck/model/snapshot.hpp"

namespace gpucheck {

/// The CUDA version the driver supports, encoded as CUDA encodes it (13000 = 13.0): what
/// libcuda's cuDriverGetVersion said, or NVML's (nvmlSystemGetCudaDriverVersion_v2) when libcuda
/// gave none or a value that is no version (0: a libcuda that could not answer). nullopt when
/// neither knows.
std::optional<int> driver_cuda_version(const SystemSnapshot& snapshot);

/// "13.0" from CUDA's encoding (13000; 12080 is "12.8"): cuDriverGetVersion, NVML's CUDA
/// version, cudaRuntimeGetVersion, cuDNN's CUDART_VERSION. The one spelling of the reports,
/// findings, probes and fleet tables.
std::string cuda_version_text(int64_t encoded);

} // namespace gpucheck
