#include "platform/gpu/cudnn_api.hpp"

namespace gpucheck::platform::gpu {

CudnnApi load_cudnn_api(DynamicLibrary& lib) {
  CudnnApi api;
  bool usable = lib.loaded();
#define GPUCHECK_CUDNN_LOAD(name, required)                                                        \
  api.name = lib.function<decltype(api.name)>(#name, required);                                    \
  if ((required) && api.name == nullptr) {                                                         \
    usable = false;                                                                                \
  }
  GPUCHECK_CUDNN_FUNCTIONS(GPUCHECK_CUDNN_LOAD)
#undef GPUCHECK_CUDNN_LOAD
  api.usable = usable;
  return api;
}

} // namespace gpucheck::platform::gpu
