#pragma once
/// Child-mode handlers of the active GPU checks (registered in children/child_modes.cpp). Each
/// runs in `gpucheck --child MODE ORDINAL [OPTIONS]`, works on one device and returns the JSON
/// described in session.hpp; the checks in src/checks/gpu_*.cpp judge it.

#include <nlohmann/json_fwd.hpp>

#include "gpu/kernel_module.hpp"
#include "gpu/session.hpp"

#include <string>
#include <vector>

namespace gpucheck::platform::gpu {

/// One work of the GPU children on a session and the kernel module its child loaded: it waits
/// at its gate, does its gated work, says done_with_gpu(), and checks its results.
using GpuWork = void (*)(DeviceSession& session, const KernelModule& module, nlohmann::json& out);
void compute_work(DeviceSession& session, const KernelModule& module, nlohmann::json& out);
void streams_work(DeviceSession& session, const KernelModule& module, nlohmann::json& out);
void bandwidth_work(DeviceSession& session, const KernelModule& module, nlohmann::json& out);
/// After bandwidth_work() in the same child: its host copies again, released at the same moment
/// on every GPU of the machine (the host's aggregate), on the buffers bandwidth_work() kept.
void copies_together_work(DeviceSession& session, const KernelModule& module, nlohmann::json& out);
/// The long level: the memory test over nearly all free memory (memtest.cpp), then the GEMM
/// burn with NVML's clock, throttle and Xid watch (burn.cpp); each for GPUCHECK_LONG_DURATION_MS.
void memtest_work(DeviceSession& session, const KernelModule& module, nlohmann::json& out);
void burn_work(DeviceSession& session, const KernelModule& module, nlohmann::json& out);

/// A child of one work: its session, its kernel module, then the work (or the module's failure
/// when the work needs gpucheck's kernels and they did not load).
nlohmann::json run_single_work(const std::vector<std::string>& args, GpuWork work);

/// gpu-devices: engine::DeviceListing ({"init", "init_name", "devices": [{"ordinal", "name"}]},
/// or {"error"} without a usable libcuda).
/// Used only when the snapshot carries no driver-API facts.
nlohmann::json child_gpu_devices(const std::vector<std::string>& args);

/// gpu-compute ORDINAL: context, kernel load, FMA chains and a reduction checked against the CPU.
nlohmann::json child_gpu_compute(const std::vector<std::string>& args);
/// gpu-memtest ORDINAL, gpu-burn ORDINAL: one long-level work alone (by hand; the engine runs
/// both in one gpu-device child).
nlohmann::json child_gpu_memtest(const std::vector<std::string>& args);
nlohmann::json child_gpu_burn(const std::vector<std::string>& args);

/// gpu-bandwidth ORDINAL: copy-engine bandwidth (nvbandwidth's method), every buffer verified.
nlohmann::json child_gpu_bandwidth(const std::vector<std::string>& args);

/// gpu-cudnn ORDINAL [full]: convolutions and activations checked against the CPU; "full" also
/// times every shape of docs/performance.md (for bench/compare.py).
nlohmann::json child_gpu_cudnn(const std::vector<std::string>& args);

/// gpu-streams ORDINAL: stream priorities, an event-timed kernel, a captured graph replayed.
nlohmann::json child_gpu_streams(const std::vector<std::string>& args);

/// gpu-peers ORDINALS: one process on every GPU listed ("0,1"): the peer access matrix, then
/// peer-to-peer copy bandwidth (each way, both ways at once) and latency for every pair, every
/// destination verified (engine::PeersPayload; docs/checks.md, gpu.p2p).
nlohmann::json child_gpu_peers(const std::vector<std::string>& args);

/// gpu-device ORDINAL WORKS: the works named ("compute,streams,bandwidth", in that order) one
/// after another on one context (engine rule same_child). Each work's result is written as a
/// line of its own as soon as it is over ({"work": NAME, ...the work's JSON...}, or {"work":
/// NAME, "not_run": REASON} when an earlier failure left the context unusable); the last line
/// holds the child's timeline.
nlohmann::json child_gpu_device(const std::vector<std::string>& args);

} // namespace gpucheck::platform::gpu
