// gpu.streams' judge, findings, metrics and registration.
#include <fmt/format.h>

#include "gpu_checks/registry.hpp"
#include "gpu_checks/streams/streams.hpp"

namespace gpucheck::gpu_checks::streams {

namespace {

constexpr FindingSpec k_findings[] = {
    {k_graph_mismatch, Severity::fail, "CUDA graph replay gave wrong results",
     "A CUDA graph captured from a stream and replayed did not produce what the same kernels "
     "produce when launched directly.",
     "GPU {0}: {1}: {2} of {3} words wrong, first at [{4}]: got {5}, expected {6}",
     "update the NVIDIA driver; if gpu.compute also fails, the GPU itself is at fault",
     where(k_where_gpu_index, "the graph run checked (steps, captured and replayed)", "words wrong",
           "words checked", "index of the first wrong word", "value read there", "value expected"),
     Drain::yes},
    {k_priority_ignored, Severity::warn, "stream priorities not honoured",
     "Streams created with the highest and lowest priority do not report those priorities.",
     "GPU {0}: streams created with priorities {1} and {2} report {3} and {4}",
     "update the NVIDIA driver; schedulers that rely on stream priorities will not work here",
     where(k_where_gpu_index, "highest stream priority asked for",
           "lowest stream priority asked for", "priority the high stream reports",
           "priority the low stream reports")},
};

constexpr MetricSpec k_metrics[] = {
    {"event_timed_kernel_us", "us"},
    {"graph_replay_us", "us"},
};

constexpr VerifySpec k_verify[] = {{k_verify_kind, k_graph_mismatch}};

constexpr GpuCheck<Payload> k_check{
    {"gpu.streams", "Streams, events and graphs work",
     "Creates streams at the highest and lowest priority, times a kernel with events, and "
     "replays a CUDA graph captured from a stream, checking its result against the CPU.",
     CheckKind::active},
    "streams",
    "gpu-streams",
    // Its priority streams and graph: what the child's peak measured above a bare context
    // (docs/performance.md, "Courtesy figures").
    16,
    176,
    16,
    true,
    &work,
    &judge,
    k_findings,
    k_metrics,
    k_verify,
};
} // namespace

checks::Judgement judge(const checks::GpuTarget& gpu, const Payload& payload,
                        const ChildReport& child) {
  const Priorities& p = payload.priorities;
  checks::Judgement judgement;
  if (p.high_stream != p.greatest || p.low_stream != p.least) {
    judgement.findings.push_back(make_finding(k_priority_ignored, gpu.gpu_index, gpu.gpu_index,
                                              p.greatest, p.least, p.high_stream, p.low_stream));
  }
  const bool verified = checks::all_verified(child.envelope);
  judgement.summary = fmt::format(
      "GPU {}: stream priorities {}..{}, event-timed kernel {:.1f} us, graph replay {}",
      gpu.gpu_index, p.least, p.greatest, payload.event_ms * 1e3, verified ? "verified" : "WRONG");
  return judgement;
}

} // namespace gpucheck::gpu_checks::streams

namespace gpucheck::gpu_checks {
Registration streams_registration() {
  return registration<streams::k_check>();
}
} // namespace gpucheck::gpu_checks
