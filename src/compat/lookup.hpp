#pragma once
/// Questions asked of the matrix by several rules. Pure functions over the data.

#include <optional>
#include <string>
#include <string_view>

#include "compat/matrix.hpp"

namespace gpucheck::compat {

/// The GA release of a CUDA major.minor (prereleases excluded), or nullptr.
const CudaRelease* ga_release(const Matrix& matrix, const Version& cuda);

/// The newest CUDA release (major.minor, any update) whose Linux minimum driver `driver` meets.
const CudaRelease* newest_release_for_driver(const Matrix& matrix, const Version& driver);

/// The newest CUDA major.minor in the data.
Version newest_known_cuda(const Matrix& matrix);

/// The newest driver branch the data names (CUDA minimums and branch table; prereleases excluded).
int newest_known_branch(const Matrix& matrix);

/// Minor-version compatibility of a CUDA major, or nullptr (before CUDA 11 there is none).
const MinorVersionCompat* mvc_for(const Matrix& matrix, int cuda_major);

const ComputeCapability* cc_info(const Matrix& matrix, const Version& cc);

/// The targets row that covers a CUDA major.minor, or nullptr.
const CudaTargets* targets_for(const Matrix& matrix, const Version& cuda);

/// A GPU product by NVML name (first matching pattern), or nullptr.
const GpuProduct* gpu_by_name(const Matrix& matrix, std::string_view name);

/// A GPU product by PCI device id ("0x2335", "0x233510DE"), or nullptr.
const GpuProduct* gpu_by_pci_id(const Matrix& matrix, std::string_view device_id);

/// The product name the matrix's driver list (pci_devices) gives a PCI device ID ("0x2335" as
/// sysfs writes it, or NVML's "0x233510DE"); nullptr when it is not listed.
const PciDeviceName* pci_device_name(const Matrix& matrix, std::string_view device_id);

/// How a driver meets the needs of a CUDA build.
enum class DriverFit {
  native,        ///< the driver supports this CUDA version itself
  minor_version, ///< through minor-version compatibility (with its caveats)
  too_old,       ///< it cannot run it
  unknown        ///< the driver is not known
};

struct DriverVerdict {
  DriverFit fit = DriverFit::unknown;
  std::optional<Version> driver_cuda; ///< what the driver supports (reported or from the data)
  std::string native_min_driver;      ///< driver for this CUDA without MVC ("580.65.06"), or ""
  std::string mvc_min_driver;         ///< MVC floor of the major, or ""
  bool unconfirmed = false;           ///< relies on an [unverified] entry
};

/// Whether a driver (version and/or its reported CUDA version) runs a CUDA build.
DriverVerdict judge_driver(const Matrix& matrix, const std::optional<Version>& driver,
                           const std::optional<Version>& driver_cuda, const Version& cuda);

/// The text the minimum driver for a CUDA build is spelled with in remedies.
std::string needed_driver_text(const DriverVerdict& verdict, const Version& cuda);

/// " (unconfirmed: ...)" when `unconfirmed`, else "".
std::string unconfirmed_note(bool unconfirmed);

/// A GPU's compute capability covered by a list of real targets: exact, or a lower minor of the
/// same major (binary compatibility). Arch-specific targets are not distinguished.
bool covered_by_sass(const std::vector<Version>& targets, const Version& cc);

} // namespace gpucheck::compat
