#include "checks/rules/packages.hpp"

#include <fmt/format.h>

namespace gpucheck::checks {

namespace {
constexpr std::string_view k_install_guide =
    "docs.nvidia.com/datacenter/tesla/driver-installation-guide";

bool has(std::string_view os, std::string_view word) {
  return os.find(word) != std::string_view::npos;
}
} // namespace

PackageTool package_tool(std::string_view os) {
  if (has(os, "Ubuntu") || has(os, "Debian")) {
    return PackageTool::apt;
  }
  if (has(os, "Red Hat") || has(os, "Rocky") || has(os, "AlmaLinux") || has(os, "Oracle Linux") ||
      has(os, "Amazon Linux") || has(os, "CentOS") || has(os, "Fedora") || has(os, "Azure Linux")) {
    return PackageTool::dnf;
  }
  if (has(os, "SUSE") || has(os, "SLES")) {
    return PackageTool::zypper;
  }
  return PackageTool::other;
}

// The dnf commands are NVIDIA's driver installation guide's (open kernel modules, drivers after
// 570).
std::string driver_install(std::string_view os, bool open_modules) {
  if (!open_modules && (has(os, "Fedora") || package_tool(os) == PackageTool::dnf)) {
    return fmt::format("add NVIDIA's repository and install the driver with its proprietary "
                       "kernel modules (not nvidia-open) as {} lists it for this release",
                       k_install_guide);
  }
  if (has(os, "Ubuntu")) {
    return "install the driver Ubuntu recommends for this GPU: sudo ubuntu-drivers install";
  }
  if (has(os, "Debian")) {
    return fmt::format("install Debian's driver (sudo apt install nvidia-driver, from non-free) "
                       "or NVIDIA's packages ({})",
                       k_install_guide);
  }
  if (has(os, "Fedora")) {
    return fmt::format("add NVIDIA's repository and sudo dnf install nvidia-open ({})",
                       k_install_guide);
  }
  if (package_tool(os) == PackageTool::dnf) {
    return fmt::format("add NVIDIA's repository, then sudo dnf module enable "
                       "nvidia-driver:open-dkms && sudo dnf install nvidia-open (release 10: sudo "
                       "dnf install nvidia-open alone; {})",
                       k_install_guide);
  }
  if (package_tool(os) == PackageTool::zypper) {
    return fmt::format("add NVIDIA's repository for this SUSE release and install the driver "
                       "with zypper as {} lists it",
                       k_install_guide);
  }
  return fmt::format("install the NVIDIA driver with this distribution's package manager, or "
                     "NVIDIA's repository or .run installer ({})",
                     k_install_guide);
}

std::string driver_libraries_install(std::string_view os, const std::string& branch,
                                     bool utilities) {
  switch (package_tool(os)) {
  case PackageTool::apt:
    return utilities
               ? fmt::format("sudo apt install libnvidia-compute-{0} nvidia-utils-{0}", branch)
               : fmt::format("sudo apt install libnvidia-compute-{}", branch);
  case PackageTool::dnf:
    // NVIDIA's RPM packages (its yum-packaging-nvidia-driver specs): libcuda in
    // nvidia-driver-cuda-libs, nvidia-smi in nvidia-driver-cuda; NVML in the former on recent
    // branches, in nvidia-driver-NVML on older ones (reference/failures.md, F28).
    return utilities ? "sudo dnf install nvidia-driver-cuda nvidia-driver-cuda-libs (older "
                       "branches: also nvidia-driver-NVML)"
                     : "sudo dnf install nvidia-driver-cuda-libs";
  case PackageTool::zypper:
  case PackageTool::other:
    break;
  }
  return fmt::format("reinstall the driver's user-space libraries for branch {} with the package "
                     "manager that installed the driver (the package names per distribution: {})",
                     branch, k_install_guide);
}

std::string kernel_module_rebuild(std::string_view os, const std::string& kernel) {
  switch (package_tool(os)) {
  case PackageTool::apt:
    return fmt::format("sudo apt install linux-headers-{} && sudo dkms autoinstall", kernel);
  case PackageTool::dnf:
    return fmt::format("sudo dnf install kernel-devel-{} kernel-headers && sudo dkms autoinstall",
                       kernel);
  case PackageTool::zypper:
    return "sudo zypper install kernel-default-devel && sudo dkms autoinstall";
  case PackageTool::other:
    break;
  }
  return fmt::format("install the headers for kernel {} and run sudo dkms autoinstall", kernel);
}

std::string driver_hold(std::string_view os, const std::string& branch) {
  switch (package_tool(os)) {
  case PackageTool::apt:
    return "sudo apt-mark hold on the driver's packages";
  case PackageTool::dnf:
    // NVIDIA's guide locks a branch this way (RHEL 10, Fedora; RHEL 8 and 9 use the module
    // stream nvidia-driver:<branch>-open).
    return fmt::format("sudo dnf versionlock add '*nvidia*{}*'", branch);
  case PackageTool::zypper:
    return "sudo zypper addlock on the driver's packages";
  case PackageTool::other:
    break;
  }
  return "hold the driver's packages in the package manager";
}

std::string cudnn_install(std::string_view os, const std::string& cuda_major) {
  if (package_tool(os) == PackageTool::apt) {
    return fmt::format("sudo apt install libcudnn9-cuda-{0} (NVIDIA's repository) or pip install "
                       "nvidia-cudnn-cu{0}",
                       cuda_major);
  }
  return fmt::format("cuDNN 9 for CUDA {0} from NVIDIA's repository for this distribution "
                     "(docs.nvidia.com/deeplearning/cudnn/installation) or pip install "
                     "nvidia-cudnn-cu{0}",
                     cuda_major);
}

} // namespace gpucheck::checks
