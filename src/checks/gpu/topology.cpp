#include "checks/checks.hpp"
#include "checks/rules/interconnect.hpp"
#include "checks/rules/per_gpu.hpp"

namespace gpucheck::checks {

namespace {
constexpr CheckInfo k_info{
    "gpu.topology", "GPU topology",
    "The path between every pair of GPUs (NVLink, PCIe switch, host bridge, across sockets) "
    "and NVML's peer-to-peer status, each GPU's NUMA node and CPUs. Passive, from NVML.",
    CheckKind::passive};

std::vector<CheckResult> run(const CheckContext& context) {
  return {interconnect_result(k_info, judge_topology(context.snapshot), std::nullopt)};
}

} // namespace

CheckDef gpu_topology_check() {
  return {k_info, &run};
}

} // namespace gpucheck::checks
