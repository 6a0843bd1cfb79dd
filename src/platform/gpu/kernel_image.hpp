#pragma once
/// The fatbin of gpucheck's own kernels, embedded in the executable by cmake/Kernels.cmake, and a
/// reader for its table of contents. Pure data: nothing here touches the driver.

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "gpucheck/expected.hpp"

namespace gpucheck::platform::gpu {

/// The embedded image; empty when the build had no nvcc.
std::span<const std::byte> embedded_fatbin();

/// One image inside a fatbin.
struct FatbinEntry {
  enum class Kind { ptx, sass };
  Kind kind = Kind::sass;
  int arch = 0;          ///< 90 for sm_90 / compute_90
  int ptx_isa_major = 0; ///< PTX entries: ISA version (9 for ".version 9.0"); SASS: 0
  int ptx_isa_minor = 0;
  bool compressed = false; ///< the entry is compressed (gpucheck builds with -no-compress)

  bool operator==(const FatbinEntry&) const = default;
};

/// "sm_90" for SASS, "compute_75" for PTX.
std::string to_string(const FatbinEntry& entry);

/// The entries of a fatbin image (header magic 0xBA55ED50), in image order. Fails on a bad magic,
/// a truncated header or an entry that runs past the end.
Expected<std::vector<FatbinEntry>> parse_fatbin(std::span<const std::byte> image);

/// How a device of compute capability major.minor would run this image: "sass" when an SASS
/// entry matches exactly, "ptx-jit" when a PTX entry of a lower or equal arch exists, "none".
std::string image_route(const std::vector<FatbinEntry>& entries, int cc_major, int cc_minor);

} // namespace gpucheck::platform::gpu
