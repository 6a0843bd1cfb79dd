#pragma once
/// The compatibility matrix: data/compat/matrix.json as typed structs, parsed and validated once.
///
/// The embedded copy is the default; `--matrix FILE` replaces it (use_matrix()). Every entry keeps
/// its status and source so that a finding can say "unconfirmed" when it relies on an entry that
/// the facts sheet marks [unverified].

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpucheck/expected.hpp"
#include "gpucheck/model/version.hpp"

namespace gpucheck::compat {

/// How well an entry is sourced (the facts sheet's markers).
enum class SourceStatus { official, official_via_copy, third_party, unverified };

std::string_view to_string(SourceStatus status);

/// A driver version as written in the data: its text for messages, its value for comparisons.
struct DriverVersion {
  std::string text; ///< "580.65.06", or a branch alone: "615"
  Version value;
};

/// Fields every entry has.
struct Provenance {
  SourceStatus status = SourceStatus::official;
  std::string source; ///< https URL
  std::string note;

  [[nodiscard]] bool unverified() const { return status == SourceStatus::unverified; }
};

struct CudaRelease {
  Version version; ///< "13.0"
  int update = 0;  ///< 0 = GA
  bool prerelease = false;
  std::string label; ///< "13.0 Update 2"
  DriverVersion linux_min_driver;
  bool linux_min_driver_exact = true; ///< false: only the branch is known
  std::optional<DriverVersion> windows_min_driver;
  bool windows_min_driver_unverified = false;
  Provenance provenance;
};

/// Minor-version compatibility of one CUDA major family.
struct MinorVersionCompat {
  int major = 0;
  int min_branch = 0;
  std::optional<int> below_branch; ///< end of the MVC range (newer drivers: backward compatible)
  DriverVersion linux_min_driver;
  std::optional<DriverVersion> windows_min_driver;
  Provenance provenance;
};

struct CompatPackage {
  std::string package; ///< "cuda-compat-13-0"
  Version cuda;        ///< "13.0"
  std::vector<int> compatible_branches;
  std::vector<int> not_needed_branches;
  Provenance provenance;
};

struct ForwardCompat {
  std::vector<std::string> supported_gpu_classes;   ///< "datacenter", "jetson"
  std::vector<std::string> conditional_gpu_classes; ///< "rtx_server": select SKUs only
  std::vector<int> base_branches;
  std::vector<CompatPackage> packages;
  Provenance provenance;
};

struct DriverBranch {
  int branch = 0;
  std::string designation; ///< "long_term_support", "production", "new_feature", "unknown"
  std::optional<std::string> end_of_life; ///< "2028-06"
  int highest_cuda_major = 0;
  Provenance provenance;
};

/// One compute capability: its architecture and how long toolkits and drivers serve it.
struct ComputeCapability {
  Version cc; ///< "7.0"
  std::string arch;
  Version first_cuda;
  std::optional<int> last_cuda_major;    ///< nullopt: still supported
  std::optional<int> last_driver_branch; ///< nullopt: still supported
  Provenance provenance;
};

/// The real architectures nvcc of a range of CUDA releases can compile for.
struct CudaTargets {
  Version cuda_from;
  Version cuda_to; ///< inclusive
  std::vector<Version> sm;
  std::vector<Version> deprecated;
  Provenance provenance;
};

/// A GPU product: its NVML name pattern (ECMAScript regex, case-insensitive) and what it is.
struct GpuProduct {
  std::string pattern;
  std::string product;
  std::string arch;
  Version cc;
  std::string gpu_class; ///< "datacenter", "workstation", "geforce", "jetson", "rtx_server"
  std::vector<std::string> pci_device_ids;
  Provenance provenance;
};

struct CudnnBuild {
  Version cuda_from;
  Version cuda_to;
  std::optional<DriverVersion> linux_min_driver;
  std::optional<DriverVersion> windows_min_driver;
  std::optional<Version> cc_min; ///< overrides the release's range for this build
  std::optional<Version> cc_max;
  std::string note;
};

/// A cuDNN release range ("9.1" .. "9.5" covers 9.1.0 to 9.5.x).
struct CudnnRelease {
  Version from;
  Version to;
  std::vector<CudnnBuild> builds;
  std::optional<Version> cc_min; ///< nullopt: not known
  std::optional<Version> cc_max;
  Provenance provenance;
};

struct CudnnLayout {
  int major = 0;
  std::vector<std::string> libraries;
  std::vector<std::string> depends_on;
  std::string version_encoding;
  Provenance provenance;
};

struct PytorchWheel {
  Version version;   ///< "2.9"
  std::string wheel; ///< "cu130"
  Version cuda;
  std::string cudnn;
  std::string channel;                       ///< "stable", "experimental"
  std::optional<std::vector<Version>> archs; ///< nullopt: not known
  std::optional<Version> ptx;                ///< PTX embedded for this architecture
  Provenance provenance;
};

struct TensorflowBuild {
  std::string version;
  Version cuda;
  std::string cudnn;
  Provenance provenance;
};

struct JaxWheel {
  std::string wheel; ///< "jax[cuda13]"
  Version built_with_cuda;
  Version cuda_min;
  std::string cudnn_min;
  std::string cudnn_below; ///< first cuDNN release it does not accept ("10.0")
  DriverVersion linux_min_driver;
  Version cc_min;
  Provenance provenance;
};

/// A GPU's PCI device ID and the product name the driver's list gives it.
struct PciDeviceName {
  std::string id; ///< "2335": lower-case hex, no prefix
  std::string name;
};

/// The GPUs a driver release lists as supported by its open kernel modules (Turing and later).
struct PciDeviceList {
  DriverVersion driver;
  std::vector<PciDeviceName> devices;
  Provenance provenance;
};

struct Matrix {
  std::string matrix_version; ///< "2026.11.1"
  std::string compiled;       ///< "2026-11-21"
  std::string origin;         ///< "embedded" or the file it came from
  std::vector<CudaRelease> cuda_releases;
  std::vector<MinorVersionCompat> minor_version_compatibility;
  ForwardCompat forward_compat;
  std::vector<DriverBranch> driver_branches;
  std::vector<ComputeCapability> compute_capabilities;
  std::vector<CudaTargets> cuda_targets;
  std::vector<GpuProduct> gpus;
  std::vector<CudnnRelease> cudnn;
  std::vector<CudnnLayout> cudnn_layout;
  std::vector<PytorchWheel> pytorch;
  std::vector<TensorflowBuild> tensorflow;
  std::optional<Version> tensorflow_gpu_cc_min;
  std::vector<JaxWheel> jax;
  std::optional<PciDeviceList> pci_devices; ///< absent in a matrix file without it
};

/// Parse and validate matrix JSON text: first against the embedded schema, then the versions
/// themselves (a minimum above its maximum, a release listed twice, ...). The error names
/// `origin`, the JSON path and the problem: "m.json: $.cuda_releases[3].linux_min_driver: ...".
Expected<Matrix> parse_matrix(std::string_view text, std::string origin);

/// Read and parse a matrix file (for `--matrix FILE`).
Expected<Matrix> load_matrix_file(const std::string& path);

/// The matrix embedded at build time. Parsed once, on first use; a broken embedded matrix is a
/// build defect and throws std::logic_error.
const Matrix& embedded_matrix();

/// The matrix the checks use: the one given to use_matrix(), else the embedded one.
const Matrix& active_matrix();

/// Replace the active matrix (call before checks run; not thread-safe against them).
void use_matrix(Matrix matrix);

/// The embedded data and schema texts (generated by cmake/EmbedData.cmake).
std::string_view embedded_matrix_json();
std::string_view embedded_matrix_schema_json();

} // namespace gpucheck::compat
