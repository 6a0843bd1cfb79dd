/* Fake cuDNN core sub-library: libcudnn_graph.so.9, or libcudnn_ops_infer.so.8 when built with
 * FAKE_CUDNN_MAJOR=8. It reports the versions from the scenario (README.md). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_scenario.h"

/* "<key>@<directory of this library>" when the scenario sets it (two copies of cuDNN that
 * report different versions), else "<key>". */
static long long fake_get_int_here(const char* key, long long fallback) {
  Dl_info info;
  if (dladdr((void*)&fake_get_int_here, &info) != 0 && info.dli_fname != NULL) {
    char scoped[4096];
    const char* slash = strrchr(info.dli_fname, '/');
    const int dir_len = slash != NULL ? (int)(slash - info.dli_fname) : 0;
    snprintf(scoped, sizeof scoped, "%s@%.*s", key, dir_len, info.dli_fname);
    const long long unset = -0x7fffffffffffLL;
    const long long value = fake_get_int(scoped, unset);
    if (value != unset) {
      return value;
    }
  }
  return fake_get_int(key, fallback);
}

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
  if (fake_get_int("cudnn.version_crash", 0) != 0) {
    fputs("E! CuDNN (fake) function cudnnGetVersion() called: internal error\n", stderr);
    abort();
  }
  return (size_t)fake_get_int_here("cudnn.version", FAKE_DEFAULT_VERSION);
}
FAKE_EXPORT size_t cudnnGetCudartVersion(void) {
  return (size_t)fake_get_int_here("cudnn.cudart_version", FAKE_DEFAULT_CUDART);
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
