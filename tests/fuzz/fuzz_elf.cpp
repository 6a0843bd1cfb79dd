// ELF dynamic sections (src/probes/elf_soname.cpp): every library on the search path, and the
// frameworks' own objects, are read by the parent. Any bytes: no crash, no read past a buffer,
// and read_elf_soname agrees with read_elf_dynamic.
#include <cstdlib>

#include "fuzz_support.hpp"
#include "probes/elf_soname.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static gpucheck::fuzz::MemoryFile file;
  const std::string& path = file.write(gpucheck::fuzz::as_text(data, size));
  const std::optional<gpucheck::probes::ElfDynamic> dynamic =
      gpucheck::probes::read_elf_dynamic(path);
  const std::optional<std::string> soname = gpucheck::probes::read_elf_soname(path);
  if (soname != (dynamic ? dynamic->soname : std::nullopt)) {
    std::abort();
  }
  if (dynamic && dynamic->needed.size() > 256) {
    std::abort(); // the reader keeps at most 256 DT_NEEDED entries
  }
  return 0;
}
