#pragma once
/// Decoding the version integers NVIDIA libraries report about themselves. Pure functions.

#include <cstdint>
#include <string>

namespace gpucheck::platform {

// cudaRuntimeGetVersion / cuDriverGetVersion: gpucheck::cuda_version_text
// (gpucheck/model/stack_versions.hpp).

/// ncclGetVersion: 22803 -> "2.28.3"; the older encoding major*1000+minor*100+patch
/// (NCCL < 2.9): 2708 -> "2.7.8".
std::string nccl_version_string(int64_t version);

/// cudnnGetVersion: 9.x is major*10000+minor*100+patch (91900 -> "9.19.0"); 8.x is
/// major*1000+minor*100+patch (8907 -> "8.9.7").
std::string cudnn_version_string(int64_t version);

} // namespace gpucheck::platform
