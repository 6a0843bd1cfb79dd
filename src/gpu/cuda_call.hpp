#pragma once
/// The driver as a GPU child calls it: libcuda loaded (every child's opening), GPUCHECK_CU calling
/// an entry through the dlopened table (platform/cuda_api.hpp), and CudaCallError naming a failed
/// call and its CUresult.
///
/// A failed driver call throws CudaCallError, caught once by run_gpu_child() (gpu/child.hpp) and
/// written as {"failure": {...}}: inside a short-lived child that is the simplest way to stop at
/// the first broken call and still report which one, with its CUresult.
#include <cuda.h>

#include <stdexcept>
#include <string>

#include "platform/cuda_api.hpp"
#include "platform/dynlib.hpp"

namespace gpucheck::gpu {

// The platform's dlopened driver table, as every GPU child calls it.
using platform::cuda_error_name;
using platform::cuda_error_text;
using platform::CudaApi;
using platform::DynamicLibrary;
using platform::load_cuda_api;

/// libcuda.so.1 loaded and its table read: the opening of every GPU child, before cuInit.
struct LoadedDriver {
  DynamicLibrary lib;
  CudaApi api;
};
/// Throws std::runtime_error ("cannot load libcuda.so.1: cannot open shared object file: ...", or
/// "libcuda.so.1 lacks required driver API symbols") when the library does not load or lacks an
/// entry every child needs.
LoadedDriver load_driver();

/// The hardware work queues of each context this process builds (CUDA_DEVICE_MAX_CONNECTIONS,
/// read when a context is built): 8, the default, make a context about twice as slow to build
/// and tear down as one, most of all beside other processes' (docs/performance.md).
void set_hardware_queues(int queues);

/// A driver call that did not return CUDA_SUCCESS (code -1: the symbol is missing).
class CudaCallError : public std::runtime_error {
public:
  CudaCallError(std::string call, int code);
  [[nodiscard]] const std::string& call() const { return m_call; }
  [[nodiscard]] int code() const { return m_code; }

private:
  std::string m_call;
  int m_code;
};

/// Throw CudaCallError(call, result) unless result is CUDA_SUCCESS.
void check_cu(CUresult result, const char* call);

/// Call a driver entry through the table; throws when the symbol is missing or the call fails.
template <typename Fn, typename... Args> void cu_call(Fn fn, const char* name, Args... args) {
  if (fn == nullptr) {
    throw CudaCallError(name, -1);
  }
  check_cu(fn(args...), name);
}
#define GPUCHECK_CU(api, fn, ...) ::gpucheck::gpu::cu_call((api).fn, #fn, __VA_ARGS__)

} // namespace gpucheck::gpu
