#pragma once
/// gpu.cudnn: cuDNN's convolutions (FP32 NCHW, FP16 and BF16 NHWC) and activations against a CPU
/// reference, the heuristic's and the timed algorithm choice, the graph API's fastest engine,
/// TFLOP/s, and a deterministic algorithm repeated bit for bit. Its work is the shared child's
/// lane: it prepares on a thread of its own from the start and is timed last (gpu/work_lane.hpp).

#include <nlohmann/json_fwd.hpp>

#include <span>
#include <string>
#include <vector>

#include "gpu_checks/gpu_check.hpp"

namespace gpucheck::gpu_checks {
/// Its payload is written and read by protocol/payloads.hpp's own functions.
template <>
struct PayloadCodec<protocol::CudnnPayload>
    : CodecOf<protocol::CudnnPayload, &protocol::write_cudnn, &protocol::read_cudnn> {};
} // namespace gpucheck::gpu_checks

namespace gpucheck::gpu_checks::cudnn {

/// Its payload is the one protocol/payloads.hpp reads and writes ("cudnn", "convolutions", ...).
using Payload = protocol::CudnnPayload;

inline constexpr FindingCode k_call_failed{"cudnn.call_failed"};
inline constexpr FindingCode k_heuristic_slow{"cudnn.heuristic_slow"};
inline constexpr FindingCode k_nondeterministic{"cudnn.nondeterministic"};
inline constexpr FindingCode k_conv_mismatch{"cudnn.conv_mismatch"};
inline constexpr FindingCode k_activation_mismatch{"cudnn.activation_mismatch"};

/// The hardware queues of a context that runs cuDNN (CUDA_DEVICE_MAX_CONNECTIONS): one slowed
/// cuDNN's FFT_TILING convolution, two were as fast as eight (docs/performance.md).
inline constexpr int k_connections = 2;

/// Its work as the shared child's lane (work.cpp): its libraries, handles and small verified
/// cases prepared beside the works before it, on the child's context, then its convolutions
/// timed when its turn comes.
void lane_work(gpu::DeviceSession& session, const gpu::KernelModule& module, nlohmann::json& out,
               const gpu::LaneSteps& steps);
/// gpu-cudnn ORDINAL [full]: the work alone; "full" also times every shape of
/// docs/performance.md (for bench/compare.py) (work.cpp).
nlohmann::json own_child(const std::vector<std::string>& args);

/// The verdict on one GPU's payload (check.cpp).
checks::Judgement judge(const checks::GpuTarget& gpu, const Payload& cudnn,
                        const ChildReport& child);
/// Its findings' entries (check.cpp).
std::span<const FindingSpec> findings();

} // namespace gpucheck::gpu_checks::cudnn
