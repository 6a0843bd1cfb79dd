#pragma once
/// DT_SONAME, DT_NEEDED and DT_RUNPATH/DT_RPATH of a 64-bit little-endian ELF shared object, read
/// from its headers (a few small reads; the file is not mapped or loaded).

#include <optional>
#include <string>
#include <vector>

namespace gpucheck::probes {

/// The SONAME of the ELF file at `host_path`, or nullopt when the file is unreadable, not a
/// 64-bit little-endian ELF, or has no DT_SONAME.
std::optional<std::string> read_elf_soname(const std::string& host_path);

/// The dynamic-section strings the loader uses to find an object's dependencies.
struct ElfDynamic {
  std::optional<std::string> soname;
  std::vector<std::string> needed; ///< DT_NEEDED, in order
  std::optional<std::string>
      runpath; ///< DT_RUNPATH as written ("$ORIGIN/../../nvidia/cudnn/lib:...")
  std::optional<std::string> rpath; ///< DT_RPATH (ignored by the loader when DT_RUNPATH is set)
};

/// The dynamic section of the ELF file at `host_path`; nullopt when the file is unreadable, not a
/// 64-bit little-endian ELF, or has no dynamic section.
std::optional<ElfDynamic> read_elf_dynamic(const std::string& host_path);

} // namespace gpucheck::probes
