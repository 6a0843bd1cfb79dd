#include "golden/scenarios.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "core/root_causes.hpp"
#include "gpucheck/model/json_io.hpp"

namespace gpucheck::testing {

namespace {

using std::chrono::milliseconds;

std::string snapshot_dir() {
  return std::string(GPUCHECK_TEST_DATA_DIR) + "/snapshots";
}

Finding finding(std::string code, Severity severity, std::string message, std::string remedy,
                std::optional<int> gpu = std::nullopt) {
  return Finding{std::move(code), severity, std::move(message), std::move(remedy), gpu};
}

Metric metric(std::string name, double value, std::string unit, std::string note = "") {
  return Metric{std::move(name), value, std::move(unit), std::move(note)};
}

/// A figure with its expected floor (docs/checks.md, "Expected figures").
Metric metric(std::string name, double value, std::string unit, std::string note, double floor,
              std::string expected) {
  Metric m{std::move(name), value, std::move(unit), std::move(note)};
  m.expected_min = floor;
  m.expected = std::move(expected);
  return m;
}

CheckResult scenario_result(std::string id, std::string title, Status status, std::string summary,
                            std::optional<int> gpu = std::nullopt,
                            std::vector<Finding> findings = {}, std::vector<Metric> metrics = {},
                            int64_t duration_ms = 1) {
  CheckResult r;
  r.check_id = std::move(id);
  r.title = std::move(title);
  r.status = status;
  r.summary = std::move(summary);
  r.gpu_index = gpu;
  r.findings = std::move(findings);
  for (Metric& m : metrics) {
    r.metrics.push_back(labelled(std::move(m))); // named as the checks name them
  }
  r.duration = milliseconds(duration_ms);
  return r;
}

Report make_report(const std::string& name, std::string mode, std::vector<CheckResult> results) {
  Report report;
  report.context.tool_version = "0.1.0";
  report.context.generated_at = "2026-11-21T12:00:00Z";
  report.context.mode = std::move(mode);
  report.context.matrix_version = "2026.11.1";
  report.context.argv = {"--from-snapshot", "tests/snapshots/" + name + ".json"};
  report.snapshot = load_recorded_snapshot(name);
  report.results = std::move(results);
  report.summary = summarize(report.results);
  report.root_causes = find_root_causes(report.results);
  return report;
}

Scenario h200_healthy() {
  std::vector<CheckResult> r;
  r.push_back(scenario_result("driver.kernel_module", "NVIDIA kernel module", Status::pass,
                              "580.159.04 (open) loaded, nvidia_uvm loaded"));
  r.push_back(scenario_result("driver.nvml", "NVML initialises", Status::pass,
                              "NVML 13.580.159.04 sees 1 GPU"));
  r.push_back(scenario_result("cuda.init", "CUDA driver initialises", Status::pass,
                              "cuInit ok, CUDA 13.0, 1 device"));
  r.push_back(scenario_result(
      "lib.cudnn", "cuDNN loads", Status::warn,
      "cuDNN 9.14.0 loads for the bare name; another copy (9.19.0) is installed", std::nullopt,
      {finding("lib.cudnn_older_copy_loaded", Severity::warn,
               "2 copies of cuDNN 9 are installed: 9.14.0 "
               "(/usr/lib/x86_64-linux-gnu/libcudnn.so.9.14.0, picked by the loader) and 9.19.0 "
               "(/usr/local/lib/python3.12/dist-packages/nvidia/cudnn/lib/libcudnn.so.9, pip); "
               "a program gets one or the other depending on how it loads cuDNN",
               "keep one copy, or make sure each program loads the one it was built for (PyTorch "
               "uses its own pip copy; check with gpucheck -v)"),
       finding("compat.cudnn_arch_unconfirmed", Severity::info,
               "cuDNN 9.14.0's architectures are not in the matrix", "")}));
  r.push_back(scenario_result("gpu.ecc", "ECC and memory health", Status::pass,
                              "ECC on, no uncorrected errors, no pending remap", 0));
  r.push_back(
      scenario_result("gpu.pcie_link", "PCIe link width", Status::pass, "Gen5 x16 of Gen5 x16", 0));
  r.push_back(scenario_result("gpu.bandwidth", "Host-device copy bandwidth", Status::pass,
                              "pinned copies reach 88% of the PCIe Gen5 x16 limit", 0, {},
                              {metric("h2d_gbps", 55.52, "GB/s", "pinned, 256 MiB, median of 20",
                                      40.3, "0.64 of PCIe Gen5 x16's 63.0 GB/s"),
                               metric("d2h_gbps", 55.41, "GB/s", "pinned, 256 MiB, median of 20"),
                               metric("h2d_pageable_gbps", 24.3, "GB/s", "median of 20"),
                               metric("d2d_gbps", 2093.6, "GB/s", "device-local, bytes copied")},
                              1840));
  r.push_back(scenario_result(
      "gpu.cudnn", "cuDNN convolutions", Status::pass,
      "conv 64x64x56x56 3x3 fp32 matches the reference", 0, {},
      {metric("conv_fp32_tflops", 40.2, "TFLOP/s"), metric("max_abs_error", 0.000031, "")}, 2310));
  return {"h200_healthy", make_report("h200_healthy", "standard", std::move(r))};
}

Scenario h100x8_healthy() {
  std::vector<CheckResult> r;
  r.push_back(scenario_result("driver.kernel_module", "NVIDIA kernel module", Status::pass,
                              "570.172.08 (open) loaded, nvidia_uvm loaded"));
  r.push_back(scenario_result("driver.nvml", "NVML initialises", Status::pass,
                              "NVML 12.570.172.08 sees 8 GPUs"));
  r.push_back(scenario_result("cuda.init", "CUDA driver initialises", Status::pass,
                              "cuInit ok, CUDA 12.8, 8 devices"));
  for (int gpu = 0; gpu < 8; ++gpu) {
    r.push_back(scenario_result("gpu.ecc", "ECC and memory health", Status::pass,
                                "ECC on, no uncorrected errors, no pending remap", gpu));
  }
  for (int gpu = 0; gpu < 8; ++gpu) {
    r.push_back(scenario_result("gpu.persistence", "Persistence mode", Status::pass,
                                "persistence mode on", gpu));
  }
  for (int gpu = 0; gpu < 8; ++gpu) {
    r.push_back(scenario_result("gpu.bandwidth", "Host-device copy bandwidth", Status::skip,
                                "--quick: no GPU work", gpu, {}, {}, 0));
  }
  r.push_back(scenario_result("gpu.nccl", "NCCL all-reduce", Status::skip, "--quick: no GPU work",
                              std::nullopt, {}, {}, 0));
  return {"h100x8_healthy", make_report("h100x8_healthy", "quick", std::move(r))};
}

Scenario no_driver() {
  std::vector<CheckResult> r;
  r.push_back(scenario_result(
      "driver.kernel_module", "NVIDIA kernel module", Status::fail, "no NVIDIA kernel module",
      std::nullopt,
      {finding("driver.missing", Severity::fail,
               "no NVIDIA driver: /proc/driver/nvidia/version is absent and libcuda.so.1 cannot be "
               "loaded",
               "install the NVIDIA driver for this GPU (e.g. apt install nvidia-driver-580 or the "
               ".run installer from nvidia.com), then reboot")}));
  r.push_back(scenario_result("driver.nvml", "NVML initialises", Status::skip,
                              "libnvidia-ml.so.1 is not installed"));
  r.push_back(scenario_result("cuda.init", "CUDA driver initialises", Status::skip,
                              "libcuda.so.1 is not installed"));
  r.push_back(scenario_result("lib.cudart", "CUDA runtime loads", Status::pass,
                              "libcudart.so.13 (13.0) loads from /usr/local/lib"));
  r.push_back(scenario_result("lib.cudnn", "cuDNN loads", Status::pass,
                              "cuDNN 9.19.0 built for CUDA 13.0 loads; 7 sub-libraries load"));
  r.push_back(scenario_result("compat.toolkit_driver", "Toolkit and driver", Status::error,
                              "internal error in check: could not parse nvcc --version output"));
  r.push_back(scenario_result("gpu.ecc", "ECC and memory health", Status::skip, "no GPU"));
  return {"no_driver", make_report("no_driver", "standard", std::move(r))};
}

Scenario nvml_mismatch() {
  std::vector<CheckResult> r;
  r.push_back(scenario_result("driver.kernel_module", "NVIDIA kernel module", Status::pass,
                              "570.158.01 (proprietary) loaded, nvidia_uvm loaded"));
  r.push_back(scenario_result(
      "driver.nvml", "NVML initialises", Status::fail,
      "nvmlInit_v2 returned 18 (LIB_RM_VERSION_MISMATCH)", std::nullopt,
      {finding("driver.version_mismatch", Severity::fail,
               "the loaded kernel module is 570.158.01 but the user-space driver libraries are "
               "570.172.08 (/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.570.172.08): the driver "
               "was upgraded while the old module stayed loaded",
               "reboot, or unload and reload the NVIDIA modules (nvidia_uvm, nvidia_drm, "
               "nvidia_modeset, nvidia) when nothing uses the GPU; then hold the driver packages "
               "(apt-mark hold) so unattended upgrades cannot do this again")}));
  r.push_back(scenario_result(
      "cuda.init", "CUDA driver initialises", Status::fail,
      "cuInit returned 803 (CUDA_ERROR_SYSTEM_DRIVER_MISMATCH)", std::nullopt,
      {finding("cuda.init_failed", Severity::fail,
               "cuInit failed with CUDA_ERROR_SYSTEM_DRIVER_MISMATCH (803): system has unsupported "
               "display driver / cuda driver combination",
               "same cause as driver.version_mismatch: reboot to load the 570.172.08 module")}));
  r.push_back(scenario_result(
      "lib.cudnn", "cuDNN loads", Status::warn, "libcudnn.so.9 is not installed", std::nullopt,
      {finding("lib.cudnn_missing", Severity::warn,
               "no cuDNN found: libcudnn.so.9 is not on the loader path",
               "pip install nvidia-cudnn-cu12, or apt install libcudnn9-cuda-12")}));
  return {"nvml_mismatch", make_report("nvml_mismatch", "standard", std::move(r))};
}

Scenario degraded_hw() {
  std::vector<CheckResult> r;
  r.push_back(scenario_result("driver.kernel_module", "NVIDIA kernel module", Status::pass,
                              "580.95.05 (open) loaded, nvidia_uvm loaded"));
  r.push_back(scenario_result("gpu.ecc", "ECC and memory health", Status::pass,
                              "ECC on, no uncorrected errors, no pending remap", 0));
  r.push_back(scenario_result(
      "gpu.ecc", "ECC and memory health", Status::fail,
      "3 uncorrected ECC errors; a row remap waits for a GPU reset", 1,
      {finding("gpu.ecc_uncorrected", Severity::fail,
               "GPU 1 (NVIDIA H100 PCIe, 00000000:41:00.0) has 3 uncorrected ECC errors since "
               "the driver was loaded",
               "drain the GPU, then reset it (nvidia-smi -r -i 1) or reboot; if uncorrected errors "
               "come back, replace the board",
               1),
       finding("gpu.row_remap_pending", Severity::fail,
               "GPU 1 has a row remap pending: it takes effect only after a GPU reset",
               "reset the GPU (nvidia-smi -r -i 1) or reboot before running work on it", 1)}));
  r.push_back(scenario_result("gpu.ecc", "ECC and memory health", Status::pass,
                              "ECC on, no uncorrected errors, no pending remap", 2));
  r.push_back(scenario_result("gpu.ecc", "ECC and memory health", Status::pass,
                              "ECC on, no uncorrected errors, no pending remap", 3));
  r.push_back(
      scenario_result("gpu.pcie_link", "PCIe link width", Status::pass, "Gen5 x16 of Gen5 x16", 0));
  r.push_back(
      scenario_result("gpu.pcie_link", "PCIe link width", Status::pass, "Gen5 x16 of Gen5 x16", 1));
  r.push_back(scenario_result(
      "gpu.pcie_link", "PCIe link width", Status::warn, "link trained to x4 of x16", 2,
      {finding("gpu.pcie_width_degraded", Severity::warn,
               "GPU 2 (0000:a1:00.0) runs its PCIe link at x4 although it and the slot support "
               "x16: host-device copies get a quarter of the bandwidth",
               "reseat the card or move it to a full x16 slot, and remove any riser; check the "
               "slot's bifurcation setting in the BIOS",
               2)},
      {metric("h2d_gbps", 13.9, "GB/s", "pinned, 256 MiB, median of 20", 40.3,
              "0.64 of PCIe Gen5 x16's 63.0 GB/s")},
      1510));
  r.push_back(
      scenario_result("gpu.pcie_link", "PCIe link width", Status::pass, "Gen5 x16 of Gen5 x16", 3));
  r.push_back(scenario_result(
      "gpu.clocks", "Clock slowdown", Status::fail,
      "clocks held down by hardware thermal slowdown at 91 C", 3,
      {finding("gpu.clocks_thermal_slowdown", Severity::fail,
               "GPU 3 is at 91 C and its clocks are held at 1110 of 1755 MHz by HW slowdown and "
               "HW thermal slowdown (clock event reasons 0x48)",
               "check the chassis airflow and fans and the BMC thermal profile for this GPU "
               "model; the GPU slows down until it cools",
               3)}));
  return {"degraded_hw", make_report("degraded_hw", "standard", std::move(r))};
}

} // namespace

SystemSnapshot load_recorded_snapshot(const std::string& name) {
  const std::string path = snapshot_dir() + "/" + name + ".json";
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw std::runtime_error("cannot read " + path);
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  Expected<SystemSnapshot> snapshot = snapshot_from_text(buffer.str());
  if (!snapshot) {
    throw std::runtime_error(path + ": " + snapshot.error().message);
  }
  return std::move(snapshot).value();
}

std::vector<std::string> recorded_snapshot_names() {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(snapshot_dir())) {
    if (entry.path().extension() == ".json") {
      names.push_back(entry.path().stem().string());
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<Scenario> golden_scenarios() {
  return {h200_healthy(), h100x8_healthy(), no_driver(), nvml_mismatch(), degraded_hw()};
}

} // namespace gpucheck::testing
