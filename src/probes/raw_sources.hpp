#pragma once
/// The raw texts a support bundle carries next to the report (gpucheck --bundle): what the
/// probes read, as read, so a support engineer can check gpucheck's reading of it.

#include <map>
#include <string>
#include <string_view>

#include "probes/sysroot.hpp"

namespace gpucheck::probes {

/// File name in the bundle -> text. Always these five entries; a source that cannot be read
/// holds one line saying why (never an error: the bundle is made anyway):
///   "proc-driver-nvidia-version.txt": /proc/driver/nvidia/version
///   "dmesg-nvidia.txt": kernel log lines about the NVIDIA driver (NVRM, Xid, nvidia, nouveau);
///       the live system's `dmesg` (often needs root), a fixture tree's /var/log/dmesg
///   "ldconfig-nvidia.txt": `ldconfig -p` lines of NVIDIA libraries (libcuda, libcudnn,
///   libnvidia-*, ...);
///       a fixture tree's /etc/ld.so.cache.txt
///   "nvidia-smi-q.txt", "lspci-vvv.txt": those programs' output on the live system
///       (probes/bundle_commands.hpp); under a fixture tree a line saying they were not run
std::map<std::string, std::string> collect_raw_sources(const Sysroot& root);

/// The lines of a kernel log that concern the NVIDIA driver, in order, each ending in '\n'.
std::string nvidia_kernel_log_lines(std::string_view log);

/// The lines of `ldconfig -p` output that name NVIDIA libraries, in order.
std::string nvidia_ldconfig_lines(std::string_view ldconfig_output);

} // namespace gpucheck::probes
