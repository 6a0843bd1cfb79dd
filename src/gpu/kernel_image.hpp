#pragma once
/// The fatbins of gpucheck's own kernels, embedded in the executable by cmake/Kernels.cmake (one
/// per CUDA toolkit that built them), a reader for their table of contents, and the choice of
/// which to hand a driver. Pure data: nothing here touches the driver.

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "gpucheck/expected.hpp"

namespace gpucheck::gpu {

/// The build nvcc's (CUDA 13) image; empty when the build had no nvcc.
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

/// One kernel image: a fatbin and the toolkit that built it.
struct KernelImage {
  std::string toolkit;     ///< "13.0", "12.9", "11.8"
  int toolkit_version = 0; ///< cuDriverGetVersion form: 13000, 12090, 11080
  std::span<const std::byte> fatbin;
  std::vector<FatbinEntry> entries; ///< parsed from fatbin; empty when it does not parse

  /// "cuda13.0": the name the report and GPUCHECK_KERNEL_IMAGE use.
  [[nodiscard]] std::string name() const { return "cuda" + toolkit; }
};

/// The images this binary carries, newest toolkit first; empty when it was built without nvcc.
const std::vector<KernelImage>& embedded_images();

/// The oldest driver (cuDriverGetVersion form) that can JIT PTX of ISA major.minor: 7.4 -> 11040,
/// 8.0 -> 12000, 8.8 -> 12090, 9.0 -> 13000.
int ptx_isa_min_driver(int isa_major, int isa_minor);

/// One image worth handing the driver, and how it would run it.
struct ImageCandidate {
  size_t image = 0;  ///< index into the images given to choose_images()
  std::string route; ///< "sass" or "ptx-jit"
  std::string why;   ///< one sentence: why this image, in this place of the order
};

/// What choose_images() decided.
struct ImageChoice {
  std::vector<ImageCandidate> candidates; ///< in the order to try; empty: none fits
  std::string none_reason;                ///< set when candidates is empty
};

/// The images that driver `driver_version` (cuDriverGetVersion; 0 when unknown: assume it loads
/// anything) can run on a GPU of compute capability cc_major.cc_minor, best first:
///  - an image with SASS for the GPU (same major, minor at or below the GPU's) from a toolkit whose
///    major the driver supports (CUDA minor-version compatibility), newest toolkit first;
///  - then an image whose PTX (arch at or below the GPU's) the driver can JIT, newest first.
/// `force_ptx` (CUDA_FORCE_PTX_JIT=1: the driver ignores SASS) leaves only the PTX routes.
/// `only` ("cuda11.8", from GPUCHECK_KERNEL_IMAGE) keeps that image alone and tries it even when
/// the rules say it does not fit (a test of the driver's answer); "" keeps all.
ImageChoice choose_images(const std::vector<KernelImage>& images, int driver_version, int cc_major,
                          int cc_minor, bool force_ptx = false, const std::string& only = "");

} // namespace gpucheck::gpu
