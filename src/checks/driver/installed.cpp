#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "checks/checks.hpp"
#include "checks/driver/facts.hpp"
#include "checks/rules/packages.hpp"
#include "checks/rules/probe_failure.hpp"
#include "compat/lookup.hpp"
#include "compat/matrix.hpp"
#include "findings/catalog.hpp"

namespace gpucheck::checks {

namespace {
constexpr CheckInfo k_info{"driver.installed", "NVIDIA driver installed",
                           "An NVIDIA kernel module or driver library is present.",
                           CheckKind::passive};

/// "R580 for Maxwell, Pascal and Volta; R470 for Kepler; R390 for Fermi": each architecture's
/// last driver branch, newest first, from the matrix.
std::string last_branches_text(const compat::Matrix& matrix) {
  std::vector<std::pair<int, std::vector<std::string>>> branches;
  for (const compat::ComputeCapability& cc : matrix.compute_capabilities) {
    if (!cc.last_driver_branch) {
      continue;
    }
    auto it = std::find_if(branches.begin(), branches.end(),
                           [&](const auto& b) { return b.first == *cc.last_driver_branch; });
    if (it == branches.end()) {
      branches.push_back({*cc.last_driver_branch, {}});
      it = std::prev(branches.end());
    }
    if (std::find(it->second.begin(), it->second.end(), cc.arch) == it->second.end()) {
      it->second.push_back(cc.arch);
    }
  }
  std::sort(branches.begin(), branches.end(),
            [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<std::string> parts;
  for (const auto& [branch, archs] : branches) {
    std::string names;
    for (size_t i = 0; i < archs.size(); ++i) {
      names += (i == 0 ? "" : i + 1 == archs.size() ? " and " : ", ") + archs[i];
    }
    parts.push_back(fmt::format("R{} for {}", branch, names));
  }
  return fmt::format("{}", fmt::join(parts, "; "));
}

/// Which driver branch serves one GPU on the bus, from the matrix (issue 35): the driver list
/// of Turing-and-later GPUs names it, its architecture's first CUDA release gives the oldest
/// branch, and the long-term branch is named where it is new enough; a GPU not listed gets each
/// older architecture's last branch.
std::string branch_for_gpu(const PciDevice& gpu, const compat::Matrix& matrix) {
  const std::string id = gpu.device_id.starts_with("0x") ? gpu.device_id.substr(2) : gpu.device_id;
  const std::string& list_driver = matrix.pci_devices->driver.text;
  const compat::PciDeviceName* listed = compat::pci_device_name(matrix, gpu.device_id);
  if (listed == nullptr) {
    return fmt::format("PCI ID 10de:{} is not among the Turing-or-later GPUs driver {} lists: a "
                       "GPU older than Turing needs the proprietary kernel modules (not "
                       "nvidia-open) of its last branch ({}), a newer GPU a driver newer than {}",
                       id, list_driver, last_branches_text(matrix), list_driver);
  }
  const compat::GpuProduct* product = compat::gpu_by_name(matrix, listed->name);
  const compat::ComputeCapability* cc =
      product != nullptr ? compat::cc_info(matrix, product->cc) : nullptr;
  const compat::CudaRelease* first =
      cc != nullptr ? compat::ga_release(matrix, cc->first_cuda) : nullptr;
  const std::string listed_by =
      fmt::format("driver {} lists this GPU, open kernel modules included", list_driver);
  if (first == nullptr) {
    return fmt::format("{} (PCI ID 10de:{}): {}", listed->name, id, listed_by);
  }
  // The oldest branch: the one whose driver first ran the architecture's first CUDA release.
  const int oldest = first->linux_min_driver.value.major_number();
  const compat::DriverBranch* lts = nullptr;
  for (const compat::DriverBranch& b : matrix.driver_branches) {
    if (b.designation == "long_term_support" && b.branch >= oldest && b.end_of_life &&
        (lts == nullptr || *b.end_of_life > *lts->end_of_life)) {
      lts = &b;
    }
  }
  const std::string what = fmt::format("{} ({}, PCI ID 10de:{}) needs driver branch R{} or newer",
                                       listed->name, cc->arch, id, oldest);
  if (lts == nullptr) {
    return fmt::format("{} ({})", what, listed_by);
  }
  return fmt::format("{}: take R{} (long-term support until {}) or a newer branch ({})", what,
                     lts->branch, *lts->end_of_life, listed_by);
}

/// The branch advice for every kind of GPU on the bus ("" without the matrix's driver list), and
/// whether every one of them runs on the open kernel modules (is in that list).
struct BranchAdvice {
  std::string text;
  bool open_modules = true;
};

BranchAdvice branch_advice(const KernelModuleInfo& module, const compat::Matrix& matrix) {
  BranchAdvice advice;
  if (!matrix.pci_devices) {
    return advice;
  }
  std::vector<std::string> seen;
  std::vector<std::string> parts;
  for (const PciDevice* gpu : nvidia_gpu_functions(module)) {
    if (std::find(seen.begin(), seen.end(), gpu->device_id) == seen.end()) {
      seen.push_back(gpu->device_id);
      parts.push_back(branch_for_gpu(*gpu, matrix));
      advice.open_modules =
          advice.open_modules && compat::pci_device_name(matrix, gpu->device_id) != nullptr;
    }
  }
  advice.text = fmt::format("{}", fmt::join(parts, "; "));
  return advice;
}

/// The remedy for a machine with no NVIDIA driver, by situation (issue 35): nothing to install
/// where no GPU is on the bus, never a driver inside a container, Windows' driver under WSL2,
/// else the distribution's own way.
std::string missing_driver_remedy(const SystemSnapshot& s) {
  const bool gpu_on_bus = !nvidia_gpu_functions(s.kernel_module).empty();
  const std::string& kind = s.environment.container.kind;
  const bool container = !kind.empty() && kind != "none";
  if (s.environment.wsl) {
    return "install or update the NVIDIA driver on Windows, which serves WSL2 (its libraries "
           "appear in /usr/lib/wsl/lib); install no Linux NVIDIA driver inside the distribution";
  }
  if (!gpu_on_bus && container) {
    return "nothing to install: no NVIDIA GPU shows on this machine's PCI bus, and a driver is "
           "never installed inside a container; run the container on a node with a GPU, started "
           "with --gpus all (NVIDIA Container Toolkit) or a CDI device (--device "
           "nvidia.com/gpu=all)";
  }
  if (!gpu_on_bus) {
    return "nothing to install: no NVIDIA GPU is on this machine's PCI bus (a virtual machine "
           "shows one only when a GPU is passed through to it: check the instance type or the "
           "hypervisor's passthrough)";
  }
  if (container) {
    return "install the driver on the host, not in this container: the host's kernel has no "
           "nvidia module loaded; then start the container with --gpus all (NVIDIA Container "
           "Toolkit) or a CDI device (--device nvidia.com/gpu=all)";
  }
  const BranchAdvice branch = branch_advice(s.kernel_module, compat::active_matrix());
  return (branch.text.empty() ? "" : branch.text + "; ") +
         driver_install(s.host.os, branch.open_modules) + ", then reboot";
}

std::vector<CheckResult> run(const CheckContext& context) {
  const SystemSnapshot& s = context.snapshot;
  const KernelModuleInfo& module = s.kernel_module;
  if (module.proc_version_present) {
    return {make_result(k_info,
                        fmt::format("NVIDIA kernel module {} ({}) is loaded",
                                    module_version_text(module),
                                    module.flavor.value_or("flavor unknown")),
                        {})};
  }
  if (s.cuda.library.loaded || s.nvml.library.loaded) {
    return {make_result(k_info,
                        "NVIDIA user-space driver libraries are installed (kernel module: see "
                        "driver.kernel_module)",
                        {})};
  }
  if (s.cuda.failure) {
    // The library loaded far enough to crash: it exists, but whether it works is unknown.
    return {probe_failure_result(k_info, "CUDA driver probe (dlopen libcuda.so.1, cuInit)",
                                 *s.cuda.failure)};
  }
  const std::string why =
      s.cuda.library.error.empty() ? std::string("not found") : s.cuda.library.error;
  return {make_result(k_info, "no NVIDIA driver is installed",
                      {make_finding(codes::k_driver_missing, std::nullopt, why,
                                    pci_gpu_summary(module), missing_driver_remedy(s))})};
}
} // namespace

CheckDef driver_installed_check() {
  return {k_info, &run};
}

} // namespace gpucheck::checks
