#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include <span>

#include "checks/checks.hpp"
#include "checks/rules/per_gpu.hpp"
#include "findings/catalog.hpp"

namespace gpucheck::checks {

namespace {
// Its findings, spelt here (CheckDef::findings adds them to the catalogue).
constexpr FindingCode k_pcie_width_degraded{"gpu.pcie_width_degraded"};

constexpr FindingSpec k_findings[] = {
    {k_pcie_width_degraded, Severity::warn, "PCIe link narrower than maximum",
     "The PCIe link trained to fewer lanes than the GPU and slot support (slot wiring, riser, "
     "dirty contacts); host-device copies are slower.",
     "GPU {0} runs its PCIe link at x{1}, below its maximum x{2} (generation {3} of {4})",
     "reseat the card in a full x16 slot, remove risers/extenders, check the slot's lane "
     "bifurcation in the BIOS; if the slot only offers x{1}, accept it",
     where(k_where_gpu, "current PCIe link width", "the GPU's maximum width",
           "current PCIe generation", "the GPU's maximum generation")},
};

std::span<const FindingSpec> own_findings() {
  return k_findings;
}

constexpr CheckInfo k_info{
    "gpu.pcie_link", "PCIe link width",
    "The GPU's PCIe link runs at its maximum width. A generation below the maximum is normal "
    "power saving at idle and is not flagged.",
    CheckKind::passive};

/// "00000000:3B:00.0" and "0000:3b:00.0" name the same function: compare bus:device.function
/// and the domain as numbers.
std::string normalized_bdf(std::string_view bdf) {
  std::string text(bdf);
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const std::size_t colon = text.find(':');
  if (colon == std::string::npos) {
    return text;
  }
  std::string domain = text.substr(0, colon);
  domain.erase(0, std::min(domain.find_first_not_of('0'), domain.size()));
  return domain + text.substr(colon);
}

const PciDevice* sysfs_device(const SystemSnapshot& s, const GpuInfo& gpu) {
  if (gpu.pci_bus_id.empty()) {
    return nullptr;
  }
  const std::string wanted = normalized_bdf(gpu.pci_bus_id);
  for (const PciDevice& device : s.kernel_module.pci_devices) {
    if (normalized_bdf(device.bdf) == wanted) {
      return &device;
    }
  }
  return nullptr;
}

std::string gen_text(std::optional<int> gen) {
  return gen ? std::to_string(*gen) : std::string("?");
}

CheckResult judge(const CheckInfo& info, const GpuInfo& gpu, const SystemSnapshot& s) {
  std::optional<int> width = gpu.pcie_width_current;
  std::optional<int> width_max = gpu.pcie_width_max;
  if (!width || !width_max) {
    // NVML did not say; the kernel's view of the same link is as good.
    if (const PciDevice* device = sysfs_device(s, gpu)) {
      width = device->current_link_width;
      width_max = device->max_link_width;
    }
  }
  if (!width || !width_max || *width_max <= 0) {
    return skip_result(info, "the PCIe link width is not reported for this GPU", gpu.index);
  }
  const std::string summary =
      fmt::format("PCIe generation {} of {}, width x{} of x{}", gen_text(gpu.pcie_gen_current),
                  gen_text(gpu.pcie_gen_max), *width, *width_max);
  if (*width < *width_max) {
    return make_result(
        info, summary,
        {make_finding(k_pcie_width_degraded, gpu.index, gpu_label(gpu), *width, *width_max,
                      gen_text(gpu.pcie_gen_current), gen_text(gpu.pcie_gen_max))},
        gpu.index);
  }
  return make_result(info, summary, {}, gpu.index);
}

std::vector<CheckResult> run(const CheckContext& context) {
  return for_each_gpu(k_info, context.snapshot, &judge);
}
} // namespace

CheckDef gpu_pcie_link_check() {
  return {k_info, &run, &own_findings};
}

} // namespace gpucheck::checks
