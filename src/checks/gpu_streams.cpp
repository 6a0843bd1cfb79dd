#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "checks/gpu_checks.hpp"
#include "gpucheck/finding_catalog.hpp"

namespace gpucheck::checks {

namespace {
constexpr CheckInfo k_info{
    "gpu.streams", "Streams, events and graphs work",
    "Creates streams at the highest and lowest priority, times a kernel with events, and "
    "replays a CUDA graph captured from a stream, checking its result against the CPU.",
    CheckKind::active};

Judgement judge(const GpuTarget& gpu, const nlohmann::json& payload) {
  if (std::optional<Judgement> setup = judge_kernel_setup(gpu, payload)) {
    return std::move(*setup);
  }
  Judgement judgement;
  const nlohmann::json& p = payload.value("priorities", nlohmann::json::object());
  const int least = p.value("least", 0);
  const int greatest = p.value("greatest", 0);
  const int high = p.value("high_stream", 0);
  const int low = p.value("low_stream", 0);
  if (high != greatest || low != least) {
    judgement.findings.push_back(make_finding("gpu.stream_priority_ignored", gpu.gpu_index,
                                              gpu.gpu_index, greatest, least, high, low));
  }
  judgement.summary =
      fmt::format("GPU {}: stream priorities {}..{}, event-timed kernel {:.1f} us, graph replay {}",
                  gpu.gpu_index, least, greatest, payload.value("event_ms", 0.0) * 1e3,
                  all_verified(payload) ? "verified" : "WRONG");
  return judgement;
}

std::vector<CheckResult> run(const CheckContext& context) {
  return run_per_gpu(k_info, context, &judge);
}
} // namespace

CheckDef gpu_streams_check() {
  return {k_info, &run};
}

} // namespace gpucheck::checks
