#include "compat/gpu_models.hpp"

namespace gpucheck::compat {

namespace {
// NVIDIA's product pages carry each board's datasheet table. Tensor-core figures there are
// "with sparsity": the dense peak is half. NVLink 4 on Hopper: 18 links, 900 GB/s both ways.
constexpr GpuModelSpec k_models[] = {
    {"NVIDIA H200", 4800.0, 67.0, 989.5, 4, 18, 450.0, 132, 1980,
     "NVIDIA H200 Tensor Core GPU datasheet, H200 SXM column "
     "(https://www.nvidia.com/en-us/data-center/h200/): GPU memory bandwidth 4.8 TB/s, FP32 67 "
     "TFLOPS, FP16 Tensor Core 1,979 TFLOPS with sparsity, NVLink 900 GB/s"},
    {"NVIDIA H100 80GB HBM3", 3350.0, 67.0, 989.5, 4, 18, 450.0, 132, 1980,
     "NVIDIA H100 Tensor Core GPU datasheet, H100 SXM column "
     "(https://www.nvidia.com/en-us/data-center/h100/): GPU memory bandwidth 3.35 TB/s, FP32 67 "
     "TFLOPS, FP16 Tensor Core 1,979 TFLOPS with sparsity, NVLink 900 GB/s"},
    {"NVIDIA A100-SXM4-80GB", 2039.0, 19.5, 312.0, 3, 12, 300.0, 108, 1410,
     "NVIDIA A100 Tensor Core GPU datasheet, A100 80GB SXM column "
     "(https://www.nvidia.com/en-us/data-center/a100/): GPU memory bandwidth 2,039 GB/s, FP32 "
     "19.5 TFLOPS, FP16 Tensor Core 312 TFLOPS (624 with sparsity), NVLink 600 GB/s"},
};
} // namespace

std::span<const GpuModelSpec> gpu_model_specs() {
  return k_models;
}

const GpuModelSpec* find_gpu_model(std::string_view name) {
  for (const GpuModelSpec& model : k_models) {
    if (model.name == name) {
      return &model;
    }
  }
  return nullptr;
}

} // namespace gpucheck::compat
