#include <fmt/format.h>
#include <fmt/ranges.h>

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
constexpr CheckInfo k_info{"cuda.init", "CUDA driver initialises",
                           "libcuda.so.1 loads (and is not the toolkit stub), cuInit(0) succeeds "
                           "and CUDA sees at least one device.",
                           CheckKind::passive};

// CUresult values (cuda.h).
constexpr int k_cuda_stub_library = 34;
constexpr int k_cuda_insufficient_driver = 35;
constexpr int k_cuda_devices_unavailable = 46;
constexpr int k_cuda_no_device = 100;
constexpr int k_cuda_system_not_ready = 802;
constexpr int k_cuda_system_driver_mismatch = 803;
constexpr int k_cuda_compat_not_supported = 804;
constexpr int k_cuda_unknown = 999;

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
  case k_cuda_no_device:
    return make_finding(codes::k_cuda_no_device, std::nullopt, visibility_context(s));
  case k_cuda_unknown:
    return make_finding(codes::k_cuda_unknown_error, std::nullopt, unknown_error_context(s));
  case k_cuda_stub_library:
    return make_finding(codes::k_cuda_stub_library, std::nullopt, file,
                        "CUDA_ERROR_STUB_LIBRARY (34)", directory_of(file));
  case k_cuda_insufficient_driver:
    return make_finding(codes::k_cuda_insufficient_driver, std::nullopt,
                        cuda.driver_version ? cuda_version_text(*cuda.driver_version)
                                            : std::string("unknown"));
  case k_cuda_system_driver_mismatch:
    return make_finding(codes::k_cuda_system_driver_mismatch, std::nullopt,
                        soname_version(file, "libcuda").value_or("of unknown version"), file,
                        module_version_text(s.kernel_module));
  case k_cuda_compat_not_supported:
    return make_finding(codes::k_cuda_compat_unsupported, std::nullopt, file,
                        path_through_component(file, "compat").value_or(directory_of(file)));
  case k_cuda_devices_unavailable:
    return make_finding(codes::k_cuda_devices_unavailable, std::nullopt, compute_mode_context(s));
  case k_cuda_system_not_ready:
    return make_finding(codes::k_cuda_system_not_ready, std::nullopt,
                        driver_version(s).value_or("unknown"));
  default:
    return make_finding(
        codes::k_cuda_init_failed, std::nullopt,
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
        {make_finding(codes::k_cuda_library_missing, std::nullopt, why,
                      module_version_text(s.kernel_module), driver_branch_text(s),
                      driver_libraries_install(s.host.os, driver_branch_text(s), false))})};
  }
  const std::string file = library_file(cuda.library);
  if (auto stubs = path_through_component(file, "stubs")) {
    const std::string init = cuda.init_result
                                 ? fmt::format("{} ({})", cuda.init_result_name, *cuda.init_result)
                                 : std::string("not called");
    return {
        make_result(k_info, fmt::format("the stub libcuda {} is loaded", file),
                    {make_finding(codes::k_cuda_stub_library, std::nullopt, file, init, *stubs)})};
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
    return {make_result(
        k_info, "cuInit succeeded but CUDA sees no device",
        {make_finding(codes::k_cuda_no_visible_device, std::nullopt, visibility_context(s))})};
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
  return {k_info, &run};
}

} // namespace gpucheck::checks
