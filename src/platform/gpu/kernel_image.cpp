#include "platform/gpu/kernel_image.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <cstring>

namespace gpucheck::platform::gpu {

extern "C" {
// Defined by the assembler file that cmake/Kernels.cmake generates (.incbin of the fatbin).
extern const unsigned char gpucheck_fatbin_begin[]; // NOLINT(readability-identifier-naming)
extern const unsigned char gpucheck_fatbin_end[];   // NOLINT(readability-identifier-naming)
}

std::span<const std::byte> embedded_fatbin() {
  const auto size = static_cast<size_t>(gpucheck_fatbin_end - gpucheck_fatbin_begin);
  return {reinterpret_cast<const std::byte*>(gpucheck_fatbin_begin), // NOLINT
          size};
}

std::string to_string(const FatbinEntry& entry) {
  return fmt::format("{}_{}", entry.kind == FatbinEntry::Kind::sass ? "sm" : "compute", entry.arch);
}

namespace {
// Layout of the fatbin container as nvcc writes it (little-endian):
//   file header  : u32 magic, u16 version, u16 header_size, u64 payload_size
//   entry header : u16 kind (1 PTX, 2 ELF), u16 flags, u32 header_size, u64 payload_size,
//                  u32 compressed_size, u32 unknown, u16 isa_minor, u16 isa_major, u32 arch,
//                  u32 name_offset, u32 name_size, u64 flags (0x2000: compressed), ...
constexpr uint32_t k_fatbin_magic = 0xBA55ED50u;
constexpr size_t k_file_header_size = 16;
constexpr size_t k_entry_min_header = 48;
constexpr uint16_t k_kind_ptx = 1;
constexpr uint16_t k_kind_elf = 2;
constexpr uint64_t k_flag_compressed = 0x2000;

template <typename T> T read_le(std::span<const std::byte> bytes, size_t offset) {
  T value{};
  std::memcpy(&value, bytes.data() + offset, sizeof(T));
  return value;
}
} // namespace

Expected<std::vector<FatbinEntry>> parse_fatbin(std::span<const std::byte> image) {
  if (image.size() < k_file_header_size) {
    return make_error(fmt::format("fatbin too short ({} bytes)", image.size()));
  }
  if (read_le<uint32_t>(image, 0) != k_fatbin_magic) {
    return make_error(fmt::format("not a fatbin (magic 0x{:08X})", read_le<uint32_t>(image, 0)));
  }
  const size_t header_size = read_le<uint16_t>(image, 6);
  const uint64_t payload = read_le<uint64_t>(image, 8);
  if (header_size < k_file_header_size || header_size + payload > image.size()) {
    return make_error(fmt::format("fatbin header claims {} + {} bytes, image has {}", header_size,
                                  payload, image.size()));
  }
  std::vector<FatbinEntry> entries;
  size_t offset = header_size;
  const size_t end = header_size + payload;
  while (offset < end) {
    if (end - offset < k_entry_min_header) {
      return make_error(fmt::format("truncated fatbin entry at offset {}", offset));
    }
    const uint16_t kind = read_le<uint16_t>(image, offset);
    const uint32_t entry_header = read_le<uint32_t>(image, offset + 4);
    const uint64_t entry_payload = read_le<uint64_t>(image, offset + 8);
    if (entry_header < k_entry_min_header || entry_header + entry_payload > end - offset) {
      return make_error(fmt::format("fatbin entry at offset {} runs past the end", offset));
    }
    FatbinEntry entry;
    if (kind == k_kind_ptx) {
      entry.kind = FatbinEntry::Kind::ptx;
      entry.ptx_isa_minor = read_le<uint16_t>(image, offset + 24);
      entry.ptx_isa_major = read_le<uint16_t>(image, offset + 26);
    } else if (kind == k_kind_elf) {
      entry.kind = FatbinEntry::Kind::sass;
    } else {
      return make_error(fmt::format("unknown fatbin entry kind {} at offset {}", kind, offset));
    }
    entry.arch = static_cast<int>(read_le<uint32_t>(image, offset + 28));
    entry.compressed = (read_le<uint64_t>(image, offset + 40) & k_flag_compressed) != 0;
    entries.push_back(entry);
    offset += entry_header + entry_payload;
  }
  return entries;
}

std::string image_route(const std::vector<FatbinEntry>& entries, int cc_major, int cc_minor) {
  const int arch = cc_major * 10 + cc_minor;
  bool ptx = false;
  for (const FatbinEntry& entry : entries) {
    if (entry.kind == FatbinEntry::Kind::sass && entry.arch == arch) {
      return "sass";
    }
    ptx = ptx || (entry.kind == FatbinEntry::Kind::ptx && entry.arch <= arch);
  }
  return ptx ? "ptx-jit" : "none";
}

} // namespace gpucheck::platform::gpu
