#include "platform/nvml_api.hpp"

#include <map>
#include <string_view>

namespace gpucheck::platform {

NvmlApi load_nvml_api(DynamicLibrary& lib) {
  NvmlApi api;
#define GPUCHECK_NVML_LOAD(field, signature, ...)                                                  \
  api.field = lib.first_function<decltype(api.field)>({__VA_ARGS__});
  GPUCHECK_NVML_FUNCTIONS(GPUCHECK_NVML_LOAD)
#undef GPUCHECK_NVML_LOAD
  api.usable = lib.loaded() && api.nvmlInit != nullptr && api.nvmlDeviceGetCount != nullptr &&
               api.nvmlDeviceGetHandleByIndex != nullptr;
  return api;
}

std::string nvml_error_name(int code) {
  // nvmlReturn_t (NVML API 13), without the NVML_ERROR_ prefix.
  static const std::map<int, std::string_view> k_names{
      {0, "SUCCESS"},
      {1, "UNINITIALIZED"},
      {2, "INVALID_ARGUMENT"},
      {3, "NOT_SUPPORTED"},
      {4, "NO_PERMISSION"},
      {5, "ALREADY_INITIALIZED"},
      {6, "NOT_FOUND"},
      {7, "INSUFFICIENT_SIZE"},
      {8, "INSUFFICIENT_POWER"},
      {9, "DRIVER_NOT_LOADED"},
      {10, "TIMEOUT"},
      {11, "IRQ_ISSUE"},
      {12, "LIBRARY_NOT_FOUND"},
      {13, "FUNCTION_NOT_FOUND"},
      {14, "CORRUPTED_INFOROM"},
      {15, "GPU_IS_LOST"},
      {16, "RESET_REQUIRED"},
      {17, "OPERATING_SYSTEM"},
      {18, "LIB_RM_VERSION_MISMATCH"},
      {19, "IN_USE"},
      {20, "MEMORY"},
      {21, "NO_DATA"},
      {22, "VGPU_ECC_NOT_SUPPORTED"},
      {23, "INSUFFICIENT_RESOURCES"},
      {24, "FREQ_NOT_SUPPORTED"},
      {25, "ARGUMENT_VERSION_MISMATCH"},
      {26, "DEPRECATED"},
      {27, "NOT_READY"},
      {28, "GPU_NOT_FOUND"},
      {29, "INVALID_STATE"},
      {30, "RESET_TYPE_NOT_SUPPORTED"},
      {999, "UNKNOWN"},
  };
  const auto it = k_names.find(code);
  return it != k_names.end() ? std::string(it->second) : "NVML_ERROR_" + std::to_string(code);
}

} // namespace gpucheck::platform
