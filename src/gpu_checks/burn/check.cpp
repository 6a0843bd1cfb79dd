// gpu.burn's judge, findings, metrics, comparison across GPUs and registration.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "engine/gpu_engine.hpp"
#include "findings/catalog.hpp"
#include "gpu_checks/burn/burn.hpp"
#include "gpu_checks/burn/rules.hpp"
#include "gpu_checks/registry.hpp"

namespace gpucheck::gpu_checks::burn {

namespace {

constexpr FindingSpec k_findings[] = {
    {k_gpus_disagree, Severity::fail, "GPUs of one model compute different bits",
     "Every GPU of the run multiplied the same input matrices. GPUs of one model, SM count and "
     "cuBLAS version compute the same bits from the same inputs, so a GPU whose result hash "
     "differs from the others' computes wrongly: silent data corruption that no error reports.",
     "GPU {0} ({1}): the {2} GEMM {3}^3 of the same inputs gave result hash {4}; {5}",
     "drain GPU {0} and the GPUs named; read their ECC counters and remapped rows (nvidia-smi -q "
     "-d ECC,ROW_REMAPPER), undo any overclock, run dcgmi diag -r 4 on them, and have the GPU "
     "that repeats the odd result replaced",
     where(k_where_gpu_index, "GPU model (name)", "GEMM type (bf16, fp16, fp32, fp64)",
           "matrix size N of the N^3 GEMM", "this GPU's result hash",
           "what the other GPUs gave, and whether this GPU is in the minority"),
     Drain::yes},
    {k_mismatch, Severity::fail, "GPU gives different results for the same GEMM",
     "During the burn every GEMM iteration multiplies the same inputs, so every result must equal "
     "the first one bit for bit. An iteration that differs is silent data corruption: the GPU "
     "computed wrongly under sustained load and nothing reported an error.",
     "GPU {0}: {1} GEMM {2}^3: {3} of {4} iterations differ bit for bit from the first, first in "
     "iteration {5} ({6} words differ)",
     "drain GPU {0}; read its ECC counters and remapped rows (nvidia-smi -q -d ECC,ROW_REMAPPER), "
     "undo any overclock, read gpu.burn's clocks and temperature; run dcgmi diag -r 4 and have the "
     "GPU replaced if it repeats",
     where(k_where_gpu_index, "GEMM type (bf16, fp16, fp32, fp64)", "matrix size N of the N^3 GEMM",
           "iterations that differ from the first", "iterations run",
           "the first iteration that differs", "words that differ in it"),
     Drain::yes},
    {k_outlier, Severity::warn, "one GPU computes slower than its siblings",
     "Among GPUs of one model in this run, this one's GEMM throughput under sustained load is "
     "clearly below the median of the others. Usual causes: a lower power limit, poor cooling, "
     "clocks held down, or a degraded GPU.",
     "GPU {0} ({1}): {2} GEMM {3}^3 median {4} TFLOP/s is {5}% of the median of the {6} of this "
     "model ({7} TFLOP/s); the floor is {8}%",
     "compare this GPU's clocks, temperature and power in gpu.burn's summary with the others'; "
     "check its power limit (nvidia-smi -q -d POWER), its application clocks (nvidia-smi -q -d "
     "CLOCK) and its cooling",
     where(k_where_gpu_index, "GPU model (name)", "GEMM type (bf16, fp16, fp32, fp64)",
           "matrix size N of the N^3 GEMM", "this GPU's median TFLOP/s",
           "that as a percentage of the others' median",
           "how many other GPUs of this model (\"3 other GPUs\")", "their median TFLOP/s",
           "the floor, in percent")},
    {k_slow, Severity::warn, "GPU computes slower than its model reaches",
     "The GPU's GEMM throughput under sustained load is clearly below what this model reaches "
     "(a measured reference, not the datasheet peak). Usual causes: a lower power limit, poor "
     "cooling, clocks held down, or a degraded GPU.",
     "GPU {0} ({1}): {2} GEMM {3}^3 median {4} TFLOP/s is {5}% of the {6} TFLOP/s this model "
     "reaches ({7}); the floor is {8}%",
     "read gpu.burn's clock summary and gpu.clocks; check the power limit (nvidia-smi -q -d "
     "POWER), the application clocks (nvidia-smi -q -d CLOCK) and the cooling; compare with the "
     "other GPUs of the node",
     where(k_where_gpu_index, "GPU model (name)", "GEMM type (bf16, fp16, fp32, fp64)",
           "matrix size N of the N^3 GEMM", "this GPU's median TFLOP/s",
           "that as a percentage of the model's figure", "TFLOP/s this model reaches",
           "where that figure comes from", "the floor, in percent")},
    {k_thermal, Severity::warn, "GPU slows down for heat under load",
     "Under sustained load the driver lowered the GPU's clocks to keep its temperature in "
     "bounds (SW thermal slowdown) for a noticeable part of the run: the GPU delivers less than "
     "it can, and a cooling fault can get worse.",
     "GPU {0}: SW thermal slowdown held the clocks down in {1}% of the burn's {2} NVML samples, "
     "from {3} s into it (up to {4} C); SM clock then {5} MHz, {6}",
     "check the GPU's fans and airflow, the inlet temperature, blanking panels and dust; compare "
     "the temperatures with the slowdown thresholds (nvidia-smi -q -d TEMPERATURE)",
     where(k_where_gpu_index, "share of the samples, in percent",
           "NVML samples taken during the burn", "seconds into the burn when it began",
           "highest temperature seen, in C", "SM clock when it began, in MHz",
           "the GPU's maximum SM clock (or the highest seen)")},
    {k_throttled_hw, Severity::fail, "hardware holds the GPU's clocks down under load",
     "Under sustained load a hardware reason held the GPU's clocks down: HW thermal slowdown "
     "(the board overheats), the power brake (an external signal from the PSU, chassis or BMC) "
     "or HW slowdown. A healthy GPU in a healthy chassis shows none of them at full load.",
     "GPU {0}: {1} held the clocks down in {2}% of the burn's {3} NVML samples, from {4} s into "
     "it; SM clock then {5} MHz, {6}",
     "HW thermal slowdown: check cooling (fans, airflow, inlet temperature, heat sink); power "
     "brake or HW slowdown: check the power cables, the PSUs and the BMC's power-brake signal. "
     "Watch `nvidia-smi -q -d PERFORMANCE` while the GPU is loaded, run dcgmi diag -r 3, and have "
     "the node serviced if it repeats",
     where(k_where_gpu_index,
           "the throttle reason (HW slowdown, HW thermal or power brake, with its NVML bit)",
           "share of the samples, in percent", "NVML samples taken during the burn",
           "seconds into the burn when it began", "SM clock when it began, in MHz",
           "the GPU's maximum SM clock (or the highest seen)")},
    {k_xid, Severity::fail, "Xid errors during the burn",
     "NVML delivered Xid events (the driver's error reports) for this GPU while it ran gpucheck's "
     "sustained load. Under load a faulty GPU, its memory or its link reports errors that an idle "
     "GPU does not.",
     "GPU {0}: {1} during the burn: {2}",
     "read each Xid's action in NVIDIA's catalogue ({3}) and the kernel log (`dmesg -T | grep -i "
     "xid`); drain the GPU, run dcgmi diag -r 3, and reset it or have it serviced as the "
     "catalogue says",
     where(k_where_gpu_index, "how many Xid events (\"2 Xid events\")",
           "the Xids, each with its time into the burn and meaning",
           "address of NVIDIA's Xid catalogue"),
     Drain::yes},
};

// Each GEMM type's floor is its model's measured reference (gpu.burn_slow), set from the typed
// report by add_peer_verdicts (rules.hpp), not a datasheet figure.
constexpr MetricSpec k_metrics[] = {
    {"burn_<type>_tflops", "TFLOP/s"},
    {"burn_max_temp_c", "C"},
    {"burn_max_power_w", "W"},
};

constexpr VerifySpec k_verify[] = {{k_verify_kind, std::nullopt}};

constexpr GpuCheck<Payload> k_check{
    .info = {"gpu.burn", "GPU sustains full load correctly",
             "Long level: cuBLAS GEMMs in every type the GPU has (BF16, FP16, FP32 without TF32, "
             "FP64) on every GPU at once for --duration; each iteration compared bit for bit with "
             "the first and across GPUs of one model, NVML clocks, temperature, power, "
             "clock-event reasons and Xids watched; TFLOP/s against the model's measured "
             "reference and the other GPUs.",
             CheckKind::active, Level::long_},
    .work = "burn",
    .mode = "gpu-burn",
    // It sizes itself to the GPU's free memory (not budgeted).
    .min_mib = 64,
    .wanted_mib = 64,
    .prepare_mib = 64,
    .needs_kernels = true,
    .run = &work,
    .judge = &judge,
    .findings = k_findings,
    .metrics = k_metrics,
    .verify = k_verify,
    .amend_setup = &amend_setup,
    .listed = Listed::before_long,
    .child = protocol::WorkChild::long_level,
    .alone = true,
    .phase = "burn",
    .together = true,
    .compare = &compare,
};
} // namespace

std::span<const FindingSpec> findings() {
  return k_findings;
}

void amend_setup(const checks::GpuTarget& gpu, const ChildReport& child, checks::Judgement& setup) {
  const std::optional<protocol::PayloadFailure>& failure = child.envelope.failure;
  if (failure && failure->stage == "load cuBLAS") {
    setup = checks::Judgement{};
    setup.skipped = true;
    setup.summary =
        fmt::format("GPU {}: no usable cuBLAS for the burn: {}", gpu.gpu_index, failure->message);
  }
}

checks::Judgement judge(const checks::GpuTarget& gpu, const Payload& report,
                        const ChildReport& /*child*/) {
  return judge_burn(gpu, report);
}

void compare(std::vector<CheckResult>& results, const CheckContext& context) {
  const checks::GpuTargets targets = checks::gpu_targets(context.snapshot, context.options.timeout);
  const std::optional<engine::Work> burn = engine::work_for_check(k_check.info.id);
  if (context.gpu_engine == nullptr || !burn || results.size() != targets.gpus.size()) {
    return;
  }
  std::vector<engine::TargetKey> keys;
  for (const checks::GpuTarget& gpu : targets.gpus) {
    keys.push_back({gpu.ordinal, gpu.pci_bus_id});
  }
  std::vector<BurnPeer> peers;
  std::vector<size_t> slots; // results' index of each peer
  for (size_t i = 0; i < targets.gpus.size(); ++i) {
    const std::optional<engine::JobView> view = context.gpu_engine->result(*burn, keys[i], keys);
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

} // namespace gpucheck::gpu_checks::burn

namespace gpucheck::gpu_checks {
Registration burn_registration() {
  return registration<burn::k_check>();
}
} // namespace gpucheck::gpu_checks
