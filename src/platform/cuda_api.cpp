#include "platform/cuda_api.hpp"

#include <map>
#include <string_view>
#include <utility>

namespace gpucheck::platform {

#define GPUCHECK_STR_EXPANDED(x) GPUCHECK_STR_RAW(x)
#define GPUCHECK_STR_RAW(x) #x

CudaApi load_cuda_api(DynamicLibrary& lib) {
  CudaApi api;
  bool usable = lib.loaded();
  // Versioned name as cuda.h spells it now, then the plain name for older drivers.
#define GPUCHECK_CUDA_LOAD(name, required)                                                         \
  api.name = lib.first_function<decltype(api.name)>({GPUCHECK_STR_EXPANDED(name), #name});         \
  if ((required) && api.name == nullptr) {                                                         \
    usable = false;                                                                                \
  }
  GPUCHECK_CUDA_FUNCTIONS(GPUCHECK_CUDA_LOAD)
#undef GPUCHECK_CUDA_LOAD
  api.usable = usable;
  return api;
}

namespace {
// Names and texts from cuda.h (CUDA 13.0); the numbers a diagnostic tool meets.
const std::map<int, std::pair<std::string_view, std::string_view>>& error_table() {
  static const std::map<int, std::pair<std::string_view, std::string_view>> k_table{
      {0, {"CUDA_SUCCESS", "no error"}},
      {1, {"CUDA_ERROR_INVALID_VALUE", "invalid argument"}},
      {2, {"CUDA_ERROR_OUT_OF_MEMORY", "out of memory"}},
      {3, {"CUDA_ERROR_NOT_INITIALIZED", "the driver has not been initialised"}},
      {4, {"CUDA_ERROR_DEINITIALIZED", "the driver is shutting down"}},
      {34,
       {"CUDA_ERROR_STUB_LIBRARY",
        "the CUDA driver loaded is the toolkit's stub library, not a real driver"}},
      {35,
       {"CUDA_ERROR_INSUFFICIENT_DRIVER", "the installed driver is older than the CUDA runtime"}},
      {36, {"CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER", "this call needs a newer driver"}},
      {46,
       {"CUDA_ERROR_DEVICE_UNAVAILABLE",
        "the device is busy or unavailable (exclusive or prohibited compute mode)"}},
      {100, {"CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"}},
      {101, {"CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"}},
      {102, {"CUDA_ERROR_DEVICE_NOT_LICENSED", "the device is not licensed for this use"}},
      {200, {"CUDA_ERROR_INVALID_IMAGE", "the kernel image is invalid"}},
      {201, {"CUDA_ERROR_INVALID_CONTEXT", "invalid device context"}},
      {209,
       {"CUDA_ERROR_NO_BINARY_FOR_GPU",
        "no kernel image is available for execution on the device"}},
      {214, {"CUDA_ERROR_ECC_UNCORRECTABLE", "an uncorrectable ECC error was detected"}},
      {218, {"CUDA_ERROR_INVALID_PTX", "the PTX could not be compiled"}},
      {219, {"CUDA_ERROR_INVALID_GRAPHICS_CONTEXT", "invalid graphics context"}},
      {221, {"CUDA_ERROR_JIT_COMPILER_NOT_FOUND", "the PTX JIT compiler library was not found"}},
      {222,
       {"CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
        "the PTX was made by a newer toolkit than this driver supports"}},
      {223, {"CUDA_ERROR_JIT_COMPILATION_DISABLED", "PTX JIT compilation is disabled"}},
      {304, {"CUDA_ERROR_OPERATING_SYSTEM", "an operating system call failed"}},
      {400, {"CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"}},
      {500, {"CUDA_ERROR_NOT_FOUND", "named symbol not found"}},
      {600, {"CUDA_ERROR_NOT_READY", "the operation has not completed"}},
      {700, {"CUDA_ERROR_ILLEGAL_ADDRESS", "an illegal memory access was encountered"}},
      {702,
       {"CUDA_ERROR_LAUNCH_TIMEOUT", "the kernel ran too long and was stopped (display watchdog)"}},
      {719, {"CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure"}},
      {802,
       {"CUDA_ERROR_SYSTEM_NOT_READY", "the system is not ready (Fabric Manager not running?)"}},
      {803,
       {"CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
        "the user-space driver and the kernel module versions differ"}},
      {804,
       {"CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE",
        "the forward-compatibility driver does not support this GPU"}},
      {999, {"CUDA_ERROR_UNKNOWN", "unknown error"}},
  };
  return k_table;
}
} // namespace

std::string cuda_error_name(int code) {
  const auto it = error_table().find(code);
  return it != error_table().end() ? std::string(it->second.first)
                                   : "CUDA_ERROR_" + std::to_string(code);
}

std::string cuda_error_text(int code) {
  const auto it = error_table().find(code);
  return it != error_table().end() ? std::string(it->second.second) : "unrecognised CUDA error";
}

} // namespace gpucheck::platform
