#include <fmt/format.h>

#include <span>

#include "checks/checks.hpp"
#include "checks/rules/per_gpu.hpp"
#include "findings/catalog.hpp"

namespace gpucheck::checks {

namespace {
// Its findings, spelt here (CheckDef::findings adds them to the catalogue).
constexpr FindingCode k_compute_exclusive{"gpu.compute_exclusive"};
constexpr FindingCode k_compute_prohibited{"gpu.compute_prohibited"};

constexpr FindingSpec k_findings[] = {
    {k_compute_exclusive, Severity::warn, "Compute mode exclusive",
     "In an exclusive compute mode only one process (or thread) may hold a context on the GPU.",
     "GPU {0} is in compute mode {1}: only one process at a time can use it",
     "if no scheduler set it on purpose, restore shared use: sudo nvidia-smi -i {2} -c DEFAULT",
     where(k_where_gpu, "the compute mode (exclusive_process, exclusive_thread)",
           "GPU index, for nvidia-smi -i")},
    {k_compute_prohibited, Severity::fail, "Compute mode prohibited",
     "In compute mode Prohibited no CUDA context can be created on the GPU.",
     "GPU {0} is in compute mode Prohibited: no CUDA program can use it",
     "sudo nvidia-smi -i {1} -c DEFAULT", where(k_where_gpu, "GPU index, for nvidia-smi -i")},
};

std::span<const FindingSpec> own_findings() {
  return k_findings;
}

constexpr CheckInfo k_info{"gpu.compute_mode", "Compute mode",
                           "The GPU's compute mode lets processes create CUDA contexts (Default).",
                           CheckKind::passive};

CheckResult judge(const CheckInfo& info, const GpuInfo& gpu, const SystemSnapshot&) {
  if (!gpu.compute_mode) {
    return skip_result(info, "compute mode is not reported for this GPU", gpu.index);
  }
  const std::string& mode = *gpu.compute_mode;
  const std::string summary = fmt::format("compute mode {}", mode);
  if (mode == "prohibited") {
    return make_result(info, summary,
                       {make_finding(k_compute_prohibited, gpu.index, gpu_label(gpu), gpu.index)},
                       gpu.index);
  }
  if (mode == "exclusive_process" || mode == "exclusive_thread") {
    return make_result(
        info, summary,
        {make_finding(k_compute_exclusive, gpu.index, gpu_label(gpu), mode, gpu.index)}, gpu.index);
  }
  return make_result(info, summary, {}, gpu.index);
}

std::vector<CheckResult> run(const CheckContext& context) {
  return for_each_gpu(k_info, context.snapshot, &judge);
}
} // namespace

CheckDef gpu_compute_mode_check() {
  return {k_info, &run, &own_findings};
}

} // namespace gpucheck::checks
