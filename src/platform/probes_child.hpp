#pragma once
/// Child-mode handlers that touch NVIDIA libraries. Each runs inside `gpucheck --child MODE`,
/// never in the parent, and returns JSON that the parent turns back into model structs.

#include <nlohmann/json_fwd.hpp>

#include <string>
#include <vector>

namespace gpucheck::platform {

/// NVML: {"nvml": NvmlInfo, "gpus": [GpuInfo...]}. No args.
nlohmann::json child_probe_nvml(const std::vector<std::string>& args);
/// gpu-census PARENT_PID: each GPU's UUID, bus id, free memory and the processes on it other
/// than gpucheck's own (protocol/census.hpp), for the GPU engine's plan and contention check.
nlohmann::json child_gpu_census(const std::vector<std::string>& args);

/// Driver API: CudaDriverInfo (cuDriverGetVersion, cuInit, devices). No args.
nlohmann::json child_probe_cuda(const std::vector<std::string>& args);

/// One library family: args = {family, name1, name2, ...} (names tried in order).
/// Returns LibraryLoad with the version the library reports (cudart, cublas, nccl).
nlohmann::json child_probe_library(const std::vector<std::string>& args);

/// cuDNN: args = {} to load by bare name (libcudnn.so.9, then .8), or {path} for one copy.
/// Returns {"load": LibraryLoad, "cudnn": CudnnDetails}.
nlohmann::json child_probe_cudnn(const std::vector<std::string>& args);

} // namespace gpucheck::platform
