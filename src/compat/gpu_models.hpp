#pragma once
/// What NVIDIA's datasheets say each GPU model can do, with their sources: the peaks that the
/// expected floors of gpucheck's measured figures are fractions of
/// (checks/rules/expected_figures.hpp). Kept beside the compatibility matrix; only models whose
/// datasheet is cited are listed.

#include <span>
#include <string_view>

namespace gpucheck::compat {

struct GpuModelSpec {
  std::string_view name;     ///< the device name NVML and CUDA report, exactly
  double hbm_gbps;           ///< peak memory bandwidth, GB/s (1e9 bytes)
  double fp32_tflops;        ///< FP32 peak without tensor cores
  double fp16_tensor_tflops; ///< dense FP16 tensor-core peak (the datasheet's sparse figure / 2)
  int nvlink_generation;     ///< 0: none
  int nvlink_links;
  double nvlink_gbps; ///< every link together, one direction
  int sm_count;
  int boost_mhz;
  std::string_view source; ///< the datasheet, and where the figures stand in it
};

/// Every model of the table.
std::span<const GpuModelSpec> gpu_model_specs();
/// The model named `name` exactly (the SXM, PCIe and NVL boards of one chip differ in clocks,
/// memory and links, and have names of their own); nullptr for a model not in the table.
const GpuModelSpec* find_gpu_model(std::string_view name);

} // namespace gpucheck::compat
