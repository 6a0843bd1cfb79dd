#pragma once
/// Child-mode handlers of the active GPU checks (registered in children/child_modes.cpp). Each
/// runs in `gpucheck --child MODE ORDINAL [OPTIONS]`, works on one device and returns the JSON
/// described in child.hpp; the checks in src/checks/gpu_*.cpp judge it.

#include <nlohmann/json_fwd.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace gpucheck::gpu {

// Declared only: this header is the children's entry (children/child_modes.cpp), which needs no
// CUDA header. The works' own files include gpu/session.hpp and gpu/kernel_module.hpp.
class DeviceSession;
class KernelModule;

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

/// A work of gpucheck's own GPU children, as gpu-device runs it and as its own child mode.
struct GpuWorkRow {
  std::string_view name;  ///< in gpu-device's arguments and result lines (engine::work_name())
  std::string_view mode;  ///< the child mode that runs it alone ("": none)
  std::string_view check; ///< the check that judges it (for the reason the works after it give)
  GpuWork run;
  bool needs_kernels; ///< it runs gpucheck's kernels (the copies do not)
};

/// Every work, with its declaration above: a new work is its function in a file of src/gpu/, its
/// declaration and its row here.
inline constexpr GpuWorkRow k_gpu_works[] = {
    // gpu-compute: context, kernel load, FMA chains and a reduction checked against the CPU.
    {"compute", "gpu-compute", "gpu.compute", &compute_work, true},
    // gpu-streams: stream priorities, an event-timed kernel, a captured graph replayed.
    {"streams", "gpu-streams", "gpu.streams", &streams_work, true},
    // gpu-bandwidth: copy-engine bandwidth (nvbandwidth's method), every buffer verified.
    {"bandwidth", "gpu-bandwidth", "gpu.bandwidth", &bandwidth_work, false},
    {"copies_together", "", "gpu.bandwidth", &copies_together_work, false},
    // gpu-memtest, gpu-burn: one long-level work alone (by hand, bench/long_children.py; the
    // engine runs both in one gpu-device child).
    {"memtest", "gpu-memtest", "gpu.memtest", &memtest_work, true},
    {"burn", "gpu-burn", "gpu.burn", &burn_work, true},
};

/// The work whose child mode is `mode` ("gpu-compute", ...); nullptr for any other mode.
const GpuWorkRow* gpu_work_of_mode(std::string_view mode);

/// A child of one work (its mode): its session, its kernel module, then the work (or the
/// module's failure when the work needs gpucheck's kernels and they did not load).
nlohmann::json run_single_work(const std::vector<std::string>& args, const GpuWorkRow& work);

/// gpu-devices: protocol::DeviceListing ({"init", "init_name", "devices": [{"ordinal", "name"}]},
/// or {"error"} without a usable libcuda).
/// Used only when the snapshot carries no driver-API facts.
nlohmann::json child_gpu_devices(const std::vector<std::string>& args);

/// gpu-cudnn ORDINAL [full]: convolutions and activations checked against the CPU; "full" also
/// times every shape of docs/performance.md (for bench/compare.py).
nlohmann::json child_gpu_cudnn(const std::vector<std::string>& args);

/// gpu-peers ORDINALS: one process on every GPU listed ("0,1"): the peer access matrix, then
/// peer-to-peer copy bandwidth (each way, both ways at once) and latency for every pair, every
/// destination verified (protocol::PeersPayload; docs/checks.md, gpu.p2p).
nlohmann::json child_gpu_peers(const std::vector<std::string>& args);

/// gpu-device ORDINAL WORKS: the works named ("compute,streams,bandwidth", in that order) one
/// after another on one context (engine rule same_child). Each work's result is written as a
/// line of its own as soon as it is over ({"work": NAME, ...the work's JSON...}, or {"work":
/// NAME, "not_run": REASON} when an earlier failure left the context unusable); the last line
/// holds the child's timeline.
nlohmann::json child_gpu_device(const std::vector<std::string>& args);

} // namespace gpucheck::gpu
