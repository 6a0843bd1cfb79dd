#pragma once
/// DT_SONAME of a 64-bit little-endian ELF shared object, read from its headers (a few small
/// reads; the file is not mapped or loaded).

#include <optional>
#include <string>

namespace gpucheck::probes {

/// The SONAME of the ELF file at `host_path`, or nullopt when the file is unreadable, not a
/// 64-bit little-endian ELF, or has no DT_SONAME.
std::optional<std::string> read_elf_soname(const std::string& host_path);

} // namespace gpucheck::probes
