#include "checks/checks.hpp"
#include "checks/rules/interconnect.hpp"
#include "checks/rules/per_gpu.hpp"

namespace gpucheck::checks {

namespace {
constexpr CheckInfo k_info{
    "gpu.fabric", "NVLink fabric",
    "On NVSwitch systems the GPU has registered with the NVLink fabric (Fabric Manager up) "
    "and shares one clique with the node's other GPUs. Passive, from NVML.",
    CheckKind::passive};

std::vector<CheckResult> run(const CheckContext& context) {
  const FabricCliques cliques = fabric_cliques(context.snapshot); // once for every GPU
  return for_each_gpu(
      k_info, context.snapshot,
      [&cliques](const CheckInfo& info, const GpuInfo& gpu, const SystemSnapshot& s) {
        return interconnect_result(info, judge_fabric(gpu, s, cliques), gpu.index);
      });
}

} // namespace

CheckDef gpu_fabric_check() {
  return {k_info, &run};
}

} // namespace gpucheck::checks
