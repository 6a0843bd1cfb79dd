#pragma once
/// The CUDA driver API as a table of function pointers resolved with dlsym from libcuda.so.1.
/// Types come from the toolkit's cuda.h (header only: nothing from CUDA is linked). cuda.h maps
/// names to their current versions (cuMemAlloc -> cuMemAlloc_v2); each entry is resolved by that
/// versioned name first and by the plain name second, so older drivers still load.
/// Only child processes may call load_cuda_api().

#include <cuda.h>

#include <string>
#include <vector>

#include "platform/dynlib.hpp"

namespace gpucheck::platform {

// X(name, required): required symbols missing make the table unusable (cuInit & co).
#define GPUCHECK_CUDA_FUNCTIONS(X)                                                                 \
  X(cuInit, true)                                                                                  \
  X(cuDriverGetVersion, true)                                                                      \
  X(cuGetErrorName, false)                                                                         \
  X(cuGetErrorString, false)                                                                       \
  X(cuDeviceGetCount, true)                                                                        \
  X(cuDeviceGet, true)                                                                             \
  X(cuDeviceGetName, true)                                                                         \
  X(cuDeviceGetAttribute, true)                                                                    \
  X(cuDeviceTotalMem, true)                                                                        \
  X(cuDeviceGetUuid, false)                                                                        \
  X(cuDeviceGetPCIBusId, false)                                                                    \
  X(cuDevicePrimaryCtxRetain, false)                                                               \
  X(cuDevicePrimaryCtxRelease, false)                                                              \
  X(cuCtxSetCurrent, false)                                                                        \
  X(cuCtxSynchronize, false)                                                                       \
  X(cuCtxSetLimit, false)                                                                          \
  X(cuCtxGetStreamPriorityRange, false)                                                            \
  X(cuMemGetInfo, false)                                                                           \
  X(cuMemAlloc, false)                                                                             \
  X(cuMemFree, false)                                                                              \
  X(cuMemHostAlloc, false)                                                                         \
  X(cuMemFreeHost, false)                                                                          \
  X(cuMemHostGetDevicePointer, false)                                                              \
  X(cuMemHostRegister, false)                                                                      \
  X(cuMemHostUnregister, false)                                                                    \
  X(cuMemcpyHtoD, false)                                                                           \
  X(cuMemcpyDtoH, false)                                                                           \
  X(cuMemcpyHtoDAsync, false)                                                                      \
  X(cuMemcpyDtoHAsync, false)                                                                      \
  X(cuMemcpyDtoDAsync, false)                                                                      \
  X(cuMemsetD32Async, false)                                                                       \
  X(cuMemsetD8, false)                                                                             \
  X(cuStreamCreate, false)                                                                         \
  X(cuStreamCreateWithPriority, false)                                                             \
  X(cuStreamGetPriority, false)                                                                    \
  X(cuStreamDestroy, false)                                                                        \
  X(cuStreamSynchronize, false)                                                                    \
  X(cuStreamWaitEvent, false)                                                                      \
  X(cuStreamBeginCapture, false)                                                                   \
  X(cuStreamEndCapture, false)                                                                     \
  X(cuEventCreate, false)                                                                          \
  X(cuEventDestroy, false)                                                                         \
  X(cuEventRecord, false)                                                                          \
  X(cuEventSynchronize, false)                                                                     \
  X(cuEventElapsedTime, false)                                                                     \
  X(cuModuleLoadDataEx, false)                                                                     \
  X(cuModuleUnload, false)                                                                         \
  X(cuModuleGetFunction, false)                                                                    \
  X(cuFuncGetAttribute, false)                                                                     \
  X(cuLaunchKernel, false)                                                                         \
  X(cuGraphInstantiate, false)                                                                     \
  X(cuGraphLaunch, false)                                                                          \
  X(cuGraphExecDestroy, false)                                                                     \
  X(cuGraphDestroy, false)                                                                         \
  X(cuDeviceCanAccessPeer, false)                                                                  \
  X(cuDeviceGetP2PAttribute, false)                                                                \
  X(cuCtxEnablePeerAccess, false)                                                                  \
  X(cuStreamWaitValue32, false)

struct CudaApi {
#define GPUCHECK_CUDA_FIELD(name, required) decltype(&::name) name = nullptr;
  GPUCHECK_CUDA_FUNCTIONS(GPUCHECK_CUDA_FIELD)
#undef GPUCHECK_CUDA_FIELD

  /// Every required symbol resolved.
  bool usable = false;
};

/// Resolve every entry from an opened libcuda. Missing symbols are recorded in lib.load().
CudaApi load_cuda_api(DynamicLibrary& lib);

/// "CUDA_ERROR_NO_DEVICE" for 100, from a built-in table (the stub libcuda cannot name codes).
std::string cuda_error_name(int code);
/// Plain words for a CUresult, from the same table ("no CUDA-capable device is detected").
std::string cuda_error_text(int code);

} // namespace gpucheck::platform
