#include <fmt/format.h>

#include "checks/checks.hpp"
#include "checks/rules/per_gpu.hpp"
#include "findings/catalog.hpp"

namespace gpucheck::checks {

namespace {
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
    return make_result(
        info, summary,
        {make_finding(codes::k_gpu_compute_prohibited, gpu.index, gpu_label(gpu), gpu.index)},
        gpu.index);
  }
  if (mode == "exclusive_process" || mode == "exclusive_thread") {
    return make_result(
        info, summary,
        {make_finding(codes::k_gpu_compute_exclusive, gpu.index, gpu_label(gpu), mode, gpu.index)},
        gpu.index);
  }
  return make_result(info, summary, {}, gpu.index);
}

std::vector<CheckResult> run(const CheckContext& context) {
  return for_each_gpu(k_info, context.snapshot, &judge);
}
} // namespace

CheckDef gpu_compute_mode_check() {
  return {k_info, &run};
}

} // namespace gpucheck::checks
