#include "checks/checks.hpp"
#include "checks/interconnect_rules.hpp"
#include "checks/per_gpu.hpp"

namespace gpucheck::checks {

namespace {
constexpr CheckInfo k_info{
    "gpu.fabric", "NVLink fabric",
    "On NVSwitch systems the GPU has registered with the NVLink fabric (Fabric Manager up) "
    "and shares one clique with the node's other GPUs. Passive, from NVML.",
    CheckKind::passive};

CheckResult to_result(const CheckInfo& info, InterconnectVerdict verdict, std::optional<int> gpu) {
  if (verdict.skip) {
    return skip_result(info, *verdict.skip, gpu);
  }
  CheckResult result = make_result(info, verdict.summary, std::move(verdict.findings), gpu);
  result.metrics = std::move(verdict.metrics);
  return result;
}

CheckResult judge(const CheckInfo& info, const GpuInfo& gpu, const SystemSnapshot& s) {
  return to_result(info, judge_fabric(gpu, s), gpu.index);
}

std::vector<CheckResult> run(const CheckContext& context) {
  return for_each_gpu(k_info, context.snapshot, &judge);
}

} // namespace

CheckDef gpu_fabric_check() {
  return {k_info, &run};
}

} // namespace gpucheck::checks
