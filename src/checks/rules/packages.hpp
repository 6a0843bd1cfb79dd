#pragma once
/// How this machine installs and holds packages, for remedies that name a command: apt on Debian
/// and Ubuntu, dnf on Red Hat's family and Fedora, zypper on SUSE, and words that name no
/// package manager elsewhere (issue 35: "apt" on a Rocky node is wrong advice). Package names
/// are NVIDIA's own where its guides give them (docs/findings.md, "Remedies by distribution").

#include <string>
#include <string_view>

namespace gpucheck::checks {

enum class PackageTool { apt, dnf, zypper, other };

/// From os-release's PRETTY_NAME (SystemSnapshot::host.os).
PackageTool package_tool(std::string_view os);

/// Installing NVIDIA's driver on a machine that has none (no reboot advice: the caller's).
/// `open_modules`: false where a GPU on the bus is not known to run on the open kernel modules
/// (older than Turing): no command that installs nvidia-open is given.
std::string driver_install(std::string_view os, bool open_modules = true);

/// The driver's user-space CUDA library (libcuda.so.1) for `branch` ("580"); with NVML and
/// nvidia-smi too when `utilities`.
std::string driver_libraries_install(std::string_view os, const std::string& branch,
                                     bool utilities);

/// The headers and the rebuild of the kernel module for kernel release `kernel`.
std::string kernel_module_rebuild(std::string_view os, const std::string& kernel);

/// Holding the driver's packages at `branch` so that unattended upgrades do not replace the
/// libraries under a loaded module.
std::string driver_hold(std::string_view os, const std::string& branch);

/// cuDNN for CUDA `cuda_major` ("13").
std::string cudnn_install(std::string_view os, const std::string& cuda_major);

} // namespace gpucheck::checks
