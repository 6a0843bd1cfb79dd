#include "gpu/kernel_image.hpp"

#include <fmt/format.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "gpucheck/model/stack_versions.hpp"
#include "kernel_build.hpp"

namespace gpucheck::gpu {

extern "C" {
// Defined by the assembler file that cmake/Kernels.cmake generates (.incbin of the fatbin).
// Slot 0: the build's nvcc; 1: CUDA 12.9 NVRTC; 2: CUDA 11.8 NVRTC. Absent slots are empty.
extern const unsigned char gpucheck_fatbin_0_begin[]; // NOLINT(readability-identifier-naming)
extern const unsigned char gpucheck_fatbin_0_end[];   // NOLINT(readability-identifier-naming)
extern const unsigned char gpucheck_fatbin_1_begin[]; // NOLINT(readability-identifier-naming)
extern const unsigned char gpucheck_fatbin_1_end[];   // NOLINT(readability-identifier-naming)
extern const unsigned char gpucheck_fatbin_2_begin[]; // NOLINT(readability-identifier-naming)
extern const unsigned char gpucheck_fatbin_2_end[];   // NOLINT(readability-identifier-naming)
}

namespace {
std::span<const std::byte> slot_bytes(const unsigned char* begin, const unsigned char* end) {
  return {reinterpret_cast<const std::byte*>(begin), // NOLINT
          static_cast<size_t>(end - begin)};
}

/// "12.9" -> 12090; 0 when it does not read.
int toolkit_version(const std::string& release) {
  int major = 0;
  int minor = 0;
  if (std::sscanf(release.c_str(), "%d.%d", &major, &minor) != 2) {
    return 0;
  }
  return major * 1000 + minor * 10;
}
} // namespace

std::span<const std::byte> embedded_fatbin() {
  return slot_bytes(gpucheck_fatbin_0_begin, gpucheck_fatbin_0_end);
}

const std::vector<KernelImage>& embedded_images() {
  static const std::vector<KernelImage> images = [] {
    const std::array<std::span<const std::byte>, 3> slots{
        slot_bytes(gpucheck_fatbin_0_begin, gpucheck_fatbin_0_end),
        slot_bytes(gpucheck_fatbin_1_begin, gpucheck_fatbin_1_end),
        slot_bytes(gpucheck_fatbin_2_begin, gpucheck_fatbin_2_end)};
    std::vector<KernelImage> out;
    for (size_t slot = 0; slot < slots.size(); ++slot) {
      const std::string toolkit = kernel_build::k_image_toolkits.at(slot);
      if (slots.at(slot).empty() || toolkit.empty()) {
        continue;
      }
      KernelImage image;
      image.toolkit = toolkit;
      image.toolkit_version = toolkit_version(toolkit);
      image.fatbin = slots.at(slot);
      if (auto parsed = parse_fatbin(image.fatbin)) {
        image.entries = std::move(*parsed);
      }
      out.push_back(std::move(image));
    }
    return out;
  }();
  return images;
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

int ptx_isa_min_driver(int isa_major, int isa_minor) {
  // PTX ISA 7.x came with CUDA 11.x, 8.0-8.5 with 12.0-12.5, 8.6-8.8 with 12.7-12.9, 9.x with 13.x.
  if (isa_major <= 6) {
    return 10000;
  }
  if (isa_major == 7) {
    return 11000 + isa_minor * 10;
  }
  if (isa_major == 8) {
    return 12000 + (isa_minor <= 5 ? isa_minor : isa_minor + 1) * 10;
  }
  return (isa_major + 4) * 1000 + isa_minor * 10;
}

namespace {
/// The image's SASS entry a GPU of cc major.minor runs: same major, the highest minor at or below
/// the GPU's (binary compatibility within a major); nullptr when none.
const FatbinEntry* sass_for(const KernelImage& image, int cc_major, int cc_minor) {
  const FatbinEntry* best = nullptr;
  for (const FatbinEntry& e : image.entries) {
    if (e.kind == FatbinEntry::Kind::sass && e.arch / 10 == cc_major && e.arch % 10 <= cc_minor &&
        (best == nullptr || e.arch > best->arch)) {
      best = &e;
    }
  }
  return best;
}

/// The image's PTX entry a GPU of cc major.minor can JIT (arch at or below its own); nullptr when
/// none.
const FatbinEntry* ptx_for(const KernelImage& image, int cc_major, int cc_minor) {
  const FatbinEntry* best = nullptr;
  for (const FatbinEntry& e : image.entries) {
    if (e.kind == FatbinEntry::Kind::ptx && e.arch <= cc_major * 10 + cc_minor &&
        (best == nullptr || e.arch > best->arch)) {
      best = &e;
    }
  }
  return best;
}
/// Why an image whose SASS or PTX this driver cannot load does not fit.
std::string why_not(const KernelImage& image, const FatbinEntry* sass, const FatbinEntry* ptx,
                    const std::string& gpu, bool force_ptx, int jit_driver) {
  if (sass != nullptr) {
    return fmt::format("{}: its SASS {} needs a CUDA {} driver", image.name(), to_string(*sass),
                       image.toolkit_version / 1000);
  }
  if (ptx != nullptr) {
    return fmt::format("{}: no SASS for {}{}, and its PTX {} (ISA {}.{}) needs driver {} or newer",
                       image.name(), gpu, force_ptx ? " used (CUDA_FORCE_PTX_JIT=1)" : "",
                       to_string(*ptx), ptx->ptx_isa_major, ptx->ptx_isa_minor,
                       cuda_version_text(jit_driver));
  }
  return fmt::format("{}: no SASS for {} and no PTX at or below it", image.name(), gpu);
}
} // namespace

ImageChoice choose_images(const std::vector<KernelImage>& images, int driver_version, int cc_major,
                          int cc_minor, bool force_ptx, const std::string& only) {
  ImageChoice choice;
  std::vector<ImageCandidate> ptx_routes;
  std::vector<std::string> rejected; // why each image that does not fit does not
  const std::string driver = driver_version > 0 ? fmt::format("driver {} (CUDA {})", driver_version,
                                                              cuda_version_text(driver_version))
                                                : std::string("a driver of unknown version");
  const std::string gpu = fmt::format("sm_{}{}", cc_major, cc_minor);
  for (size_t i = 0; i < images.size(); ++i) {
    const KernelImage& image = images[i];
    if (!only.empty() && image.name() != only) {
      continue;
    }
    const int toolkit_major = image.toolkit_version / 1000;
    const bool driver_major_ok = driver_version == 0 || driver_version / 1000 >= toolkit_major;
    const FatbinEntry* sass = force_ptx ? nullptr : sass_for(image, cc_major, cc_minor);
    const FatbinEntry* ptx = ptx_for(image, cc_major, cc_minor);
    if (sass != nullptr && driver_major_ok) {
      choice.candidates.push_back(
          {i, "sass",
           fmt::format("{} has SASS {} for this {} GPU and {} loads CUDA {} code", image.name(),
                       to_string(*sass), gpu, driver, toolkit_major)});
      continue;
    }
    const int jit_driver =
        ptx != nullptr ? ptx_isa_min_driver(ptx->ptx_isa_major, ptx->ptx_isa_minor) : 0;
    if (ptx != nullptr && (driver_version == 0 || driver_version >= jit_driver)) {
      ptx_routes.push_back(
          {i, "ptx-jit",
           fmt::format("{} has PTX {} (ISA {}.{}) that {} can JIT for this {} GPU{}", image.name(),
                       to_string(*ptx), ptx->ptx_isa_major, ptx->ptx_isa_minor, driver, gpu,
                       force_ptx ? " (CUDA_FORCE_PTX_JIT=1: the driver ignores SASS)" : "")});
      continue;
    }
    std::string why = why_not(image, sass, ptx, gpu, force_ptx, jit_driver);
    if (!only.empty()) {
      // Forced: hand it to the driver anyway and let its answer show.
      choice.candidates.push_back(
          {i, image_route(image.entries, cc_major, cc_minor),
           fmt::format("GPUCHECK_KERNEL_IMAGE={} chose it although {}", only, why)});
      continue;
    }
    rejected.push_back(std::move(why));
  }
  choice.candidates.insert(choice.candidates.end(), ptx_routes.begin(), ptx_routes.end());
  std::string rejected_text;
  for (const std::string& why : rejected) {
    rejected_text += (rejected_text.empty() ? "" : "; ") + why;
  }
  if (!choice.candidates.empty()) {
    if (!rejected_text.empty()) {
      choice.candidates.front().why += " (passed over: " + rejected_text + ")";
    }
    return choice;
  }
  if (images.empty()) {
    choice.none_reason = "this gpucheck carries no kernel images";
  } else if (!only.empty() && rejected.empty()) {
    choice.none_reason =
        fmt::format("GPUCHECK_KERNEL_IMAGE={} names no image of this gpucheck", only);
  } else if (cc_major * 10 + cc_minor < 50) {
    choice.none_reason =
        fmt::format("this {} GPU is older than Maxwell (sm_50), the oldest architecture "
                    "gpucheck's kernels are built for ({})",
                    gpu, rejected_text);
  } else {
    choice.none_reason =
        fmt::format("no kernel image of this gpucheck runs on {} with this {} GPU ({})", driver,
                    gpu, rejected_text);
  }
  return choice;
}

} // namespace gpucheck::gpu
