#pragma once
/// cuDNN's legacy API (present in 8.x and 9.x) as a table of function pointers resolved with
/// dlsym from libcudnn.so.9 (then .8). Types come from the toolkit's cudnn.h; nothing is linked.
/// Only child processes may load it: a missing sub-library makes cuDNN 9 abort the process.
/// Beside it, cuDNN's backend (graph) API, in its own table: it is optional, and a library
/// without it still runs the legacy path.

#include <cudnn.h>

#include <string>
#include <vector>

#include "platform/dynlib.hpp"

namespace gpucheck::gpu_checks::cudnn {

// X(name, required)
#define GPUCHECK_CUDNN_FUNCTIONS(X)                                                                \
  X(cudnnGetVersion, true)                                                                         \
  X(cudnnGetCudartVersion, true)                                                                   \
  X(cudnnGetErrorString, true)                                                                     \
  X(cudnnGetLastErrorString, false)                                                                \
  X(cudnnCreate, true)                                                                             \
  X(cudnnDestroy, true)                                                                            \
  X(cudnnSetStream, true)                                                                          \
  X(cudnnCreateTensorDescriptor, true)                                                             \
  X(cudnnSetTensor4dDescriptor, true)                                                              \
  X(cudnnDestroyTensorDescriptor, true)                                                            \
  X(cudnnCreateFilterDescriptor, true)                                                             \
  X(cudnnSetFilter4dDescriptor, true)                                                              \
  X(cudnnDestroyFilterDescriptor, true)                                                            \
  X(cudnnCreateConvolutionDescriptor, true)                                                        \
  X(cudnnSetConvolution2dDescriptor, true)                                                         \
  X(cudnnSetConvolutionMathType, true)                                                             \
  X(cudnnGetConvolution2dForwardOutputDim, true)                                                   \
  X(cudnnDestroyConvolutionDescriptor, true)                                                       \
  X(cudnnGetConvolutionForwardAlgorithmMaxCount, true)                                             \
  X(cudnnGetConvolutionForwardAlgorithm_v7, true)                                                  \
  X(cudnnFindConvolutionForwardAlgorithmEx, true)                                                  \
  X(cudnnGetConvolutionForwardWorkspaceSize, true)                                                 \
  X(cudnnConvolutionForward, true)                                                                 \
  X(cudnnCreateActivationDescriptor, true)                                                         \
  X(cudnnSetActivationDescriptor, true)                                                            \
  X(cudnnActivationForward, true)                                                                  \
  X(cudnnDestroyActivationDescriptor, true)

struct CudnnApi {
#define GPUCHECK_CUDNN_FIELD(name, required) decltype(&::name) name = nullptr;
  GPUCHECK_CUDNN_FUNCTIONS(GPUCHECK_CUDNN_FIELD)
#undef GPUCHECK_CUDNN_FIELD

  /// Every required symbol resolved.
  bool usable = false;
};

/// Resolve every entry from an opened libcudnn. Missing symbols are recorded in lib.load().
CudnnApi load_cudnn_api(platform::DynamicLibrary& lib);

#define GPUCHECK_CUDNN_BACKEND_FUNCTIONS(X)                                                        \
  X(cudnnBackendCreateDescriptor)                                                                  \
  X(cudnnBackendSetAttribute)                                                                      \
  X(cudnnBackendGetAttribute)                                                                      \
  X(cudnnBackendFinalize)                                                                          \
  X(cudnnBackendExecute)                                                                           \
  X(cudnnBackendDestroyDescriptor)

/// cuDNN's backend (graph) API: descriptors, heuristics, execution plans.
struct CudnnBackendApi {
#define GPUCHECK_CUDNN_BACKEND_FIELD(name) decltype(&::name) name = nullptr;
  GPUCHECK_CUDNN_BACKEND_FUNCTIONS(GPUCHECK_CUDNN_BACKEND_FIELD)
#undef GPUCHECK_CUDNN_BACKEND_FIELD

  /// Every entry resolved; false means "no graph API here" and only the legacy path runs.
  bool available = false;
  /// The entries that did not resolve (empty when available).
  std::vector<std::string> missing;
};

/// Resolve the backend API from an opened libcudnn. Its symbols are optional: a missing one is
/// listed in `missing`, never in lib.load().missing_symbols, so the legacy API stays usable.
CudnnBackendApi load_cudnn_backend_api(platform::DynamicLibrary& lib);

} // namespace gpucheck::gpu_checks::cudnn
