#pragma once
/// SystemSnapshot: every fact the probes collected, as plain data.
///
/// Contract: probes fill it; checks only read it; it round-trips through JSON
/// (to_json/from_json in model/json_io.hpp) so a saved snapshot replays exactly.
/// An absent fact is std::nullopt (JSON null): "could not be read", never a guess.

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpucheck {

/// How an isolated child process ended when it did not deliver a result.
/// How an isolated child ended without delivering its result. One spelling each (to_string),
/// the report's too: docs/report.schema.json lists exactly these (a test compares).
enum class ChildFailureKind {
  timeout,    ///< past its deadline: SIGTERM, then SIGKILL
  signal,     ///< killed by a signal of its own (a crash)
  exit,       ///< exited before writing its result
  bad_output, ///< its result was not the JSON expected
  spawn,      ///< it could not be started (pipe, fork, exec)
  cancelled,  ///< cut short, or never started, because gpucheck got SIGINT or SIGTERM
};
inline constexpr ChildFailureKind k_child_failure_kinds[] = {
    ChildFailureKind::timeout,    ChildFailureKind::signal, ChildFailureKind::exit,
    ChildFailureKind::bad_output, ChildFailureKind::spawn,  ChildFailureKind::cancelled};
std::string_view to_string(ChildFailureKind kind);
std::optional<ChildFailureKind> child_failure_kind_from_string(std::string_view text);

struct ChildFailure {
  ChildFailureKind kind = ChildFailureKind::exit;
  int signal = 0;          ///< signal number for kind == "signal"
  std::string signal_name; ///< e.g. "SIGABRT"
  int exit_code = 0;       ///< for kind == "exit"
  double timeout_s = 0.0;  ///< for kind == "timeout"
  std::string detail;      ///< one line for the report
  std::string stderr_tail; ///< last lines the child wrote to stderr

  bool operator==(const ChildFailure&) const = default;
};

/// Outcome of dlopen of one library by one name, as seen by the platform layer.
struct LibraryLoad {
  std::string name; ///< the name asked for, e.g. "libcudnn.so.9"
  bool loaded = false;
  std::string error;     ///< dlerror() text when not loaded
  std::string path;      ///< link-map name (dlinfo RTLD_DI_LINKMAP)
  std::string real_path; ///< realpath() of path
  std::string version;   ///< what the library reports about itself, "13.0.88", "9.19.0"
  std::optional<int64_t> version_raw;       ///< the raw integer the library returned, e.g. 91900
  std::vector<std::string> missing_symbols; ///< symbols we looked for and did not find

  bool operator==(const LibraryLoad&) const = default;
};

/// A /dev/nvidia* node.
struct DeviceNode {
  std::string path; ///< "/dev/nvidiactl"
  bool exists = false;
  bool readable = false; ///< for this user
  bool writable = false;
  std::optional<uint32_t> mode; ///< st_mode & 07777

  bool operator==(const DeviceNode&) const = default;
};

/// A PCI function with the NVIDIA vendor id, from sysfs.
struct PciDevice {
  std::string bdf;        ///< "0000:3b:00.0"
  std::string device_id;  ///< "0x2335"
  std::string class_code; ///< "0x030200"
  std::string driver;     ///< bound driver: "nvidia", "nouveau", "vfio-pci", "" for none
  std::optional<std::string> current_link_speed; ///< sysfs text, e.g. "32.0 GT/s PCIe"
  std::optional<int> current_link_width;
  std::optional<std::string> max_link_speed;
  std::optional<int> max_link_width;
  std::optional<int> numa_node;
  std::optional<std::string> runtime_status; ///< power/runtime_status: "active", "suspended"
  std::optional<std::string> power_state;    ///< power_state (newer kernels): "D0", "D3cold"
  /// The first 4 bytes of its config space read 0xffffffff: the device does not answer on the
  /// bus (fell off it, F22). nullopt when config could not be read.
  std::optional<bool> config_all_ones;

  bool operator==(const PciDevice&) const = default;
};

struct KernelModuleInfo {
  bool proc_version_present = false;  ///< /proc/driver/nvidia/version exists
  std::optional<std::string> version; ///< "580.159.04"
  std::optional<std::string> flavor;  ///< "open" or "proprietary"
  std::string version_text;           ///< first line of /proc/driver/nvidia/version
  bool nvidia_loaded = false;         ///< /sys/module/nvidia present
  bool uvm_loaded = false;            ///< /sys/module/nvidia_uvm present
  bool nouveau_loaded = false;        ///< /sys/module/nouveau present
  std::vector<DeviceNode> device_nodes;
  std::vector<PciDevice> pci_devices;
  std::string running_kernel; ///< /proc/sys/kernel/osrelease, the modules directory name
  /// nvidia*.ko* files for the running kernel (/lib/modules/<running_kernel>/...).
  std::vector<std::string> module_files;
  /// Other kernel releases under /lib/modules that have an NVIDIA module (DKMS not rebuilt).
  std::vector<std::string> other_kernels_with_module;
  std::optional<bool> secure_boot; ///< SecureBoot EFI variable; nullopt when not EFI/unreadable
  std::string lockdown;            ///< /sys/kernel/security/lockdown mode: "none", "integrity"
  /// "file: line" for each modprobe.d line that blacklists or disables an NVIDIA module.
  std::vector<std::string> modprobe_blacklist;
  /// Display controllers of an integrated GPU's vendor beside the NVIDIA ones (hybrid graphics,
  /// Optimus/PRIME): "0000:00:02.0 0x8086" (Intel) or "... 0x1002" (AMD).
  std::vector<std::string> integrated_gpus;
  /// /etc/prime-discrete (Ubuntu's PRIME profile): "on", "off" (the intel profile), "on-demand".
  std::optional<std::string> prime_profile;
  /// /proc/acpi/bbswitch: "0000:01:00.0 OFF" when bbswitch powered the NVIDIA GPU off.
  std::optional<std::string> bbswitch;

  bool operator==(const KernelModuleInfo&) const = default;
};

/// A GPU NVML counts but gives no handle for (nvmlDeviceGetHandleByIndex_v2 failed).
struct NvmlHandleFailure {
  int index = 0;           ///< NVML index
  int result = 0;          ///< nvmlReturn_t, e.g. 15 (GPU_IS_LOST)
  std::string result_name; ///< "GPU_IS_LOST"
  /// The call that answered so: "" for nvmlDeviceGetHandleByIndex, else the first query of a
  /// GPU lost after NVML gave its handle ("nvmlDeviceGetName").
  std::string call;
  std::string uuid;       ///< what was read of it before it was lost ("" if nothing)
  std::string pci_bus_id; ///< "0000:3b:00.0", likewise

  bool operator==(const NvmlHandleFailure&) const = default;
};

/// NVML system-level facts (gathered in a child).
struct NvmlInfo {
  LibraryLoad library;
  std::optional<int> init_result;            ///< nvmlReturn_t of nvmlInit_v2
  std::string init_result_name;              ///< "SUCCESS", "LIB_RM_VERSION_MISMATCH", ...
  std::optional<std::string> driver_version; ///< nvmlSystemGetDriverVersion
  std::optional<int> cuda_driver_version;    ///< nvmlSystemGetCudaDriverVersion_v2 (from libcuda)
  std::optional<int> cuda_driver_version_kernel; ///< nvmlSystemGetCudaDriverVersion
  std::optional<std::string> nvml_version;
  std::optional<int> device_count;
  /// GPUs the count includes whose handle NVML would not give (lost: 15, reset required: 16).
  std::vector<NvmlHandleFailure> handle_failures;
  std::optional<ChildFailure> failure; ///< the child crashed or hung

  bool operator==(const NvmlInfo&) const = default;
};

/// A device as the CUDA driver API sees it (after CUDA_VISIBLE_DEVICES).
struct CudaDevice {
  int ordinal = 0;
  std::string name;
  std::string uuid;       ///< "GPU-xxxxxxxx-..."
  std::string pci_bus_id; ///< "0000:3B:00.0"
  int cc_major = 0;
  int cc_minor = 0;
  int sm_count = 0;
  uint64_t total_memory_bytes = 0;
  /// CU_DEVICE_ATTRIBUTE_KERNEL_EXEC_TIMEOUT: a run-time limit applies to kernels (a display
  /// watchdog, F40); nullopt when the attribute could not be read.
  std::optional<bool> kernel_exec_timeout;

  bool operator==(const CudaDevice&) const = default;
};

/// Driver API facts (gathered in a child: cuInit never runs in the parent).
struct CudaDriverInfo {
  LibraryLoad library;
  std::optional<int> driver_version; ///< cuDriverGetVersion, e.g. 13000
  std::optional<int> init_result;    ///< CUresult of cuInit(0)
  std::string init_result_name;      ///< "CUDA_SUCCESS", "CUDA_ERROR_NO_DEVICE", ...
  std::string init_result_text;      ///< plain words for the code
  std::optional<int> device_count;
  std::vector<CudaDevice> devices;
  std::optional<ChildFailure> failure;

  bool operator==(const CudaDriverInfo&) const = default;
};

struct GpuProcess {
  uint32_t pid = 0;
  std::optional<uint64_t> used_memory_bytes;
  std::string name; ///< from /proc/<pid>/comm when visible

  bool operator==(const GpuProcess&) const = default;
};

/// One NVLink of a GPU as NVML reports it (links whose state NVML cannot read are left out).
struct NvLinkInfo {
  int link = 0;               ///< NVML link index (0..17)
  bool active = false;        ///< nvmlDeviceGetNvLinkState
  std::optional<int> version; ///< nvmlDeviceGetNvLinkVersion's enumeration (6: NVLink 4.0, Hopper)
  std::string remote_bus_id;  ///< the peer's PCI address (a GPU's, or an NVSwitch's); "" unknown
  std::optional<uint64_t> replay_errors;   ///< NVML_NVLINK_ERROR_DL_REPLAY
  std::optional<uint64_t> recovery_errors; ///< NVML_NVLINK_ERROR_DL_RECOVERY
  std::optional<uint64_t> crc_flit_errors; ///< NVML_NVLINK_ERROR_DL_CRC_FLIT
  std::optional<uint64_t> crc_data_errors; ///< NVML_NVLINK_ERROR_DL_CRC_DATA
  /// NVML_FI_DEV_NVLINK_ERROR_DL_CRC (NVLink 4 on): the CRC count nvidia-smi nvlink -e shows
  /// there, in place of the flit and data counters (then unread).
  std::optional<uint64_t> crc_errors;

  bool operator==(const NvLinkInfo&) const = default;
};

/// A GPU's registration with the NVLink fabric (NVSwitch systems), nvmlDeviceGetGpuFabricInfo[V].
struct GpuFabricInfo {
  std::string state; ///< "not_supported", "not_started", "in_progress", "completed", "unknown_N"
  int status = 0;    ///< nvmlReturn_t of the registration (meaningful once completed)
  std::string status_name;             ///< "SUCCESS", "NOT_READY", ...
  uint32_t clique_id = 0;              ///< the fabric clique this GPU belongs to
  std::string cluster_uuid;            ///< 32 hex digits; all zero when none
  std::optional<uint32_t> health_mask; ///< from the V form only

  bool operator==(const GpuFabricInfo&) const = default;
};

/// The PCIe/NVLink path between two GPUs, from NVML (nvidia-smi topo -m's matrix).
struct GpuPath {
  int gpu_a = 0; ///< NVML index, gpu_a < gpu_b
  int gpu_b = 0;
  /// nvmlDeviceGetTopologyCommonAncestor: "same_board", "single_switch", "multiple_switches",
  /// "host_bridge", "numa_node", "system" (across CPU sockets); "" when NVML could not say.
  std::string pcie_path;
  int nvlinks = 0; ///< active links of gpu_a whose remote end is gpu_b (direct NVLink)
  /// nvmlDeviceGetP2PStatus, as "ok", "chipset_not_supported", "gpu_not_supported",
  /// "topology_not_supported", "disabled_by_regkey", "not_supported", "unknown"; "" unread.
  std::string p2p_nvlink;
  std::string p2p_read;

  bool operator==(const GpuPath&) const = default;
};

/// One physical GPU, merged from NVML and the driver API (matched by PCI bus id / UUID).
struct GpuInfo {
  int index = 0;                   ///< NVML index (all GPUs, not only visible ones)
  std::optional<int> cuda_ordinal; ///< ordinal under CUDA_VISIBLE_DEVICES, if visible
  std::string name;
  std::string uuid;
  std::string serial;
  std::string pci_bus_id;                   ///< "0000:3B:00.0"
  std::optional<std::string> pci_device_id; ///< "0x233510DE"
  std::optional<int> cc_major;
  std::optional<int> cc_minor;
  std::optional<int> sm_count;
  std::optional<uint64_t> memory_total_bytes;
  std::optional<uint64_t> memory_used_bytes;
  std::optional<uint64_t> memory_free_bytes;
  std::optional<int> pcie_gen_current;
  std::optional<int> pcie_gen_max;
  std::optional<int> pcie_width_current;
  std::optional<int> pcie_width_max;
  std::optional<bool> persistence_mode;
  std::optional<std::string>
      compute_mode; ///< "default", "exclusive_thread", "prohibited", "exclusive_process"
  std::optional<bool> mig_enabled;
  std::optional<bool> mig_pending;
  std::optional<int> mig_instance_count; ///< MIG devices that exist under this GPU
  std::optional<bool> ecc_enabled;
  std::optional<uint64_t> ecc_uncorrected_volatile;
  std::optional<uint64_t> ecc_corrected_volatile;
  std::optional<uint64_t> ecc_uncorrected_aggregate;
  std::optional<int> retired_pages_sbe;
  std::optional<int> retired_pages_dbe;
  std::optional<bool> retired_pages_pending;
  std::optional<int> remapped_rows_correctable;
  std::optional<int> remapped_rows_uncorrectable;
  std::optional<bool> remapped_rows_pending;
  std::optional<bool> remapped_rows_failure;
  std::optional<uint64_t> clock_event_reasons; ///< NVML bitmask
  std::optional<int> temperature_c;
  std::optional<double> power_w;
  std::optional<double> power_limit_w;
  std::optional<int> sm_clock_mhz;
  std::optional<int> sm_clock_max_mhz;
  std::optional<int> numa_node;
  std::vector<GpuProcess> processes;
  std::optional<bool> display_mode;   ///< nvmlDeviceGetDisplayMode: a monitor is connected
  std::optional<bool> display_active; ///< nvmlDeviceGetDisplayActive: a display is initialised
  /// From the driver API (CudaDevice::kernel_exec_timeout): kernels have a run-time limit.
  std::optional<bool> kernel_exec_timeout;
  /// CPUs close to the GPU (nvmlDeviceGetCpuAffinity) as a cpulist, "0-55,112-167".
  std::optional<std::string> cpu_affinity;
  std::vector<NvLinkInfo> nvlinks;     ///< empty: no NVLink, or NVML could not read them
  std::optional<GpuFabricInfo> fabric; ///< nullopt: NVML could not say

  bool operator==(const GpuInfo&) const = default;
};

/// A copy of a library file found on disk.
struct LibraryCopy {
  std::string path; ///< where it was found (may be a symlink)
  std::string real_path;
  std::string origin;  ///< "LD_LIBRARY_PATH", "ldconfig", "cuda_toolkit", "conda", "pip", "system"
  std::string version; ///< from the real file name, e.g. "9.19.0"; empty if unknown
  bool selected = false; ///< the copy the dynamic loader picks for the bare name
  bool shadowed = false; ///< another copy with the same SONAME wins over this one
  /// What this copy reports when probed on its own in a child (cuDNN: cudnnGetVersion).
  std::optional<std::string> reported_version;
  /// CUDA runtime this copy was built for (cuDNN: cudnnGetCudartVersion, e.g. 13010).
  std::optional<int64_t> cudart_version;

  bool operator==(const LibraryCopy&) const = default;
};

/// A cuDNN sub-library as the cuDNN child saw it.
struct CudnnSublibrary {
  std::string name; ///< "libcudnn_graph.so.9"
  bool loaded = false;
  std::string path;
  std::string error;
  std::optional<int> version_check; ///< cudnn*VersionCheck() status, 0 = ok

  bool operator==(const CudnnSublibrary&) const = default;
};

/// cuDNN-specific facts reported by the loaded library (gathered in a child).
struct CudnnDetails {
  std::optional<int64_t> cudart_version;     ///< cudnnGetCudartVersion, e.g. 13010
  std::optional<int64_t> max_device_version; ///< cudnnGetMaxDeviceVersion, e.g. 1210
  std::vector<CudnnSublibrary> sublibraries;

  bool operator==(const CudnnDetails&) const = default;
};

/// One library family ("cudart", "cudnn", "cublas", "nccl"): what loads, and every copy on disk.
struct LibraryFamily {
  std::string family; ///< "cudart", "cudnn", "cublas", "nccl"
  LibraryLoad load;   ///< what dlopen of the bare name gives (in a child)
  std::vector<LibraryCopy> copies;
  std::optional<CudnnDetails> cudnn; ///< only for family == "cudnn"
  std::optional<ChildFailure> failure;

  bool operator==(const LibraryFamily&) const = default;
};

struct ToolkitInstall {
  std::string path;    ///< "/usr/local/cuda-13.0"
  std::string version; ///< from version.json / version.txt, "13.0.88"

  bool operator==(const ToolkitInstall&) const = default;
};

struct ToolkitInfo {
  std::optional<std::string> nvcc_path;
  std::optional<std::string> nvcc_version; ///< "13.0.88"
  std::optional<std::string> cuda_home;    ///< $CUDA_HOME
  std::optional<std::string> cuda_path;    ///< $CUDA_PATH
  std::vector<ToolkitInstall> installs;

  bool operator==(const ToolkitInfo&) const = default;
};

struct ContainerInfo {
  std::string kind =
      "none"; ///< "none", "docker", "podman", "kubernetes", "containerd", "lxc", "other"
  std::vector<std::string> evidence;
  /// Mount points of NVIDIA driver files bind-mounted into this mount namespace (libcuda,
  /// NVML, nvidia-smi, /dev/nvidia*): what the container toolkit injected (F11, F12).
  std::vector<std::string> nvidia_mounts;

  bool operator==(const ContainerInfo&) const = default;
};

/// A file the Windows driver provides to WSL2 under /usr/lib/wsl/lib.
struct WslFile {
  std::string path; ///< "/usr/lib/wsl/lib/libcuda.so.1"
  bool exists = false;
  bool is_symlink = false; ///< lstat: WSL mounts plain files, so ldconfig warns about them

  bool operator==(const WslFile&) const = default;
};

/// WSL2's GPU layout (F17): the Windows driver serves the GPU through /dev/dxg and its
/// libraries in /usr/lib/wsl/lib; a Linux driver inside the distribution breaks it.
struct WslInfo {
  std::string kernel_release; ///< /proc/sys/kernel/osrelease: "5.15.167.4-microsoft-standard-WSL2"
  bool dxg = false;           ///< /dev/dxg exists
  std::vector<WslFile> files; ///< libcuda.so, libcuda.so.1, libcuda.so.1.1, libnvidia-ml.so.1
  /// Installed packages (dpkg) that are a Linux NVIDIA driver or pull one in: "cuda-drivers",
  /// "nvidia-driver-580", "libnvidia-compute-580", "cuda", "cuda-12-8", ...
  std::vector<std::string> driver_packages;

  bool operator==(const WslInfo&) const = default;
};

/// /dev/shm, where NCCL and DataLoader workers exchange data between processes (F38).
struct ShmInfo {
  std::optional<uint64_t> total_bytes;
  std::optional<uint64_t> free_bytes;
  /// "statvfs" (the real root), "mounts" (the size= option of its tmpfs mount in
  /// /proc/self/mounts), "absent" (no /dev/shm), "" when its size is unknown.
  std::string source;
  std::optional<bool> writable; ///< access(W_OK) for this user

  bool operator==(const ShmInfo&) const = default;
};

struct EnvironmentInfo {
  /// CUDA-relevant variables that are set, by name (CUDA_VISIBLE_DEVICES, LD_LIBRARY_PATH, ...).
  std::map<std::string, std::string> variables;
  ContainerInfo container;
  bool wsl = false;
  std::optional<WslInfo> wsl_details; ///< only under WSL
  std::optional<ShmInfo> shm;         ///< nullopt when not recorded

  bool operator==(const EnvironmentInfo&) const = default;
};

struct HostInfo {
  std::string hostname;
  std::string os;     ///< PRETTY_NAME from os-release
  std::string kernel; ///< uname -r
  std::string arch;   ///< uname -m
  std::string glibc;  ///< "2.36"
  std::string cpu_model;
  int cpu_count = 0;
  std::optional<uint64_t> memory_total_bytes;

  bool operator==(const HostInfo&) const = default;
};

/// An installed Python distribution, read from its metadata (*.dist-info / *.egg-info) without
/// importing anything.
struct PythonDistribution {
  std::string name; ///< normalised project name: "torch", "nvidia-cudnn-cu12", "jax-cuda12-plugin"
  std::string version;      ///< "2.11.0+cu130"
  std::string metadata_dir; ///< the *.dist-info / *.egg-info directory
  /// Shared libraries it carries (from RECORD), relative to its site-packages:
  /// "nvidia/cudnn/lib/libcudnn.so.9".
  std::vector<std::string> libraries;

  bool operator==(const PythonDistribution&) const = default;
};

/// One CUDA library a framework resolves at import, as the dynamic loader would find it.
struct ResolvedLibrary {
  /// "cudart", "cublas", "cudnn", "nccl"; for the libraries ONNX Runtime, TensorRT and CuPy need,
  /// the SONAME's stem: "cublasLt", "cufft", "nvrtc", "nvinfer"
  std::string family;
  std::string soname; ///< the name asked for: "libcudnn.so.9"
  std::string path;   ///< the file that loads; "" when none is found
  std::string real_path;
  /// How it was found: "LD_LIBRARY_PATH", "RUNPATH", "RPATH", "preload" (torch's
  /// site-packages/nvidia/*/lib fallback), "ldconfig", "default"; "" when not found.
  std::string via;
  std::string version;     ///< "9.19.0" from the wheel metadata or the file name; "" when unknown
  std::string own_path;    ///< the framework's own copy (RUNPATH / nvidia wheel); "" when none
  std::string own_version; ///< its version
  /// Not found by the loader, but present in this environment where the loader does not search
  /// (site-packages nvidia/*/lib, tensorrt_libs): the paths of those copies.
  std::vector<std::string> elsewhere;

  bool operator==(const ResolvedLibrary&) const = default;
};

/// A deep-learning framework installed in a Python environment, from metadata and build files.
struct FrameworkInstall {
  std::string name; ///< "pytorch", "tensorflow", "jax", "onnxruntime", "tensorrt", "cupy"
  /// "torch", "tensorflow", "tensorflow-cpu", "jaxlib", "onnxruntime-gpu", "tensorrt-cu12",
  /// "cupy-cuda12x"
  std::string distribution;
  std::string version;     ///< "2.11.0+cu130"
  std::string package_dir; ///< "<site-packages>/torch"
  /// CUDA it was built for ("13.0"): torch/version.py, TF build_info.py, the JAX plugin's major;
  /// ONNX Runtime's build_and_package_info.py, else the major of the CUDA libraries its provider
  /// needs; TensorRT's wheel name (-cu12) or libnvinfer's needs; CuPy's wheel name (cuda12x ->
  /// "12"). nullopt: a CPU-only build (or no CUDA plugin for JAX).
  std::optional<std::string> cuda;
  std::optional<std::string> cudnn;       ///< cuDNN it was built with, when its build says
  std::optional<std::string> git_version; ///< torch/version.py git_version
  std::vector<std::string> archs;         ///< "sm_90", "compute_90" from TF's build info
  /// "jax-cuda13-plugin 0.8.0", "jax-cuda13-pjrt 0.8.0"; ONNX Runtime's provider libraries
  /// ("libonnxruntime_providers_cuda.so", "libonnxruntime_providers_tensorrt.so")
  std::vector<std::string> plugins;
  /// the ELF whose RUNPATH was read (ONNX Runtime's CUDA provider, TensorRT's libnvinfer)
  std::string loader_object;
  std::vector<std::string> runpath; ///< $ORIGIN expanded
  /// "elf" (read from loader_object) or "wheel_layout" (no readable ELF: the nvidia/*/lib
  /// directories beside it are assumed, as the framework's preload does).
  std::string runpath_source;
  std::vector<ResolvedLibrary> libraries;

  bool operator==(const FrameworkInstall&) const = default;
};

/// `--import`: what importing one framework in a child interpreter showed.
struct FrameworkImport {
  std::string framework;               ///< "pytorch", "tensorflow", "jax"
  std::optional<ChildFailure> failure; ///< crash, hang, bad output
  std::string error;                   ///< exception raised by import or the GPU op
  std::string version;
  std::optional<bool> gpu_available;
  std::optional<int> device_count;
  std::vector<std::string> arch_list;        ///< torch.cuda.get_arch_list()
  std::optional<std::string> cudnn_version;  ///< torch.backends.cudnn.version() etc.
  std::optional<bool> op_ok;                 ///< the tiny GPU operation gave the right answer
  std::vector<std::string> mapped_libraries; ///< CUDA libraries in /proc/self/maps after import
  double seconds = 0.0;

  bool operator==(const FrameworkImport&) const = default;
};

/// A Python environment: an interpreter and the site-packages it imports from.
struct PythonEnvironment {
  std::string interpreter;                   ///< "/opt/torch/.venv/bin/python3" as found
  std::vector<std::string> found_by;         ///< "PATH", "VIRTUAL_ENV", "CONDA_PREFIX", "--python"
  std::string version;                       ///< "3.12.3"; "" when unknown
  std::string prefix;                        ///< sys.prefix
  std::string base_prefix;                   ///< sys.base_prefix (a venv's base); "" if unknown
  std::string kind;                          ///< "venv", "conda", "system"
  std::string source;                        ///< "layout" (its files) or "interpreter" (asked)
  std::optional<ChildFailure> query_failure; ///< the interpreter did not answer
  std::vector<std::string> site_packages;
  std::vector<PythonDistribution> distributions; ///< frameworks, JAX plugins, nvidia-* wheels
  std::vector<FrameworkInstall> frameworks;
  std::vector<FrameworkImport> imports; ///< only with --import

  bool operator==(const PythonEnvironment&) const = default;
};

/// One driver or PCIe event from the kernel log.
struct KernelLogEvent {
  std::string kind;        ///< "xid", "sxid", "fallen_off_bus", "aer"
  std::optional<int> code; ///< the Xid or SXid number
  /// The device, normalised "0000:3b:00.0"; an Xid line names bus and device only
  /// ("PCI:0000:3b:00"), which is written with function 0.
  std::string pci_bus_id;
  std::string severity; ///< AER: "corrected", "uncorrected", "fatal"; SXid: "fatal", "non-fatal"
  double seconds = 0.0; ///< since boot
  std::string text;     ///< the message (at most 300 characters)

  bool operator==(const KernelLogEvent&) const = default;
};

/// The kernel log since boot (/dev/kmsg, or the journal), as far as this user may read it.
struct KernelLogInfo {
  std::string source; ///< "kmsg", "journal", "" when not read
  bool readable = false;
  std::string unreadable_reason;  ///< "/dev/kmsg: Operation not permitted (dmesg_restrict=1)"
  std::optional<double> uptime_s; ///< /proc/uptime: how long ago boot was
  bool truncated = false;         ///< the size cap was reached before the end
  int64_t records_read = 0;
  std::vector<KernelLogEvent> events; ///< NVIDIA and PCIe events only, oldest first (capped)

  bool operator==(const KernelLogInfo&) const = default;
};

/// A probe that could not do its work (not a finding about the system: a gap in the facts).
struct ProbeIssue {
  std::string probe; ///< "nvml", "cuda", "libraries", ...
  std::string message;

  bool operator==(const ProbeIssue&) const = default;
};

struct SystemSnapshot {
  static constexpr int k_format_version = 1;
  /// The most GPUs a snapshot of one node may list (docs/security.md): far above any node built
  /// (eight to sixteen GPUs), so that a crafted snapshot cannot make the replay's per-GPU rules run
  /// for minutes (12,000 GPUs took 5.3 s, 1,024 take a fraction of a second).
  static constexpr size_t k_max_gpus = 1024;

  int format_version = k_format_version;
  std::string collected_at; ///< ISO 8601 UTC
  HostInfo host;
  EnvironmentInfo environment;
  KernelModuleInfo kernel_module;
  NvmlInfo nvml;
  CudaDriverInfo cuda;
  std::vector<GpuInfo> gpus;
  std::vector<LibraryFamily> libraries;
  ToolkitInfo toolkit;
  std::vector<PythonEnvironment> python_environments;
  KernelLogInfo kernel_log;
  std::vector<ProbeIssue> probe_issues;
  std::vector<GpuPath> gpu_paths; ///< every pair of GPUs NVML lists
  /// An nv-fabricmanager process seen in /proc (this PID namespace only: a container does not
  /// see the host's); nullopt when /proc could not be read.
  std::optional<bool> fabric_manager_running;

  bool operator==(const SystemSnapshot&) const = default;

  /// The library family by name, or nullptr.
  [[nodiscard]] const LibraryFamily* library(std::string_view family) const;
  /// An environment variable captured in the snapshot, or nullopt when unset.
  [[nodiscard]] std::optional<std::string> env(const std::string& name) const;
};

} // namespace gpucheck
