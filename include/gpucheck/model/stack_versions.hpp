#pragma once
/// The resolved versions of the driver stack, one rule each for every reader of a snapshot
/// (compat, gates, checks; fleet applies the same rules to other nodes' JSON): the driver's
/// version and the CUDA version it supports were worked out in several places, which disagreed on
/// a libcuda that reports 0; and the one text of a CUDA version number.
///
/// They are pure functions of the snapshot, not fields of it: a snapshot read back from JSON, or
/// built by a test, resolves the same way, and the report's JSON keeps what each probe saw.

#include <cstdint>
#include <optional>
#include <string>

#include "gpucheck/model/snapshot.hpp"

namespace gpucheck {

/// The driver's version ("580.159.04"): the loaded kernel module's, else what NVML reports; nullopt
/// when neither knows.
std::optional<std::string> driver_version(const SystemSnapshot& snapshot);

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
