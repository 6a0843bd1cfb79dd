/* Fake cuDNN core sub-library: libcudnn_graph.so.9, or libcudnn_ops_infer.so.8 when built with
 * FAKE_CUDNN_MAJOR=8. It reports the versions from the scenario (README.md). */
#include <stddef.h>

#include "fake_scenario.h"

#ifndef FAKE_CUDNN_MAJOR
#define FAKE_CUDNN_MAJOR 9
#endif

#if FAKE_CUDNN_MAJOR >= 9
#define FAKE_DEFAULT_VERSION 91900
#define FAKE_DEFAULT_CUDART 13010
#define FAKE_CORE_CHECK cudnnGraphVersionCheck
#define FAKE_CORE_CHECK_KEY "cudnn.graph_check_rc"
#else
#define FAKE_DEFAULT_VERSION 8907
#define FAKE_DEFAULT_CUDART 12020
#define FAKE_CORE_CHECK cudnnOpsInferVersionCheck
#define FAKE_CORE_CHECK_KEY "cudnn.ops_infer_check_rc"
#endif

FAKE_EXPORT size_t cudnnGetVersion(void) {
  return (size_t)fake_get_int("cudnn.version", FAKE_DEFAULT_VERSION);
}
FAKE_EXPORT size_t cudnnGetCudartVersion(void) {
  return (size_t)fake_get_int("cudnn.cudart_version", FAKE_DEFAULT_CUDART);
}
#if FAKE_CUDNN_MAJOR >= 9
FAKE_EXPORT size_t cudnnGetMaxDeviceVersion(void) {
  return (size_t)fake_get_int("cudnn.max_device_version", 1210);
}
#endif
FAKE_EXPORT const char* cudnnGetErrorString(int status) {
  switch (status) {
  case 0:
    return "CUDNN_STATUS_SUCCESS";
  case 1002:
    return "CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH";
  case 3009:
    return "CUDNN_STATUS_NOT_SUPPORTED_SUBLIBRARY_UNAVAILABLE";
  default:
    return "CUDNN_STATUS_UNKNOWN";
  }
}
FAKE_EXPORT int FAKE_CORE_CHECK(void);
int FAKE_CORE_CHECK(void) {
  return (int)fake_get_int(FAKE_CORE_CHECK_KEY, 0);
}
/* For the other sub-libraries' version checks (they link against this library). */
FAKE_EXPORT long long fake_cudnn_graph_version(void) {
  return fake_get_int("cudnn.version", FAKE_DEFAULT_VERSION);
}
