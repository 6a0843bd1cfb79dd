#pragma once
/// gpu.streams: the tuning features frameworks rely on. Streams with priorities exist and report
/// the priority they were given, an event pair times a kernel, and a CUDA graph captured from a
/// stream replays with the right result.

#include <nlohmann/json.hpp>

#include "findings/codes.hpp"
#include "gpu_checks/gpu_check.hpp"

namespace gpucheck::gpu_checks::streams {

/// The priority range and what the two streams created at its ends report.
struct Priorities {
  int least = 0;
  int greatest = 0;
  int high_stream = 0; ///< the priority the stream created at `greatest` reports
  int low_stream = 0;  ///< the priority the stream created at `least` reports
  bool operator==(const Priorities&) const = default;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Priorities, least, greatest, high_stream, low_stream)

struct Payload {
  Priorities priorities;
  double event_ms = 0.0; ///< the event-timed kernel
  bool operator==(const Payload&) const = default;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Payload, priorities, event_ms)

inline constexpr FindingCode k_priority_ignored{"gpu.stream_priority_ignored"};
inline constexpr FindingCode k_graph_mismatch{"gpu.graph_mismatch"};

/// The verification kind of the graph's replayed result.
inline constexpr std::string_view k_verify_kind = "graph";

/// The child's work (work.cpp).
void work(gpu::DeviceSession& session, const gpu::KernelModule& module, Output<Payload>& out);
/// The judge (check.cpp).
checks::Judgement judge(const checks::GpuTarget& gpu, const Payload& payload,
                        const ChildReport& child);

} // namespace gpucheck::gpu_checks::streams
