#pragma once
/// Small synthetic snapshots for the check tests: a healthy H200 host to start from, and helpers
/// to run one check and read its codes.

#include <fmt/format.h>

#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "gpucheck/check.hpp"
#include "gpucheck/model/snapshot.hpp"

namespace gpucheck::testing {

constexpr uint64_t k_gib = 1024ULL * 1024ULL * 1024ULL;

/// GPU `index` of a healthy H200 at idle: driver 580.159.04, persistence on, ECC on with no
/// error, PCIe link at gen1 of gen5 (idle power saving) and x16 of x16, no slowdown.
inline GpuInfo healthy_h200_gpu(int index) {
  GpuInfo gpu;
  gpu.index = index;
  gpu.cuda_ordinal = index;
  gpu.name = "NVIDIA H200";
  gpu.uuid = fmt::format("GPU-5f3c2a1b-7d4e-4c2a-9b1f-00000000000{}", index);
  gpu.serial = fmt::format("165232400{}", 1000 + index);
  gpu.pci_bus_id = fmt::format("00000000:{:02X}:00.0", 0x1b + 0x20 * index);
  gpu.pci_device_id = "0x233510DE";
  gpu.cc_major = 9;
  gpu.cc_minor = 0;
  gpu.sm_count = 132;
  gpu.memory_total_bytes = 141 * k_gib;
  gpu.memory_used_bytes = k_gib / 2;
  gpu.memory_free_bytes = 141 * k_gib - k_gib / 2;
  gpu.pcie_gen_current = 1;
  gpu.pcie_gen_max = 5;
  gpu.pcie_width_current = 16;
  gpu.pcie_width_max = 16;
  gpu.persistence_mode = true;
  gpu.compute_mode = "default";
  gpu.mig_enabled = false;
  gpu.mig_pending = false;
  gpu.mig_instance_count = 0;
  gpu.ecc_enabled = true;
  gpu.ecc_uncorrected_volatile = 0;
  gpu.ecc_corrected_volatile = 0;
  gpu.ecc_uncorrected_aggregate = 0;
  gpu.remapped_rows_correctable = 0;
  gpu.remapped_rows_uncorrectable = 0;
  gpu.remapped_rows_pending = false;
  gpu.remapped_rows_failure = false;
  gpu.clock_event_reasons = 0x1; // GPU idle
  gpu.temperature_c = 31;
  gpu.power_w = 76.0;
  gpu.power_limit_w = 700.0;
  gpu.sm_clock_mhz = 345;
  gpu.sm_clock_max_mhz = 1980;
  return gpu;
}

inline DeviceNode node(std::string path, bool exists = true, bool readable = true,
                       bool writable = true) {
  DeviceNode n;
  n.path = std::move(path);
  n.exists = exists;
  n.readable = exists && readable;
  n.writable = exists && writable;
  n.mode = exists ? std::optional<uint32_t>(0666) : std::nullopt;
  return n;
}

inline LibraryLoad loaded(std::string name, std::string real_path, std::string version) {
  LibraryLoad load;
  load.name = std::move(name);
  load.loaded = true;
  load.path = real_path;
  load.real_path = std::move(real_path);
  load.version = std::move(version);
  return load;
}

inline LibraryLoad not_loaded(std::string name) {
  LibraryLoad load;
  load.name = name;
  load.error = fmt::format("{}: cannot open shared object file: No such file or directory", name);
  return load;
}

inline LibraryCopy copy(std::string real_path, std::string version, bool selected,
                        std::optional<int64_t> cudart = std::nullopt) {
  LibraryCopy c;
  c.path = real_path;
  c.real_path = std::move(real_path);
  c.origin = "ldconfig";
  c.version = std::move(version);
  c.selected = selected;
  c.cudart_version = cudart;
  return c;
}

/// A healthy host with `gpu_count` H200s, CUDA 13 runtime and cuDNN 9.19.0, not in a container.
inline SystemSnapshot healthy_h200(int gpu_count = 1) {
  SystemSnapshot s;
  s.collected_at = "2026-11-21T10:00:00Z";
  s.host.hostname = "node1";
  s.host.kernel = "6.8.0-45-generic";
  s.host.arch = "x86_64";

  KernelModuleInfo& module = s.kernel_module;
  module.proc_version_present = true;
  module.version = "580.159.04";
  module.flavor = "open";
  module.version_text = "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04";
  module.nvidia_loaded = true;
  module.uvm_loaded = true;
  module.device_nodes = {node("/dev/nvidiactl"), node("/dev/nvidia-uvm"),
                         node("/dev/nvidia-uvm-tools")};

  s.nvml.library = loaded("libnvidia-ml.so.1",
                          "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.580.159.04", "12.580.159.04");
  s.nvml.init_result = 0;
  s.nvml.init_result_name = "SUCCESS";
  s.nvml.driver_version = "580.159.04";
  s.nvml.cuda_driver_version = 13000;
  s.nvml.nvml_version = "13.580.159.04";
  s.nvml.device_count = gpu_count;

  s.cuda.library =
      loaded("libcuda.so.1", "/usr/lib/x86_64-linux-gnu/libcuda.so.580.159.04", "13.0");
  s.cuda.driver_version = 13000;
  s.cuda.init_result = 0;
  s.cuda.init_result_name = "CUDA_SUCCESS";
  s.cuda.init_result_text = "no error";
  s.cuda.device_count = gpu_count;

  for (int i = 0; i < gpu_count; ++i) {
    GpuInfo gpu = healthy_h200_gpu(i);
    module.device_nodes.push_back(node(fmt::format("/dev/nvidia{}", i)));
    PciDevice pci;
    pci.bdf = fmt::format("0000:{:02x}:00.0", 0x1b + 0x20 * i);
    pci.device_id = "0x2335";
    pci.class_code = "0x030200";
    pci.driver = "nvidia";
    pci.current_link_speed = "2.5 GT/s PCIe";
    pci.current_link_width = 16;
    pci.max_link_speed = "32.0 GT/s PCIe";
    pci.max_link_width = 16;
    module.pci_devices.push_back(pci);
    CudaDevice device;
    device.ordinal = i;
    device.name = gpu.name;
    device.uuid = gpu.uuid;
    device.pci_bus_id = gpu.pci_bus_id;
    device.cc_major = 9;
    s.cuda.devices.push_back(device);
    s.gpus.push_back(std::move(gpu));
  }

  LibraryFamily cudart;
  cudart.family = "cudart";
  cudart.load =
      loaded("libcudart.so.13",
             "/usr/local/cuda-13.0/targets/x86_64-linux/lib/libcudart.so.13.0.88", "13.0.88");
  cudart.copies = {copy(cudart.load.real_path, "13.0.88", true)};
  s.libraries.push_back(cudart);

  LibraryFamily cudnn;
  cudnn.family = "cudnn";
  cudnn.load = loaded("libcudnn.so.9", "/usr/lib/x86_64-linux-gnu/libcudnn.so.9.19.0", "9.19.0");
  cudnn.copies = {copy(cudnn.load.real_path, "9.19.0", true, 13010)};
  CudnnDetails details;
  details.cudart_version = 13010;
  details.max_device_version = 1210;
  for (const char* sub : {"libcudnn_graph.so.9", "libcudnn_engines_precompiled.so.9",
                          "libcudnn_ops.so.9", "libcudnn_cnn.so.9"}) {
    CudnnSublibrary lib;
    lib.name = sub;
    lib.loaded = true;
    lib.path = fmt::format("/usr/lib/x86_64-linux-gnu/{}", sub);
    lib.version_check = 0;
    details.sublibraries.push_back(lib);
  }
  cudnn.cudnn = details;
  s.libraries.push_back(cudnn);
  return s;
}

/// The family `name` of snapshot `s`, to change; throws std::logic_error if `s` has none.
inline LibraryFamily& family(SystemSnapshot& s, std::string_view name) {
  for (LibraryFamily& f : s.libraries) {
    if (f.family == name) {
      return f;
    }
  }
  throw std::logic_error("no such family in the test snapshot");
}

/// A probe child killed by `signal_name` with `stderr_tail`.
inline ChildFailure crashed(std::string signal_name, int signal, std::string stderr_tail) {
  ChildFailure f;
  f.kind = ChildFailureKind::signal;
  f.signal = signal;
  f.signal_name = std::move(signal_name);
  f.detail = fmt::format("crashed with {}", f.signal_name);
  f.stderr_tail = std::move(stderr_tail);
  return f;
}

inline ChildFailure timed_out(double seconds) {
  ChildFailure f;
  f.kind = ChildFailureKind::timeout;
  f.timeout_s = seconds;
  f.detail = fmt::format("no result within {} s", seconds);
  return f;
}

inline std::vector<CheckResult> run_check(const CheckDef& check, const SystemSnapshot& snapshot,
                                          const CheckOptions& options = {}) {
  const CheckContext context{snapshot, options};
  return check.run(context);
}

inline std::vector<std::string> codes_of(const CheckResult& result) {
  std::vector<std::string> codes;
  for (const Finding& finding : result.findings) {
    codes.push_back(finding.code);
  }
  return codes;
}

/// One row of a table-driven check test: a change to the healthy snapshot and what it yields.
struct CheckCase {
  std::string name;
  std::function<void(SystemSnapshot&)> mutate;
  Status status;
  std::vector<std::string> codes;
};

} // namespace gpucheck::testing
