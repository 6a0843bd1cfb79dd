#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "checks/gpu_checks.hpp"
#include "findings/catalog.hpp"

namespace gpucheck::checks {

namespace {
constexpr CheckInfo k_info{
    "gpu.streams", "Streams, events and graphs work",
    "Creates streams at the highest and lowest priority, times a kernel with events, and "
    "replays a CUDA graph captured from a stream, checking its result against the CPU.",
    CheckKind::active};

std::vector<CheckResult> run(const CheckContext& context) {
  return run_per_gpu(k_info, context, &judge_gpu_streams);
}
} // namespace

Judgement judge_gpu_streams(const GpuTarget& gpu, const nlohmann::json& payload) {
  if (std::optional<Judgement> setup = judge_kernel_setup(k_info.title, gpu, payload)) {
    return std::move(*setup);
  }
  const Expected<protocol::StreamsPayload> streams = protocol::read_streams(payload);
  if (!streams) {
    return unreadable_result(k_info.title, gpu, streams.error());
  }
  const protocol::StreamPriorities& p = streams.value().priorities;
  Judgement judgement;
  if (p.high_stream != p.greatest || p.low_stream != p.least) {
    judgement.findings.push_back(make_finding(codes::k_gpu_stream_priority_ignored, gpu.gpu_index,
                                              gpu.gpu_index, p.greatest, p.least, p.high_stream,
                                              p.low_stream));
  }
  judgement.summary =
      fmt::format("GPU {}: stream priorities {}..{}, event-timed kernel {:.1f} us, graph replay {}",
                  gpu.gpu_index, p.least, p.greatest, streams.value().event_ms * 1e3,
                  all_verified(payload) ? "verified" : "WRONG");
  return judgement;
}

CheckDef gpu_streams_check() {
  return {k_info, &run};
}

} // namespace gpucheck::checks
