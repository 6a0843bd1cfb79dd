#pragma once
/// A minimal 64-bit little-endian ELF shared object with a dynamic section (DT_SONAME, DT_NEEDED,
/// DT_RUNPATH), for tests of the ELF reader and of library resolution. It cannot be loaded.

#include <string>
#include <vector>

namespace gpucheck::testing {

struct ElfSpec {
  std::string soname;              ///< "" = no DT_SONAME
  std::vector<std::string> needed; ///< DT_NEEDED entries
  std::string runpath;             ///< "" = no DT_RUNPATH
  std::string rpath;               ///< "" = no DT_RPATH
};

/// The bytes of such an object.
std::string make_elf_object(const ElfSpec& spec);

} // namespace gpucheck::testing
