#include "probes/elf_soname.hpp"

#include <elf.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <vector>

namespace gpucheck::probes {

namespace {

class Fd {
public:
  explicit Fd(int fd) : m_fd(fd) {}
  ~Fd() {
    if (m_fd >= 0) {
      ::close(m_fd);
    }
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  [[nodiscard]] int get() const { return m_fd; }

private:
  int m_fd;
};

bool read_at(int fd, void* into, size_t size, uint64_t offset) {
  const ssize_t n = ::pread(fd, into, size, static_cast<off_t>(offset));
  return n == static_cast<ssize_t>(size);
}

/// What the dynamic section names, up to its DT_NULL: the string table's address and the
/// offsets in it of the soname, the run paths and the needed libraries (at most 256).
struct DynamicEntries {
  std::optional<uint64_t> strtab_vaddr;
  std::optional<uint64_t> soname;
  std::optional<uint64_t> runpath;
  std::optional<uint64_t> rpath;
  std::vector<uint64_t> needed;
};

DynamicEntries dynamic_entries(const std::vector<Elf64_Dyn>& dyns) {
  DynamicEntries e;
  for (const Elf64_Dyn& dyn : dyns) {
    if (dyn.d_tag == DT_NULL) {
      break;
    }
    switch (dyn.d_tag) {
    case DT_STRTAB:
      e.strtab_vaddr = dyn.d_un.d_ptr;
      break;
    case DT_SONAME:
      e.soname = dyn.d_un.d_val;
      break;
    case DT_RUNPATH:
      e.runpath = dyn.d_un.d_val;
      break;
    case DT_RPATH:
      e.rpath = dyn.d_un.d_val;
      break;
    case DT_NEEDED:
      if (e.needed.size() < 256) {
        e.needed.push_back(dyn.d_un.d_val);
      }
      break;
    default:
      break;
    }
  }
  return e;
}

} // namespace

std::optional<std::string> read_elf_soname(const std::string& host_path) {
  std::optional<ElfDynamic> dynamic = read_elf_dynamic(host_path);
  if (!dynamic) {
    return std::nullopt;
  }
  return std::move(dynamic->soname);
}

std::optional<ElfDynamic> read_elf_dynamic(const std::string& host_path) {
  const Fd fd(::open(host_path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) {
    return std::nullopt;
  }
  Elf64_Ehdr header{};
  if (!read_at(fd.get(), &header, sizeof header, 0) ||
      std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 || header.e_ident[EI_CLASS] != ELFCLASS64 ||
      header.e_ident[EI_DATA] != ELFDATA2LSB || header.e_phentsize != sizeof(Elf64_Phdr) ||
      header.e_phnum == 0 || header.e_phnum > 256) {
    return std::nullopt;
  }
  std::vector<Elf64_Phdr> phdrs(header.e_phnum);
  if (!read_at(fd.get(), phdrs.data(), phdrs.size() * sizeof(Elf64_Phdr), header.e_phoff)) {
    return std::nullopt;
  }
  const Elf64_Phdr* dynamic = nullptr;
  for (const Elf64_Phdr& ph : phdrs) {
    if (ph.p_type == PT_DYNAMIC) {
      dynamic = &ph;
    }
  }
  if (dynamic == nullptr || dynamic->p_filesz == 0 || dynamic->p_filesz > (1U << 20)) {
    return std::nullopt;
  }
  std::vector<Elf64_Dyn> dyns(dynamic->p_filesz / sizeof(Elf64_Dyn));
  if (!read_at(fd.get(), dyns.data(), dyns.size() * sizeof(Elf64_Dyn), dynamic->p_offset)) {
    return std::nullopt;
  }
  const DynamicEntries entries = dynamic_entries(dyns);
  const std::optional<uint64_t>& strtab_vaddr = entries.strtab_vaddr;
  ElfDynamic out;
  if (!strtab_vaddr) {
    return out;
  }
  // DT_STRTAB is a virtual address: map it to a file offset through the PT_LOAD that holds it.
  std::optional<uint64_t> strtab_offset;
  for (const Elf64_Phdr& ph : phdrs) {
    if (ph.p_type == PT_LOAD && *strtab_vaddr >= ph.p_vaddr &&
        *strtab_vaddr < ph.p_vaddr + ph.p_filesz) {
      strtab_offset = *strtab_vaddr - ph.p_vaddr + ph.p_offset;
      break;
    }
  }
  if (!strtab_offset) {
    return out;
  }
  auto string_at = [&](uint64_t offset) -> std::optional<std::string> {
    char buffer[4096] = {};
    const ssize_t n =
        ::pread(fd.get(), buffer, sizeof buffer - 1, static_cast<off_t>(*strtab_offset + offset));
    if (n <= 0) {
      return std::nullopt;
    }
    const size_t length = ::strnlen(buffer, static_cast<size_t>(n));
    if (length == 0 || length == static_cast<size_t>(n)) {
      return std::nullopt; // empty, or not terminated within the buffer
    }
    return std::string(buffer, length);
  };
  if (entries.soname) {
    out.soname = string_at(*entries.soname);
  }
  if (entries.runpath) {
    out.runpath = string_at(*entries.runpath);
  }
  if (entries.rpath) {
    out.rpath = string_at(*entries.rpath);
  }
  for (const uint64_t offset : entries.needed) {
    if (std::optional<std::string> name = string_at(offset)) {
      out.needed.push_back(std::move(*name));
    }
  }
  return out;
}

} // namespace gpucheck::probes
