#include "gpu/cuda_call.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <string>

#include "platform/cuda_api.hpp"

namespace gpucheck::gpu {

CudaCallError::CudaCallError(std::string call, int code)
    : std::runtime_error(code == -1 ? fmt::format("{}: symbol missing from libcuda", call)
                                    : fmt::format("{} returned {} ({})", call,
                                                  cuda_error_name(code), cuda_error_text(code))),
      m_call(std::move(call)), m_code(code) {}

void set_hardware_queues(int queues) {
  ::setenv("CUDA_DEVICE_MAX_CONNECTIONS", std::to_string(queues).c_str(), 1);
}

LoadedDriver load_driver() {
  LoadedDriver driver;
  driver.lib = DynamicLibrary::open("libcuda.so.1");
  if (!driver.lib.loaded()) {
    // dlerror() names the library first ("libcuda.so.1: cannot open shared object file: ...").
    const std::string& error = driver.lib.load().error;
    throw std::runtime_error(
        "cannot load " + (error.starts_with("libcuda.so.1") ? error : "libcuda.so.1: " + error));
  }
  driver.api = load_cuda_api(driver.lib);
  if (!driver.api.usable) {
    throw std::runtime_error("libcuda.so.1 lacks required driver API symbols");
  }
  return driver;
}

void check_cu(CUresult result, const char* call) {
  if (result != CUDA_SUCCESS) {
    throw CudaCallError(call, static_cast<int>(result));
  }
}

} // namespace gpucheck::gpu
