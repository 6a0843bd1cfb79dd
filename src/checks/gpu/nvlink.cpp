#include "checks/checks.hpp"
#include "checks/rules/interconnect.hpp"
#include "checks/rules/per_gpu.hpp"

namespace gpucheck::checks {

namespace {
constexpr CheckInfo k_info{
    "gpu.nvlink", "NVLinks",
    "Every NVLink the GPU model has is up, and its error counters (CRC, replay, recovery) "
    "are zero. Passive, from NVML.",
    CheckKind::passive};

std::vector<CheckResult> run(const CheckContext& context) {
  const GpusByBus gpus(context.snapshot); // once for every GPU's links
  return for_each_gpu(k_info, context.snapshot,
                      [&gpus](const CheckInfo& info, const GpuInfo& gpu, const SystemSnapshot& s) {
                        return interconnect_result(info, judge_nvlink(gpu, s, gpus), gpu.index);
                      });
}

} // namespace

CheckDef gpu_nvlink_check() {
  return {k_info, &run};
}

} // namespace gpucheck::checks
