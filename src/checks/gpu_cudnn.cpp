#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "checks/gpu_checks.hpp"
#include "gpucheck/finding_catalog.hpp"

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

Judgement judge(const GpuTarget& gpu, const nlohmann::json& payload) {
  Judgement judgement;
  const int index = gpu.gpu_index;
  if (payload.contains("cudnn_missing")) {
    judgement.skipped = true;
    judgement.summary = fmt::format("GPU {}: cuDNN not loadable ({}); see the libraries checks",
                                    index, payload.value("cudnn_missing", ""));
    return judgement;
  }
  if (payload.contains("failure")) {
    judgement.summary =
        fmt::format("GPU {}: failed during {}", index, payload["failure"].value("stage", "setup"));
    return judgement;
  }
  const nlohmann::json& lib = payload.value("cudnn", nlohmann::json::object());
  const std::string version = version_text(lib.value("version", int64_t{0}));
  if (payload.contains("cudnn_failure")) {
    const nlohmann::json& f = payload["cudnn_failure"];
    const std::string detail = f.value("detail", "");
    judgement.findings.push_back(make_finding(
        "cudnn.call_failed", index, index, f.value("call", ""), f.value("stage", ""),
        f.value("status", 0), f.value("name", ""), detail.empty() ? "" : ": " + detail));
    judgement.summary = fmt::format("GPU {}: cuDNN {} failed", index, version);
    return judgement;
  }
  std::string rates;
  for (const nlohmann::json& conv : payload.value("convolutions", nlohmann::json::array())) {
    if (!conv.contains("found")) {
      continue;
    }
    const nlohmann::json& found = conv["found"];
    const nlohmann::json& heuristic = conv["heuristic"];
    // The better of the legacy API's timed best and the graph API's (when it ran).
    const nlohmann::json& best = conv.contains("best") ? conv["best"] : found;
    rates += fmt::format("{}{} {:.0f} TFLOP/s{}", rates.empty() ? "" : ", ",
                         conv.value("label", ""), best.value("tflops", 0.0),
                         best.value("api", "") == "graph" ? " (graph API)" : "");
    const double heuristic_ms = heuristic.value("ms", 0.0);
    const double found_ms = found.value("ms", 0.0);
    if (found_ms > 0.0 && heuristic_ms > k_heuristic_slow_factor * found_ms) {
      judgement.findings.push_back(make_finding(
          "cudnn.heuristic_slow", index, index, conv.value("shape", ""),
          heuristic.value("algo", ""), fmt::format("{:.3f}", heuristic_ms), found.value("algo", ""),
          fmt::format("{:.3f}", found_ms), fmt::format("{:.1f}", heuristic_ms / found_ms)));
    }
  }
  if (payload.contains("determinism") && !payload["determinism"].value("equal", true)) {
    const nlohmann::json& d = payload["determinism"];
    const nlohmann::json hashes = d.value("hashes", nlohmann::json::array({"", ""}));
    judgement.findings.push_back(make_finding(
        "cudnn.nondeterministic", index, index, d.value("label", ""), d.value("algo", ""),
        hashes[0].get<std::string>(), hashes[1].get<std::string>()));
  }
  judgement.summary =
      fmt::format("GPU {}: cuDNN {}: convolutions and activations {}; {}", index, version,
                  all_verified(payload) ? "match the CPU" : "DO NOT MATCH the CPU", rates);
  return judgement;
}

std::vector<CheckResult> run(const CheckContext& context) {
  return run_per_gpu(k_info, context, &judge);
}
} // namespace

CheckDef gpu_cudnn_check() {
  return {k_info, &run};
}

} // namespace gpucheck::checks
