// gpu.cudnn's judge, findings and registration.
#include <fmt/format.h>

#include "gpu_checks/cudnn/cudnn.hpp"
#include "gpu_checks/registry.hpp"

namespace gpucheck::gpu_checks::cudnn {

namespace {

constexpr FindingSpec k_findings[] = {
    {k_activation_mismatch, Severity::fail, "cuDNN activation gave wrong results",
     "cudnnActivationForward produced values outside the tolerance of a CPU reference. Either the "
     "cuDNN installation is broken (mixed sub-libraries, a build for another CUDA) or the GPU "
     "computes wrongly.",
     "cuDNN {1} on GPU {0}: {2} of {3} values wrong, first at [{4}]: got {5}, expected {6}",
     "check which cuDNN copy is loaded (gpucheck --only lib) and that its sub-libraries "
     "come from one directory; if gpu.compute also fails, the GPU itself is at fault",
     where(k_where_gpu_index, "the activation run (\"relu forward over N fp32 values\")",
           "values wrong", "values checked", "index of the first wrong value", "value read there",
           "value expected")},
    {k_conv_mismatch, Severity::fail, "cuDNN convolution gave wrong results",
     "cudnnConvolutionForward produced values outside the tolerance of a CPU reference computed "
     "in double precision.",
     "{1} on GPU {0}: {2} of {3} checked outputs wrong, first at [{4}]: got {5}, expected {6}",
     "check which cuDNN copy is loaded (gpucheck --only lib) and that its sub-libraries "
     "come from one directory; if gpu.compute also fails, the GPU itself is at fault",
     where(k_where_gpu_index, "the convolution (shape and algorithm)", "outputs wrong",
           "outputs checked", "index of the first wrong output", "value read there",
           "value expected")},
    {k_call_failed, Severity::fail, "cuDNN call failed",
     "A cuDNN call returned an error while running a small workload on the GPU.",
     "{1} failed on GPU {0} during {2}: status {3} ({4}){5}",
     "run with CUDNN_LOGLEVEL_DBG=2 CUDNN_LOGDEST_DBG=stderr for cuDNN's own log; check that the "
     "cuDNN build matches the CUDA major of the driver (gpucheck --only lib)",
     where(k_where_gpu_index, "the cuDNN call that failed", "the stage of the check it failed in",
           "its cuDNN status number", "the status's name", "\": \" and cuDNN's detail, or empty")},
    {k_heuristic_slow, Severity::info, "cuDNN heuristic picks a slow algorithm",
     "The algorithm cuDNN's heuristic chooses is much slower than the best one found by timing "
     "every algorithm, as frameworks do in benchmark mode.",
     "{1} on GPU {0}: the heuristic picks {2} ({3} ms), timing all algorithms finds {4} "
     "({5} ms), {6}x faster",
     "let the framework time the algorithms: torch.backends.cudnn.benchmark = True "
     "(TensorFlow does this by default)",
     where(k_where_gpu_index, "the convolution's shape", "algorithm the heuristic picks",
           "its time in ms", "fastest algorithm when all are timed", "its time in ms",
           "how many times faster that is")},
    {k_nondeterministic, Severity::fail, "cuDNN deterministic algorithm is not repeatable",
     "Two runs of a convolution algorithm that cuDNN declares deterministic gave different bits.",
     "{1} on GPU {0}: two runs of deterministic algorithm {2} differ (output hashes {3} and {4})",
     "the GPU or its memory is unstable: read driver.kernel_log's Xid findings and the ECC "
     "counters "
     "(nvidia-smi -q -d ECC); run dcgmi diag -r 3",
     where(k_where_gpu_index, "the convolution run twice", "the deterministic algorithm",
           "output hash of the first run", "output hash of the second run")},
};

/// The timed algorithm must beat the heuristic's by this factor before we mention it.
constexpr double k_heuristic_slow_factor = 1.5;

std::string version_text(int64_t version) {
  // 9.x: major*10000 + minor*100 + patch; 8.x: major*1000 + minor*100 + patch.
  if (version >= 90000) {
    return fmt::format("{}.{}.{}", version / 10000, version % 10000 / 100, version % 100);
  }
  return fmt::format("{}.{}.{}", version / 1000, version % 1000 / 100, version % 100);
}

// The convolutions' floors are checks/rules/expected_figures.cpp's (a datasheet figure per
// precision, not one per metric name).
constexpr MetricSpec k_metrics[] = {
    {"conv_<case>_tflops", "TFLOP/s"},
    {"relu_fp32_gbps", "GB/s"},
    {"host_rss_before_cudnn_mib", "MiB"},
};

constexpr VerifySpec k_verify[] = {
    {"cudnn_conv", k_conv_mismatch},
    {"cudnn_activation", k_activation_mismatch},
};

constexpr GpuCheck<Payload> k_check{
    .info = {"gpu.cudnn", "cuDNN convolutions and activations",
             "Runs cuDNN convolutions (FP32 NCHW, FP16 and BF16 NHWC) and activations (ReLU, "
             "sigmoid, tanh) against a CPU reference; reports the heuristic's and the timed "
             "algorithm choice of the legacy API and the fastest engine of the graph API, "
             "TFLOP/s, and checks that a deterministic algorithm repeats bit for bit.",
             CheckKind::active},
    .work = "cudnn",
    .mode = "gpu-cudnn",
    // The least: the small verified cases and their workspace; wanted: the large timed cases,
    // cuDNN's and cuBLASLt's modules, workspace.
    .min_mib = 96,
    .wanted_mib = 640,
    .prepare_mib = 64,
    .judge = &judge,
    .findings = k_findings,
    .metrics = k_metrics,
    .verify = k_verify,
    .lane = &lane_work,
    .lane_name = "cuDNN",
    .connections = k_connections,
    .own_child = &own_child,
};
} // namespace

std::span<const FindingSpec> findings() {
  return k_findings;
}

checks::Judgement judge(const checks::GpuTarget& gpu, const Payload& cudnn,
                        const ChildReport& child) {
  checks::Judgement judgement;
  const int index = gpu.gpu_index;
  if (cudnn.missing) {
    judgement.skipped = true;
    judgement.summary = fmt::format("GPU {}: cuDNN not loadable ({}); see the libraries checks",
                                    index, *cudnn.missing);
    return judgement;
  }
  if (const auto& failure = child.envelope.failure) {
    judgement.summary = fmt::format("GPU {}: failed during {}", index, failure->stage);
    return judgement;
  }
  const std::string version = version_text(cudnn.library ? cudnn.library->version : 0);
  if (const auto& f = cudnn.failure) {
    judgement.findings.push_back(make_finding(k_call_failed, index, index, f->call, f->stage,
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
      judgement.findings.push_back(make_finding(k_heuristic_slow, index, index, conv.shape,
                                                heuristic.algo, fmt::format("{:.3f}", heuristic_ms),
                                                found.algo, fmt::format("{:.3f}", found_ms),
                                                fmt::format("{:.1f}", heuristic_ms / found_ms)));
    }
  }
  if (const auto& d = cudnn.determinism; d && !d->equal) {
    judgement.findings.push_back(make_finding(k_nondeterministic, index, index, d->label, d->algo,
                                              d->hashes[0], d->hashes[1]));
  }
  judgement.summary = fmt::format(
      "GPU {}: cuDNN {}: convolutions and activations {}; {}", index, version,
      checks::all_verified(child.envelope) ? "match the CPU" : "DO NOT MATCH the CPU", rates);
  return judgement;
}

} // namespace gpucheck::gpu_checks::cudnn

namespace gpucheck::gpu_checks {
Registration cudnn_registration() {
  return registration<cudnn::k_check>();
}
} // namespace gpucheck::gpu_checks
