#include <fmt/format.h>
#include <fmt/ranges.h>

#include "checks/checks.hpp"
#include "findings/catalog.hpp"

namespace gpucheck::checks {

namespace {
constexpr CheckInfo k_info{"env.nouveau", "nouveau not in the way",
                           "The open-source nouveau driver is neither bound to an NVIDIA device "
                           "nor loaded.",
                           CheckKind::passive};

std::vector<CheckResult> run(const CheckContext& context) {
  const KernelModuleInfo& module = context.snapshot.kernel_module;
  std::vector<std::string> bound;
  for (const PciDevice& device : module.pci_devices) {
    if (device.driver == "nouveau") {
      bound.push_back(device.bdf);
    }
  }
  if (!bound.empty()) {
    const std::string list = fmt::format("{}", fmt::join(bound, ", "));
    return {make_result(k_info, fmt::format("nouveau drives {}", list),
                        {make_finding(codes::k_env_nouveau_bound, std::nullopt, list)})};
  }
  if (module.nouveau_loaded) {
    return {make_result(k_info, "the nouveau module is loaded",
                        {make_finding(codes::k_env_nouveau_loaded, std::nullopt)})};
  }
  return {make_result(k_info, "nouveau is not loaded", {})};
}
} // namespace

CheckDef env_nouveau_check() {
  return {k_info, &run};
}

} // namespace gpucheck::checks
