#include <fmt/format.h>
#include <fmt/ranges.h>

#include <span>

#include "checks/checks.hpp"
#include "findings/catalog.hpp"

namespace gpucheck::checks {

namespace {
// Its findings, spelt here (CheckDef::findings adds them to the catalogue).
constexpr FindingCode k_env_nouveau_loaded{"env.nouveau_loaded"};

constexpr FindingSpec k_findings[] = {
    {k_env_nouveau_loaded, Severity::warn, "nouveau module loaded",
     "The nouveau module is loaded; it can take the GPU at the next boot or module reload.",
     "the nouveau module is loaded (no NVIDIA device is bound to it now)",
     "blacklist nouveau (write 'blacklist nouveau' and 'options nouveau modeset=0' to "
     "/etc/modprobe.d/blacklist-nouveau.conf), rebuild the initramfs (sudo update-initramfs -u, "
     "or sudo dracut -f), and reboot"},
};

std::span<const FindingSpec> own_findings() {
  return k_findings;
}

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
                        {make_finding(k_env_nouveau_loaded, std::nullopt)})};
  }
  return {make_result(k_info, "nouveau is not loaded", {})};
}
} // namespace

CheckDef env_nouveau_check() {
  return {k_info, &run, &own_findings};
}

} // namespace gpucheck::checks
