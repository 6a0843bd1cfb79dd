#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "checks/active/judging.hpp"
#include "findings/catalog.hpp"

namespace gpucheck::checks {

namespace {
// Its findings, spelt here (CheckDef::findings adds them to the catalogue).
constexpr FindingCode k_cudnn_call_failed{"cudnn.call_failed"};
constexpr FindingCode k_cudnn_heuristic_slow{"cudnn.heuristic_slow"};
constexpr FindingCode k_cudnn_nondeterministic{"cudnn.nondeterministic"};

constexpr FindingSpec k_findings[] = {
    {k_cudnn_call_failed, Severity::fail, "cuDNN call failed",
     "A cuDNN call returned an error while running a small workload on the GPU.",
     "{1} failed on GPU {0} during {2}: status {3} ({4}){5}",
     "run with CUDNN_LOGLEVEL_DBG=2 CUDNN_LOGDEST_DBG=stderr for cuDNN's own log; check that the "
     "cuDNN build matches the CUDA major of the driver (gpucheck --only lib)",
     where(k_where_gpu_index, "the cuDNN call that failed", "the stage of the check it failed in",
           "its cuDNN status number", "the status's name", "\": \" and cuDNN's detail, or empty")},
    {k_cudnn_heuristic_slow, Severity::info, "cuDNN heuristic picks a slow algorithm",
     "The algorithm cuDNN's heuristic chooses is much slower than the best one found by timing "
     "every algorithm, as frameworks do in benchmark mode.",
     "{1} on GPU {0}: the heuristic picks {2} ({3} ms), timing all algorithms finds {4} "
     "({5} ms), {6}x faster",
     "let the framework time the algorithms: torch.backends.cudnn.benchmark = True "
     "(TensorFlow does this by default)",
     where(k_where_gpu_index, "the convolution's shape", "algorithm the heuristic picks",
           "its time in ms", "fastest algorithm when all are timed", "its time in ms",
           "how many times faster that is")},
    {k_cudnn_nondeterministic, Severity::fail, "cuDNN deterministic algorithm is not repeatable",
     "Two runs of a convolution algorithm that cuDNN declares deterministic gave different bits.",
     "{1} on GPU {0}: two runs of deterministic algorithm {2} differ (output hashes {3} and {4})",
     "the GPU or its memory is unstable: read driver.kernel_log's Xid findings and the ECC "
     "counters "
     "(nvidia-smi -q -d ECC); run dcgmi diag -r 3",
     where(k_where_gpu_index, "the convolution run twice", "the deterministic algorithm",
           "output hash of the first run", "output hash of the second run")},
};

std::span<const FindingSpec> own_findings() {
  return k_findings;
}

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
    judgement.findings.push_back(make_finding(k_cudnn_call_failed, index, index, f->call, f->stage,
                                              f->status, f->name,
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
    // The best rests on which algorithm cudnnFind ranked first, which varies from run to run
    // (FFT_TILING, WINOGRAD_NONFUSED, ...: docs/performance.md); the heuristic's algorithm is
    // the same on every GPU of a model, so siblings must find its figure low too.
    if (heuristic.tflops) {
      judgement.sibling_bases.emplace_back(
          "conv_" + conv.label + "_tflops",
          SiblingBasis{*heuristic.tflops, "cuDNN's heuristic algorithm " + heuristic.algo});
    }
    const double heuristic_ms = heuristic.ms.value_or(0.0);
    const double found_ms = found.ms.value_or(0.0);
    if (found_ms > 0.0 && heuristic_ms > k_heuristic_slow_factor * found_ms) {
      judgement.findings.push_back(make_finding(k_cudnn_heuristic_slow, index, index, conv.shape,
                                                heuristic.algo, fmt::format("{:.3f}", heuristic_ms),
                                                found.algo, fmt::format("{:.3f}", found_ms),
                                                fmt::format("{:.1f}", heuristic_ms / found_ms)));
    }
  }
  if (const auto& d = cudnn.determinism; d && !d->equal) {
    judgement.findings.push_back(make_finding(k_cudnn_nondeterministic, index, index, d->label,
                                              d->algo, d->hashes[0], d->hashes[1]));
  }
  judgement.summary =
      fmt::format("GPU {}: cuDNN {}: convolutions and activations {}; {}", index, version,
                  all_verified(payload) ? "match the CPU" : "DO NOT MATCH the CPU", rates);
  return judgement;
}

CheckDef gpu_cudnn_check() {
  return {k_info, &run, &own_findings};
}

} // namespace gpucheck::checks
