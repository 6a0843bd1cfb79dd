#include "gpu_checks/cudnn/api.hpp"

namespace gpucheck::gpu_checks::cudnn {

CudnnApi load_cudnn_api(platform::DynamicLibrary& lib) {
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

CudnnBackendApi load_cudnn_backend_api(platform::DynamicLibrary& lib) {
  CudnnBackendApi api;
  if (!lib.loaded()) {
    return api;
  }
#define GPUCHECK_CUDNN_BACKEND_LOAD(name)                                                          \
  api.name = lib.function<decltype(api.name)>(#name, false);                                       \
  if (api.name == nullptr) {                                                                       \
    api.missing.emplace_back(#name);                                                               \
  }
  GPUCHECK_CUDNN_BACKEND_FUNCTIONS(GPUCHECK_CUDNN_BACKEND_LOAD)
#undef GPUCHECK_CUDNN_BACKEND_LOAD
  api.available = api.missing.empty();
  return api;
}

} // namespace gpucheck::gpu_checks::cudnn
