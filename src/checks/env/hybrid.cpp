// env.hybrid_graphics (F42): a laptop's integrated GPU beside the NVIDIA one (Optimus/PRIME),
// where the distribution's PRIME profile, bbswitch or a module blacklist can switch the NVIDIA
// GPU off, and "No devices were found" follows. A GPU that sleeps between uses (runtime power
// management with the nvidia driver bound) is normal and never a finding.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <span>

#include "checks/checks.hpp"
#include "findings/catalog.hpp"

namespace gpucheck::checks {

namespace {
// Its findings, spelt here (CheckDef::findings adds them to the catalogue).
constexpr FindingCode k_env_dgpu_switched_off{"env.dgpu_switched_off"};

constexpr FindingSpec k_findings[] = {
    {k_env_dgpu_switched_off, Severity::fail, "hybrid graphics switched the NVIDIA GPU off",
     "This machine has an integrated GPU beside the NVIDIA one (Optimus, PRIME). The "
     "distribution's PRIME profile 'intel', bbswitch or a modprobe blacklist switched the NVIDIA "
     "GPU off, so the driver does not see it: nvidia-smi says 'No devices were found' and CUDA "
     "finds no device or fails with an unknown error.",
     "{0} is switched off beside the integrated GPU {1}: {2}",
     "select the NVIDIA GPU: sudo prime-select nvidia (or on-demand, never intel) and reboot; "
     "remove NVIDIA blacklist lines from /etc/modprobe.d and rebuild the initramfs; where the "
     "BIOS offers it, choose hybrid or discrete graphics. In on-demand mode the first CUDA call "
     "waits while the GPU wakes",
     where("the NVIDIA GPU (its PCI address)", "the integrated GPU(s)",
           "what switches the NVIDIA GPU off (PRIME profile, bbswitch, blacklisted module)")},
};

std::span<const FindingSpec> own_findings() {
  return k_findings;
}

constexpr CheckInfo k_info{"env.hybrid_graphics", "hybrid graphics leave the NVIDIA GPU on",
                           "On a machine with an integrated GPU beside the NVIDIA one (Optimus, "
                           "PRIME), the PRIME profile, bbswitch and modprobe blacklists do not "
                           "switch the NVIDIA GPU off.",
                           CheckKind::passive};

std::string vendor_name(const std::string& entry) {
  if (entry.ends_with("0x8086")) {
    return entry.substr(0, entry.find(' ')) + " (Intel)";
  }
  if (entry.ends_with("0x1002")) {
    return entry.substr(0, entry.find(' ')) + " (AMD)";
  }
  return entry;
}

std::vector<CheckResult> run(const CheckContext& context) {
  const KernelModuleInfo& module = context.snapshot.kernel_module;
  const bool markers = module.prime_profile.has_value() || module.bbswitch.has_value();
  if (module.integrated_gpus.empty() || (module.pci_devices.empty() && !markers)) {
    return {skip_result(k_info, "no integrated GPU beside an NVIDIA one: not hybrid graphics")};
  }
  std::vector<std::string> integrated;
  std::transform(module.integrated_gpus.begin(), module.integrated_gpus.end(),
                 std::back_inserter(integrated), &vendor_name);
  const std::string igpu = fmt::format("{}", fmt::join(integrated, ", "));
  std::vector<std::string> why_off;
  if (module.prime_profile && *module.prime_profile == "off") {
    why_off.push_back("the PRIME profile is 'intel' (/etc/prime-discrete says off)");
  }
  if (module.bbswitch && module.bbswitch->find("OFF") != std::string::npos) {
    why_off.push_back(
        fmt::format("bbswitch powered it off (/proc/acpi/bbswitch: {})", *module.bbswitch));
  }
  const bool bound = std::any_of(module.pci_devices.begin(), module.pci_devices.end(),
                                 [](const PciDevice& d) { return d.driver == "nvidia"; });
  if (!bound && !module.nvidia_loaded && !module.modprobe_blacklist.empty()) {
    why_off.push_back(
        fmt::format("the nvidia module is blacklisted ({})", module.modprobe_blacklist.front()));
  }
  std::vector<std::string> nvidia;
  for (const PciDevice& d : module.pci_devices) {
    nvidia.push_back(d.bdf);
  }
  const std::string dgpu =
      nvidia.empty() ? "the NVIDIA GPU" : fmt::format("NVIDIA {}", fmt::join(nvidia, ", "));
  if (!why_off.empty()) {
    return {make_result(k_info, fmt::format("{} is switched off beside {}", dgpu, igpu),
                        {make_finding(k_env_dgpu_switched_off, std::nullopt, dgpu, igpu,
                                      fmt::format("{}", fmt::join(why_off, "; ")))})};
  }
  // A GPU that sleeps between uses (RTD3, the on-demand profile) wakes on the first CUDA call.
  const bool sleeping =
      bound &&
      std::any_of(module.pci_devices.begin(), module.pci_devices.end(), [](const PciDevice& d) {
        return d.runtime_status == "suspended" || d.power_state == "D3cold";
      });
  return {make_result(
      k_info,
      fmt::format("{} beside {}{}{}", dgpu, igpu,
                  module.prime_profile ? fmt::format(", PRIME profile {}", *module.prime_profile)
                                       : std::string(),
                  sleeping ? "; it sleeps between uses and wakes on the first CUDA call (a "
                             "delay, not a fault)"
                           : ""),
      {})};
}
} // namespace

CheckDef env_hybrid_graphics_check() {
  return {k_info, &run, &own_findings};
}

} // namespace gpucheck::checks
