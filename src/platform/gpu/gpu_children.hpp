#pragma once
/// Child-mode handlers of the active GPU checks (registered in platform/child_modes.cpp). Each
/// runs in `gpucheck --child MODE ORDINAL [OPTIONS]`, works on one device and returns the JSON
/// described in session.hpp; the checks in src/checks/gpu_*.cpp judge it.

#include <nlohmann/json_fwd.hpp>

#include <string>
#include <vector>

namespace gpucheck::platform::gpu {

/// gpu-devices: {"init": CUresult, "devices": [{"ordinal", "name", "cc", "pci_bus_id"}]}.
/// Used only when the snapshot carries no driver-API facts.
nlohmann::json child_gpu_devices(const std::vector<std::string>& args);

/// gpu-compute ORDINAL: context, kernel load, FMA chains and a reduction checked against the CPU.
nlohmann::json child_gpu_compute(const std::vector<std::string>& args);

/// gpu-bandwidth ORDINAL: copy-engine bandwidth (nvbandwidth's method), every buffer verified.
nlohmann::json child_gpu_bandwidth(const std::vector<std::string>& args);

/// gpu-cudnn ORDINAL [full]: convolutions and activations checked against the CPU; "full" also
/// times every shape of docs/performance.md (for bench/compare.py).
nlohmann::json child_gpu_cudnn(const std::vector<std::string>& args);

/// gpu-streams ORDINAL: stream priorities, an event-timed kernel, a captured graph replayed.
nlohmann::json child_gpu_streams(const std::vector<std::string>& args);

} // namespace gpucheck::platform::gpu
