#pragma once
/// cuDNN's legacy API (present in 8.x and 9.x) as a table of function pointers resolved with
/// dlsym from libcudnn.so.9 (then .8). Types come from the toolkit's cudnn.h; nothing is linked.
/// Only child processes may load it: a missing sub-library makes cuDNN 9 abort the process.

#include <cudnn.h>

#include <string>

#include "platform/dynlib.hpp"

namespace gpucheck::platform::gpu {

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
CudnnApi load_cudnn_api(DynamicLibrary& lib);

} // namespace gpucheck::platform::gpu
