#include "support/elf_writer.hpp"

#include <elf.h>

#include <cstring>

namespace gpucheck::testing {

std::string make_elf_object(const ElfSpec& spec) {
  // Layout: header, two program headers (PT_LOAD of the whole file, PT_DYNAMIC), the string
  // table, then the dynamic section. Virtual addresses equal file offsets.
  std::string strtab(1, '\0');
  auto add_string = [&](const std::string& text) {
    const size_t offset = strtab.size();
    strtab += text;
    strtab.push_back('\0');
    return offset;
  };
  std::vector<Elf64_Dyn> dyns;
  for (const std::string& needed : spec.needed) {
    dyns.push_back({DT_NEEDED, {add_string(needed)}});
  }
  if (!spec.soname.empty()) {
    dyns.push_back({DT_SONAME, {add_string(spec.soname)}});
  }
  if (!spec.runpath.empty()) {
    dyns.push_back({DT_RUNPATH, {add_string(spec.runpath)}});
  }
  if (!spec.rpath.empty()) {
    dyns.push_back({DT_RPATH, {add_string(spec.rpath)}});
  }
  const size_t strtab_offset = sizeof(Elf64_Ehdr) + 2 * sizeof(Elf64_Phdr);
  size_t dynamic_offset = strtab_offset + strtab.size();
  dynamic_offset = (dynamic_offset + 7) & ~size_t{7};
  dyns.push_back({DT_STRTAB, {strtab_offset}});
  dyns.push_back({DT_STRSZ, {strtab.size()}});
  dyns.push_back({DT_NULL, {0}});
  const size_t total = dynamic_offset + dyns.size() * sizeof(Elf64_Dyn);

  std::string bytes(total, '\0');
  Elf64_Ehdr header{};
  std::memcpy(header.e_ident, ELFMAG, SELFMAG);
  header.e_ident[EI_CLASS] = ELFCLASS64;
  header.e_ident[EI_DATA] = ELFDATA2LSB;
  header.e_ident[EI_VERSION] = EV_CURRENT;
  header.e_type = ET_DYN;
  header.e_machine = EM_X86_64;
  header.e_version = EV_CURRENT;
  header.e_phoff = sizeof(Elf64_Ehdr);
  header.e_ehsize = sizeof(Elf64_Ehdr);
  header.e_phentsize = sizeof(Elf64_Phdr);
  header.e_phnum = 2;
  std::memcpy(bytes.data(), &header, sizeof header);
  Elf64_Phdr load{};
  load.p_type = PT_LOAD;
  load.p_flags = PF_R;
  load.p_filesz = total;
  load.p_memsz = total;
  load.p_align = 0x1000;
  Elf64_Phdr dynamic{};
  dynamic.p_type = PT_DYNAMIC;
  dynamic.p_flags = PF_R;
  dynamic.p_offset = dynamic_offset;
  dynamic.p_vaddr = dynamic_offset;
  dynamic.p_paddr = dynamic_offset;
  dynamic.p_filesz = dyns.size() * sizeof(Elf64_Dyn);
  dynamic.p_memsz = dynamic.p_filesz;
  dynamic.p_align = 8;
  std::memcpy(bytes.data() + sizeof header, &load, sizeof load);
  std::memcpy(bytes.data() + sizeof header + sizeof load, &dynamic, sizeof dynamic);
  std::memcpy(bytes.data() + strtab_offset, strtab.data(), strtab.size());
  std::memcpy(bytes.data() + dynamic_offset, dyns.data(), dyns.size() * sizeof(Elf64_Dyn));
  return bytes;
}

} // namespace gpucheck::testing
