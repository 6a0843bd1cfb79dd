#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "checks/active/judging.hpp"
#include "checks/rules/long_level.hpp"
#include "engine/gpu_engine.hpp"
#include "protocol/payloads.hpp"

namespace gpucheck::checks {

namespace {
constexpr CheckInfo k_info{
    "gpu.burn", "GPU sustains full load correctly",
    "Long level: cuBLAS GEMMs in every type the GPU has (BF16, FP16, FP32 without TF32, FP64) "
    "on every GPU at once for --duration; each iteration compared bit for bit with the first and "
    "across GPUs of one model, NVML clocks, temperature, power, clock-event reasons and Xids "
    "watched; TFLOP/s against the model's measured reference and the other GPUs.",
    CheckKind::active, Level::long_};

/// Every GPU's burn compared with its model's reference and with the other GPUs of its model in
/// this run (as gpu.bandwidth compares siblings): findings and a note on each GPU's result.
void compare_peers(std::vector<CheckResult>& results, const CheckContext& context) {
  const GpuTargets targets = gpu_targets(context.snapshot, context.options.timeout);
  if (context.gpu_engine == nullptr || results.size() != targets.gpus.size()) {
    return;
  }
  std::vector<engine::TargetKey> keys;
  for (const GpuTarget& gpu : targets.gpus) {
    keys.push_back({gpu.ordinal, gpu.pci_bus_id});
  }
  std::vector<BurnPeer> peers;
  std::vector<size_t> slots; // results' index of each peer
  for (size_t i = 0; i < targets.gpus.size(); ++i) {
    const std::optional<engine::JobView> view =
        context.gpu_engine->result(engine::Work::burn, keys[i], keys);
    if (!view || !view->job.outcome || !view->job.outcome->ok()) {
      continue; // its own result says why
    }
    if (auto peer = burn_peer(targets.gpus[i].gpu_index, *view->job.outcome->payload,
                              !view->gpu.other_processes().empty())) {
      peers.push_back(std::move(*peer));
      slots.push_back(i);
    }
  }
  add_peer_verdicts(results, slots, peers);
}

std::vector<CheckResult> run(const CheckContext& context) {
  // Every GPU burns at once (engine::Work::burn, burn_together): one result per GPU, then the
  // comparison across them.
  std::vector<CheckResult> results = run_per_gpu(k_info, context, &judge_gpu_burn);
  compare_peers(results, context);
  return results;
}
} // namespace

Judgement judge_gpu_burn(const GpuTarget& gpu, const nlohmann::json& payload) {
  // No cuBLAS to burn with is no verdict on the GPU: a skip that says so.
  if (const Expected<protocol::ChildEnvelope> envelope = protocol::read_envelope(payload);
      envelope && envelope.value().failure && envelope.value().failure->stage == "load cuBLAS") {
    Judgement judgement;
    judgement.skipped = true;
    judgement.summary = fmt::format("GPU {}: no usable cuBLAS for the burn: {}", gpu.gpu_index,
                                    envelope.value().failure->message);
    return judgement;
  }
  if (std::optional<Judgement> setup = judge_kernel_setup(k_info.title, gpu, payload)) {
    return std::move(*setup);
  }
  const Expected<protocol::BurnReport> burn = protocol::read_burn(payload);
  if (!burn) {
    return unreadable_result(k_info.title, gpu, burn.error());
  }
  return judge_burn(gpu, burn.value());
}

CheckDef gpu_burn_check() {
  return {k_info, &run};
}

} // namespace gpucheck::checks
