#pragma once
/// Parsers for the host description files: os-release, /proc/cpuinfo, /proc/meminfo.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gpucheck::probes {

/// PRETTY_NAME from an os-release text (quotes removed), falling back to NAME + VERSION;
/// empty when neither is present.
std::string parse_os_release_pretty_name(std::string_view text);

struct CpuSummary {
  std::string model; ///< "model name" (x86), else "Model"/"Hardware"/"CPU part" (Arm)
  int count = 0;     ///< number of "processor" entries

  bool operator==(const CpuSummary&) const = default;
};

/// Model and logical CPU count from a /proc/cpuinfo text.
CpuSummary parse_cpuinfo(std::string_view text);

/// MemTotal in bytes from a /proc/meminfo text ("MemTotal: 131821412 kB"), or nullopt.
std::optional<uint64_t> parse_meminfo_total_bytes(std::string_view text);

} // namespace gpucheck::probes
