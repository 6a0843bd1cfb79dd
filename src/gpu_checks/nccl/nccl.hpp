#pragma once
/// gpu.nccl: with two or more GPUs, NCCL (libnccl.so.2, as the loader finds it) all-reduces
/// float32 sums over every GPU, each element checked, bus bandwidth as nccl-tests reports it. Its
/// work follows gpu.p2p's in the child over every GPU (gpu/span_child.cpp), and runs only where no
/// other process uses those GPUs: NCCL's own buffers are beyond gpucheck's budget (rule
/// nccl_on_idle_gpus).

#include <nlohmann/json_fwd.hpp>

#include <span>
#include <vector>

#include "gpu_checks/gpu_check.hpp"

namespace gpucheck::gpu_checks {
/// Its payload is written and read by protocol/payloads.hpp's own functions.
template <>
struct PayloadCodec<protocol::NcclPayload>
    : CodecOf<protocol::NcclPayload, &protocol::write_nccl, &protocol::read_nccl> {};
} // namespace gpucheck::gpu_checks

namespace gpucheck::gpu_checks::nccl {

/// The NCCL work's own fields ("nccl": the library, the ranks, each size's figures).
using Payload = protocol::NcclPayload;

inline constexpr FindingCode k_wrong_sum{"nccl.wrong_sum"};

/// libnccl.so.2 and its entry points, before the child's session opens (work.cpp).
void load();
/// ncclCommInitAll over every GPU of the session, before the peer copies' gate; a failure is
/// reported by work() (work.cpp).
void prepare(gpu::PeerSession& session);
/// The all-reduce (work.cpp): its payload and its verifications (kind "nccl").
void work(gpu::PeerSession& session, const gpu::SpanStep& step, Output<Payload>& out);

/// The verdict on the NCCL work's payload (sizes, bus bandwidth); NCCL missing is a skip
/// (check.cpp).
checks::Judgement judge(const SystemSnapshot& snapshot, const Payload& nccl, bool contended,
                        std::vector<Metric>& metrics);
/// Its findings' entries (check.cpp).
std::span<const FindingSpec> findings();

} // namespace gpucheck::gpu_checks::nccl
