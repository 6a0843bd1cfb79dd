#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "checks/active/judging.hpp"
#include "findings/catalog.hpp"

namespace gpucheck::checks {

namespace {
constexpr CheckInfo k_info{
    "gpu.cudnn", "cuDNN convolutions and activations",
    "Runs cuDNN convolutions (FP32 NCHW, FP16 and BF16 NHWC) and activations (ReLU, sigmoid, "
    "tanh) against a CPU reference; reports the heuristic's and the timed algorithm choice of the "
    "legacy API and the fastest engine of the graph API, TFLOP/s, and checks that a deterministic "
    "algorithm repeats bit for bit.",
    CheckKind::active};

/// The timed algorithm must beat the heuristic's by this factor before we mention it.
constexpr double k_heuristic_slow_factor = 1.5;

std::string version_text(int64_t version) {
  // 9.x: major*10000 + minor*100 + patch; 8.x: major*1000 + minor*100 + patch.
  if (version >= 90000) {
    return fmt::format("{}.{}.{}", version / 10000, version % 10000 / 100, version % 100);
  }
  return fmt::format("{}.{}.{}", version / 1000, version % 1000 / 100, version % 100);
}

std::vector<CheckResult> run(const CheckContext& context) {
  return run_per_gpu(k_info, context, &judge_gpu_cudnn);
}
} // namespace

Judgement judge_gpu_cudnn(const GpuTarget& gpu, const nlohmann::json& payload) {
  Judgement judgement;
  const int index = gpu.gpu_index;
  const Expected<protocol::CudnnPayload> read = protocol::read_cudnn(payload);
  if (!read) {
    return unreadable_result(k_info.title, gpu, read.error());
  }
  const protocol::CudnnPayload& cudnn = read.value();
  if (cudnn.missing) {
    judgement.skipped = true;
    judgement.summary = fmt::format("GPU {}: cuDNN not loadable ({}); see the libraries checks",
                                    index, *cudnn.missing);
    return judgement;
  }
  const Expected<protocol::ChildEnvelope> envelope = protocol::read_envelope(payload);
  if (!envelope) {
    judgement.summary = fmt::format("GPU {}: its result cannot be read", index);
    return judgement; // common_findings() has named the key
  }
  if (const auto& failure = envelope.value().failure) {
    judgement.summary = fmt::format("GPU {}: failed during {}", index, failure->stage);
    return judgement;
  }
  const std::string version = version_text(cudnn.library ? cudnn.library->version : 0);
  if (const auto& f = cudnn.failure) {
    judgement.findings.push_back(make_finding(codes::k_cudnn_call_failed, index, index, f->call,
                                              f->stage, f->status, f->name,
                                              f->detail.empty() ? "" : ": " + f->detail));
    judgement.summary = fmt::format("GPU {}: cuDNN {} failed", index, version);
    return judgement;
  }
  std::string rates;
  for (const protocol::ConvRecord& conv : cudnn.convolutions) {
    if (!conv.found) {
      continue;
    }
    const protocol::ConvAlgoTiming& found = *conv.found;
    const protocol::ConvAlgoTiming& heuristic = conv.heuristic;
    // The better of the legacy API's timed best and the graph API's (when it ran).
    const double best_tflops = conv.best ? conv.best->tflops : found.tflops.value_or(0.0);
    const bool graph_best = conv.best && conv.best->api == "graph";
    rates += fmt::format("{}{} {:.0f} TFLOP/s{}", rates.empty() ? "" : ", ", conv.label,
                         best_tflops, graph_best ? " (graph API)" : "");
    const double heuristic_ms = heuristic.ms.value_or(0.0);
    const double found_ms = found.ms.value_or(0.0);
    if (found_ms > 0.0 && heuristic_ms > k_heuristic_slow_factor * found_ms) {
      judgement.findings.push_back(make_finding(
          codes::k_cudnn_heuristic_slow, index, index, conv.shape, heuristic.algo,
          fmt::format("{:.3f}", heuristic_ms), found.algo, fmt::format("{:.3f}", found_ms),
          fmt::format("{:.1f}", heuristic_ms / found_ms)));
    }
  }
  if (const auto& d = cudnn.determinism; d && !d->equal) {
    judgement.findings.push_back(make_finding(codes::k_cudnn_nondeterministic, index, index,
                                              d->label, d->algo, d->hashes[0], d->hashes[1]));
  }
  judgement.summary =
      fmt::format("GPU {}: cuDNN {}: convolutions and activations {}; {}", index, version,
                  all_verified(payload) ? "match the CPU" : "DO NOT MATCH the CPU", rates);
  return judgement;
}

CheckDef gpu_cudnn_check() {
  return {k_info, &run};
}

} // namespace gpucheck::checks
