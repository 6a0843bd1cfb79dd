#pragma once
/// gpu.bandwidth: copy-engine bandwidth with nvbandwidth's method, every copied buffer verified.
/// Three works of one check, each timed when the engine's copy rules allow (protocol::Copies):
/// its host copies alone (pinned each way, both ways at once, pageable), on a machine with
/// several GPUs the same copies on every GPU at once (the host's aggregate), and last the
/// device-local copy, folded into the host copies' result before it is judged.

#include <nlohmann/json_fwd.hpp>

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "gpu_checks/gpu_check.hpp"

namespace gpucheck::gpu_checks {
/// Its payloads are written and read by protocol/payloads.hpp's own functions.
template <>
struct PayloadCodec<protocol::BandwidthPayload>
    : CodecOf<protocol::BandwidthPayload, &protocol::write_bandwidth, &protocol::read_bandwidth> {};
/// The copies together: written only once measured (the judge reads their absence as "not run").
template <> struct PayloadCodec<std::optional<protocol::CopiesTogetherPayload>> {
  static void write(const std::optional<protocol::CopiesTogetherPayload>& together,
                    nlohmann::json& json) {
    if (together) {
      protocol::write_copies_together(*together, json);
    }
  }
};
} // namespace gpucheck::gpu_checks

namespace gpucheck::gpu_checks::bandwidth {

/// The host copies' and the device-local copy's own fields (numa, sizes, link, ...).
using Payload = protocol::BandwidthPayload;
using TogetherPayload = std::optional<protocol::CopiesTogetherPayload>;

inline constexpr FindingCode k_bandwidth_low{"gpu.bandwidth_low"};
inline constexpr FindingCode k_bandwidth_outlier{"gpu.bandwidth_outlier"};
inline constexpr FindingCode k_copy_gate_timeout{"gpu.copy_gate_timeout"};
inline constexpr FindingCode k_copy_corrupt{"gpu.copy_corrupt"};

/// Its works' names: the host copies alone, on every GPU at once, and the device-local copy.
inline constexpr std::string_view k_work = "bandwidth";
inline constexpr std::string_view k_together_work = "copies_together";
inline constexpr std::string_view k_local_work = "local_copies";

/// The host copies, alone (work.cpp): pinned each way, both ways at once, pageable. Keeps its
/// pinned buffer and its device twin for together_work() (release_kept() frees them).
void host_work(gpu::DeviceSession& session, const gpu::KernelModule& module, Output<Payload>& out);
/// The host copies again on the buffers host_work() kept, released at the same moment on every
/// GPU of the machine (work.cpp).
void together_work(gpu::DeviceSession& session, const gpu::KernelModule& module,
                   Output<TogetherPayload>& out);
/// The device-local copy (work.cpp).
void local_work(gpu::DeviceSession& session, const gpu::KernelModule& module, Output<Payload>& out);
/// Frees what host_work() kept (work.cpp).
void release_kept();
/// gpu-bandwidth ORDINAL: the host copies, then the device-local copy folded into their result,
/// as the check reads it (work.cpp).
nlohmann::json own_child(const std::vector<std::string>& args);

/// The verdict on one GPU's host copies with its device-local copy folded in (check.cpp).
checks::Judgement judge(const checks::GpuTarget& gpu, const Payload& payload,
                        const ChildReport& child);
/// Its siblings compared (check.cpp): a GPU whose host->device rate is well below the median of
/// the GPUs of its model is gpu.bandwidth_outlier, a note where it was measured under contention.
void add_outliers(std::vector<CheckResult>& results, const checks::GpuTargets& targets);
/// Its findings' entries (check.cpp).
std::span<const FindingSpec> findings();

} // namespace gpucheck::gpu_checks::bandwidth
