/* Fake libcudnn_graph.so.9: the versions cuDNN reports, from the scenario (README.md). */
#include <stddef.h>

#include "fake_scenario.h"

FAKE_EXPORT size_t cudnnGetVersion(void) {
  return (size_t)fake_get_int("cudnn.version", 91900);
}
FAKE_EXPORT size_t cudnnGetCudartVersion(void) {
  return (size_t)fake_get_int("cudnn.cudart_version", 13010);
}
FAKE_EXPORT size_t cudnnGetMaxDeviceVersion(void) {
  return (size_t)fake_get_int("cudnn.max_device_version", 1210);
}
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
FAKE_EXPORT int cudnnGraphVersionCheck(void) {
  return (int)fake_get_int("cudnn.graph_check_rc", 0);
}
/* For the other sub-libraries' version checks (they link against this library). */
FAKE_EXPORT long long fake_cudnn_graph_version(void) {
  return fake_get_int("cudnn.version", 91900);
}
