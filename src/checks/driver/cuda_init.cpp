#include <fmt/format.h>
#include <fmt/ranges.h>

#include <span>

#include "checks/checks.hpp"
#include "checks/driver/facts.hpp"
#include "checks/rules/packages.hpp"
#include "checks/rules/path_text.hpp"
#include "checks/rules/probe_failure.hpp"
#include "findings/catalog.hpp"
#include "gpucheck/model/stack_versions.hpp"
#include "gpucheck/plural.hpp"

namespace gpucheck::checks {

namespace {
// Its findings, spelt here (CheckDef::findings adds them to the catalogue).
constexpr FindingCode k_cuda_compat_unsupported{"cuda.compat_unsupported"};
constexpr FindingCode k_cuda_devices_unavailable{"cuda.devices_unavailable"};
constexpr FindingCode k_cuda_init_failed{"cuda.init_failed"};
constexpr FindingCode k_cuda_insufficient_driver{"cuda.insufficient_driver"};
constexpr FindingCode k_cuda_library_missing{"cuda.library_missing"};
constexpr FindingCode k_cuda_no_device{"cuda.no_device"};
constexpr FindingCode k_cuda_no_visible_device{"cuda.no_visible_device"};
constexpr FindingCode k_cuda_stub_library{"cuda.stub_library"};
constexpr FindingCode k_cuda_system_driver_mismatch{"cuda.system_driver_mismatch"};
constexpr FindingCode k_cuda_system_not_ready{"cuda.system_not_ready"};
constexpr FindingCode k_cuda_unknown_error{"cuda.unknown_error"};

constexpr FindingSpec k_findings[] = {
    {k_cuda_compat_unsupported, Severity::fail, "Forward compatibility not supported on this GPU",
     "A CUDA forward-compatibility libcuda (cuda-compat package) is loaded, but forward "
     "compatibility works only on data-center GPUs; on other GPUs cuInit returns 804.",
     "cuInit returned CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE (804): the forward-compatibility "
     "libcuda {0} is loaded and this GPU does not support it",
     "remove {1} from LD_LIBRARY_PATH (or uninstall the cuda-compat package) so the system "
     "driver's libcuda.so.1 is used, and upgrade the system driver if a newer CUDA is needed",
     where("path of the forward-compatibility libcuda loaded",
           "its compat directory, to take out of the library path")},
    {k_cuda_devices_unavailable, Severity::fail, "All CUDA devices busy or unavailable",
     "cuInit found GPUs but none can be used: compute mode Exclusive_Process with another process "
     "on the GPU, or Prohibited.",
     "cuInit returned CUDA_ERROR_DEVICES_UNAVAILABLE (46): every GPU is busy or unavailable{0}",
     "check the compute mode (nvidia-smi -q -d COMPUTE); set it back with "
     "sudo nvidia-smi -c DEFAULT, or stop the process that holds the GPU",
     where("\" (GPU N is exclusive_process, ...)\": the GPUs not in the default compute mode, or "
           "empty")},
    {k_cuda_init_failed, Severity::fail, "cuInit failed",
     "The CUDA driver API could not initialise; the code names the reason.",
     "cuInit returned {0} ({1}): {2}",
     "look up {0} in the CUDA driver API documentation; read driver.kernel_log's decoded Xid "
     "and NVRM errors of this boot (gpucheck reads the kernel log when this user may) and rerun",
     where("the CUresult name cuInit returned", "its number", "the driver's description of it")},
    {k_cuda_insufficient_driver, Severity::fail, "Driver too old for this libcuda",
     "The CUDA driver reports that it is too old for the CUDA version requested.",
     "cuInit returned CUDA_ERROR_INSUFFICIENT_DRIVER (35); the driver supports CUDA {0}",
     "install a newer NVIDIA driver (one that supports the CUDA version your applications are "
     "built for), or use builds made for CUDA {0}",
     where("newest CUDA version the driver supports")},
    {k_cuda_library_missing, Severity::fail, "libcuda.so.1 not loadable",
     "The kernel module is loaded but the driver's CUDA library cannot be loaded, so no CUDA "
     "program can start (cudart then reports error 35, insufficient driver).",
     "libcuda.so.1 cannot be loaded ({0}) although the kernel module {1} is loaded",
     "install the driver's CUDA library for branch {2}: {3}; in a container, start it with "
     "--gpus all and NVIDIA_DRIVER_CAPABILITIES containing compute",
     where("why libcuda.so.1 could not be loaded (the loader's error)",
           "version of the loaded kernel module", "the driver branch (\"580\")",
           "the command for this distribution (apt: sudo apt install libnvidia-compute-580; dnf: "
           "sudo dnf install nvidia-driver-cuda-libs; else where NVIDIA's guide lists it)")},
    {k_cuda_no_device, Severity::fail, "CUDA finds no device",
     "cuInit ran but found no CUDA device: none installed, none visible, or none usable.",
     "cuInit returned CUDA_ERROR_NO_DEVICE (100); {0}",
     "check CUDA_VISIBLE_DEVICES (unset it to see every GPU), MIG instances (nvidia-smi mig -lgi) "
     "and, in a container, that it was started with --gpus",
     where("what NVML sees, CUDA_VISIBLE_DEVICES and MIG GPUs without instances")},
    {k_cuda_no_visible_device, Severity::fail, "CUDA sees no device while NVML sees GPUs",
     "cuInit succeeded but reports zero devices while NVML lists GPUs: the GPUs are hidden by "
     "CUDA_VISIBLE_DEVICES or are MIG-enabled without instances.",
     "cuInit succeeded but CUDA sees 0 devices; {0}",
     "unset CUDA_VISIBLE_DEVICES or point it at existing GPUs; create MIG instances on "
     "MIG-enabled GPUs",
     where("what NVML sees, CUDA_VISIBLE_DEVICES and MIG GPUs without instances")},
    {k_cuda_stub_library, Severity::fail, "Stub libcuda loaded",
     "The loader picked the CUDA toolkit's link-time stub libcuda, which only exists to link "
     "against; at run time it makes cuInit return 34.",
     "the libcuda loaded is the toolkit's stub {0} (cuInit: {1})",
     "remove {2} from LD_LIBRARY_PATH (and from /etc/ld.so.conf.d) so the driver's libcuda.so.1 "
     "is found; never install a libcuda.so.1 that points into stubs/",
     where("path of the stub libcuda loaded", "what cuInit returned",
           "the stubs directory, to take out of the library path")},
    {k_cuda_system_driver_mismatch, Severity::fail, "libcuda does not match the kernel module",
     "libcuda belongs to a different driver version than the loaded kernel module (usually a "
     "driver upgrade without reboot).",
     "cuInit returned CUDA_ERROR_SYSTEM_DRIVER_MISMATCH (803): libcuda {0} ({1}) does not match "
     "the kernel module {2}",
     "reboot, or stop all GPU processes and reload the module (sudo rmmod nvidia_uvm nvidia_drm "
     "nvidia_modeset nvidia && sudo modprobe nvidia); if {1} comes from another driver "
     "installation, remove it",
     where("version of the libcuda loaded (from its file name)", "path of that libcuda",
           "version of the loaded kernel module"),
     Drain::yes},
    {k_cuda_system_not_ready, Severity::fail, "System not ready (Fabric Manager)",
     "On NVSwitch systems CUDA waits for the Fabric Manager; error 802 means it is not running "
     "or does not match the driver.",
     "cuInit returned CUDA_ERROR_SYSTEM_NOT_READY (802) with driver {0}",
     "install and start the Fabric Manager of exactly driver version {0} "
     "(sudo systemctl enable --now nvidia-fabricmanager) and check its log",
     where("driver version (kernel module, else NVML)"), Drain::yes},
    {k_cuda_unknown_error, Severity::fail, "cuInit unknown error (999)",
     "cuInit failed with CUDA_ERROR_UNKNOWN: most often the nvidia_uvm module is in a bad state "
     "after suspend/resume, not loaded, or /dev/nvidia-uvm is missing.",
     "cuInit returned CUDA_ERROR_UNKNOWN (999){0}",
     "stop GPU processes and reload the UVM module (sudo rmmod nvidia_uvm && sudo modprobe "
     "nvidia_uvm) or reboot; make sure /dev/nvidia-uvm exists (sudo nvidia-modprobe -u -c=0); "
     "after suspend/resume enable nvidia-suspend/nvidia-resume services",
     where("\"; the nvidia_uvm module is not loaded\", \"; /dev/nvidia-uvm does not exist\", or "
           "empty"),
     Drain::yes},
};

std::span<const FindingSpec> own_findings() {
  return k_findings;
}

constexpr CheckInfo k_info{"cuda.init", "CUDA driver initialises",
                           "libcuda.so.1 loads (and is not the toolkit stub), cuInit(0) succeeds "
                           "and CUDA sees at least one device.",
                           CheckKind::passive};

// CUresult values (cuda.h).
constexpr int k_result_stub_library = 34;
constexpr int k_result_insufficient_driver = 35;
constexpr int k_result_devices_unavailable = 46;
constexpr int k_result_no_device = 100;
constexpr int k_result_system_not_ready = 802;
constexpr int k_result_system_driver_mismatch = 803;
constexpr int k_result_compat_not_supported = 804;
constexpr int k_result_unknown = 999;

std::string library_file(const LibraryLoad& load) {
  return load.real_path.empty() ? load.path : load.real_path;
}

/// "NVML sees 2 GPU(s); CUDA_VISIBLE_DEVICES="-1"": what explains a CUDA with no device.
std::string visibility_context(const SystemSnapshot& s) {
  std::vector<std::string> parts;
  if (s.nvml.device_count) {
    parts.push_back(fmt::format("NVML sees {}", plural(*s.nvml.device_count, "GPU")));
  } else {
    parts.push_back("NVML gave no GPU count");
  }
  if (auto cvd = s.env("CUDA_VISIBLE_DEVICES")) {
    parts.push_back(fmt::format("CUDA_VISIBLE_DEVICES=\"{}\"", *cvd));
  }
  int mig_without_instances = 0;
  for (const GpuInfo& gpu : s.gpus) {
    if (gpu.mig_enabled.value_or(false) && gpu.mig_instance_count.value_or(-1) == 0) {
      ++mig_without_instances;
    }
  }
  if (mig_without_instances > 0) {
    parts.push_back(fmt::format("{} {} MIG enabled without instances",
                                plural(mig_without_instances, "GPU"),
                                mig_without_instances == 1 ? "has" : "have"));
  }
  return fmt::format("{}", fmt::join(parts, "; "));
}

std::string unknown_error_context(const SystemSnapshot& s) {
  const KernelModuleInfo& module = s.kernel_module;
  if (!module.proc_version_present) {
    return "";
  }
  if (!module.uvm_loaded) {
    return "; the nvidia_uvm module is not loaded";
  }
  for (const DeviceNode& node : module.device_nodes) {
    if (node.path == "/dev/nvidia-uvm" && !node.exists) {
      return "; /dev/nvidia-uvm does not exist";
    }
  }
  return "";
}

std::string compute_mode_context(const SystemSnapshot& s) {
  std::vector<std::string> modes;
  for (const GpuInfo& gpu : s.gpus) {
    if (gpu.compute_mode && *gpu.compute_mode != "default") {
      modes.push_back(fmt::format("GPU {} is {}", gpu.index, *gpu.compute_mode));
    }
  }
  return modes.empty() ? std::string() : fmt::format(" ({})", fmt::join(modes, ", "));
}

Finding finding_for_code(const SystemSnapshot& s, int code) {
  const CudaDriverInfo& cuda = s.cuda;
  const std::string file = library_file(cuda.library);
  switch (code) {
  case k_result_no_device:
    return make_finding(k_cuda_no_device, std::nullopt, visibility_context(s));
  case k_result_unknown:
    return make_finding(k_cuda_unknown_error, std::nullopt, unknown_error_context(s));
  case k_result_stub_library:
    return make_finding(k_cuda_stub_library, std::nullopt, file, "CUDA_ERROR_STUB_LIBRARY (34)",
                        directory_of(file));
  case k_result_insufficient_driver:
    return make_finding(k_cuda_insufficient_driver, std::nullopt,
                        cuda.driver_version ? cuda_version_text(*cuda.driver_version)
                                            : std::string("unknown"));
  case k_result_system_driver_mismatch:
    return make_finding(k_cuda_system_driver_mismatch, std::nullopt,
                        soname_version(file, "libcuda").value_or("of unknown version"), file,
                        module_version_text(s.kernel_module));
  case k_result_compat_not_supported:
    return make_finding(k_cuda_compat_unsupported, std::nullopt, file,
                        path_through_component(file, "compat").value_or(directory_of(file)));
  case k_result_devices_unavailable:
    return make_finding(k_cuda_devices_unavailable, std::nullopt, compute_mode_context(s));
  case k_result_system_not_ready:
    return make_finding(k_cuda_system_not_ready, std::nullopt,
                        driver_version(s).value_or("unknown"));
  default:
    return make_finding(
        k_cuda_init_failed, std::nullopt,
        cuda.init_result_name.empty() ? std::string("CUresult") : cuda.init_result_name, code,
        cuda.init_result_text.empty() ? std::string("no description") : cuda.init_result_text);
  }
}

std::vector<CheckResult> run(const CheckContext& context) {
  const SystemSnapshot& s = context.snapshot;
  const CudaDriverInfo& cuda = s.cuda;
  if (cuda.failure) {
    return {
        probe_failure_result(k_info, "CUDA driver probe (cuInit, cuDeviceGet*)", *cuda.failure)};
  }
  if (!cuda.library.loaded) {
    if (!s.kernel_module.proc_version_present) {
      return {skip_result(k_info, "libcuda.so.1 is not loadable and no kernel module is loaded "
                                  "(see driver.installed)")};
    }
    const std::string why =
        cuda.library.error.empty() ? std::string("not found") : cuda.library.error;
    return {make_result(
        k_info, "libcuda.so.1 cannot be loaded",
        {make_finding(k_cuda_library_missing, std::nullopt, why,
                      module_version_text(s.kernel_module), driver_branch_text(s),
                      driver_libraries_install(s.host.os, driver_branch_text(s), false))})};
  }
  const std::string file = library_file(cuda.library);
  if (auto stubs = path_through_component(file, "stubs")) {
    const std::string init = cuda.init_result
                                 ? fmt::format("{} ({})", cuda.init_result_name, *cuda.init_result)
                                 : std::string("not called");
    return {make_result(k_info, fmt::format("the stub libcuda {} is loaded", file),
                        {make_finding(k_cuda_stub_library, std::nullopt, file, init, *stubs)})};
  }
  if (!cuda.init_result) {
    return {skip_result(k_info, "cuInit was not called")};
  }
  const int code = *cuda.init_result;
  if (code != 0) {
    return {make_result(k_info, fmt::format("cuInit failed: {} ({})", cuda.init_result_name, code),
                        {finding_for_code(s, code)})};
  }
  if (cuda.device_count && *cuda.device_count == 0) {
    return {
        make_result(k_info, "cuInit succeeded but CUDA sees no device",
                    {make_finding(k_cuda_no_visible_device, std::nullopt, visibility_context(s))})};
  }
  const std::string driver =
      cuda.driver_version ? cuda_version_text(*cuda.driver_version) : std::string("unknown");
  const std::string count = cuda.device_count ? plural(*cuda.device_count, "device")
                                              : std::string("an unknown number of devices");
  return {make_result(k_info,
                      fmt::format("cuInit succeeded: driver supports CUDA {}, {} visible ({})",
                                  driver, count, file),
                      {})};
}
} // namespace

CheckDef cuda_init_check() {
  return {k_info, &run, &own_findings};
}

} // namespace gpucheck::checks
