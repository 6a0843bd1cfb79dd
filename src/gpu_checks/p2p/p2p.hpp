#pragma once
/// gpu.p2p: with two or more GPUs, the peer access matrix, then copy-engine bandwidth between
/// every pair (each way, both ways at once) and latency, every received buffer verified. Its
/// work is the first of the child over every GPU (gpu/span_child.cpp), timed once every other
/// job on its GPUs has gone (rule peers_after_all).

#include <nlohmann/json_fwd.hpp>

#include <span>
#include <vector>

#include "gpu_checks/gpu_check.hpp"

namespace gpucheck::gpu_checks {
/// Its payload is written and read by protocol/payloads.hpp's own functions.
template <>
struct PayloadCodec<protocol::PeersPayload>
    : CodecOf<protocol::PeersPayload, &protocol::write_peers, &protocol::read_peers> {};
} // namespace gpucheck::gpu_checks

namespace gpucheck::gpu_checks::p2p {

/// The peers child's own fields ("devices", "access", "pairs", ...).
using Payload = protocol::PeersPayload;

inline constexpr FindingCode k_bandwidth_low{"p2p.bandwidth_low"};
inline constexpr FindingCode k_no_access{"p2p.no_access"};
inline constexpr FindingCode k_data_mismatch{"p2p.data_mismatch"};

/// Its work in the child over every GPU (work.cpp): the access matrix and every pair's figures,
/// its verifications (kind "p2p") and peer_work_ms; `step.before_gate` (NCCL's initialisation)
/// runs once its buffers are filled, before its gate.
void work(gpu::PeerSession& session, const gpu::SpanStep& step, Output<Payload>& out);

/// The verdict on the child's payload against the paths of the snapshot (NVML); its per-pair
/// metrics (NVML indices) are appended to `metrics` (check.cpp).
checks::Judgement judge(const SystemSnapshot& snapshot, const Payload& peers, bool contended,
                        std::vector<Metric>& metrics);
/// Its findings' entries (check.cpp).
std::span<const FindingSpec> findings();

} // namespace gpucheck::gpu_checks::p2p
