#pragma once
/// Parser for the NVIDIA kernel module's version banner (/proc/driver/nvidia/version).

#include <optional>
#include <string>
#include <string_view>

namespace gpucheck::probes {

struct NvrmVersion {
  std::string version; ///< "580.159.04"
  std::string flavor;  ///< "open" or "proprietary"

  bool operator==(const NvrmVersion&) const = default;
};

/// Parse the "NVRM version:" line of /proc/driver/nvidia/version, e.g.
/// "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build ..." (open)
/// or "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.129.03  Thu Oct 19 ..." (proprietary).
/// The text may hold several lines; nullopt when no NVRM line with a version is found.
std::optional<NvrmVersion> parse_nvrm_version(std::string_view text);

/// A driver version like "580.159.04" or "470.42": digits and dots, first part 3 digits or more.
bool looks_like_driver_version(std::string_view word);

} // namespace gpucheck::probes
