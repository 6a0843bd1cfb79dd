/* Fake cuDNN shim (libcudnn.so.9, or libcudnn.so.8 when built with FAKE_CUDNN_MAJOR=8). Like the
 * real one it holds no implementation: each entry point dlopen()s the sub-library that hosts it
 * by bare name (found through RUNPATH $ORIGIN, LD_LIBRARY_PATH or the loader cache) on first use.
 *
 * cuDNN 9.19: without libcudnn_graph.so.9 every entry point prints
 * "Invalid handle. Cannot load symbol <name>" and aborts; a missing ops/cnn/adv library makes
 * that library's calls print the same line and return 3009 (SUBLIBRARY_UNAVAILABLE).
 * cuDNN 8: any sub-library that cannot be loaded prints "Could not load library <name>. Error:
 * <dlerror>" and "Please make sure <name> is in your library path!" and aborts. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "fake_scenario.h"

#ifndef FAKE_CUDNN_MAJOR
#define FAKE_CUDNN_MAJOR 9
#endif

#if FAKE_CUDNN_MAJOR >= 9
#define FAKE_CUDNN_CORE "libcudnn_graph.so.9"
#else
#define FAKE_CUDNN_CORE "libcudnn_ops_infer.so.8"
#endif

enum { k_sublibrary_unavailable = 3009 };

/* The sub-library `soname`, or NULL after reporting the failure the way this major does. */
static void* open_sublibrary(const char* soname, const char* symbol, int fatal) {
  void* handle = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
  void* fn = handle != NULL ? dlsym(handle, symbol) : NULL;
  if (fn != NULL) {
    return fn;
  }
#if FAKE_CUDNN_MAJOR >= 9
  fprintf(stderr, "Invalid handle. Cannot load symbol %s\n", symbol);
#else
  fprintf(stderr, "Could not load library %s. Error: %s\n", soname,
          handle == NULL ? dlerror() : "symbol not found");
  fprintf(stderr, "Please make sure %s is in your library path!\n", soname);
  fatal = 1;
#endif
  if (fatal) {
    abort();
  }
  return NULL;
}

static void* core_symbol(const char* symbol) {
  return open_sublibrary(FAKE_CUDNN_CORE, symbol, 1);
}

typedef size_t (*size_fn)(void);
typedef int (*status_fn)(void);
typedef const char* (*string_fn)(int);

FAKE_EXPORT size_t cudnnGetVersion(void) {
  return ((size_fn)core_symbol("cudnnGetVersion"))();
}
FAKE_EXPORT size_t cudnnGetCudartVersion(void) {
  return ((size_fn)core_symbol("cudnnGetCudartVersion"))();
}
FAKE_EXPORT const char* cudnnGetErrorString(int status) {
  return ((string_fn)core_symbol("cudnnGetErrorString"))(status);
}

/* A call hosted by another sub-library: the core first (abort without it), then that one. */
static int sublibrary_call(const char* soname, const char* symbol) {
  (void)core_symbol("cudnnGetVersion");
  void* fn = open_sublibrary(soname, symbol, 0);
  return fn != NULL ? ((status_fn)fn)() : k_sublibrary_unavailable;
}

#if FAKE_CUDNN_MAJOR >= 9
FAKE_EXPORT size_t cudnnGetMaxDeviceVersion(void) {
  return ((size_fn)core_symbol("cudnnGetMaxDeviceVersion"))();
}
FAKE_EXPORT int cudnnGraphVersionCheck(void) {
  return ((status_fn)core_symbol("cudnnGraphVersionCheck"))();
}
FAKE_EXPORT int cudnnOpsVersionCheck(void) {
  return sublibrary_call("libcudnn_ops.so.9", "cudnnOpsVersionCheck");
}
FAKE_EXPORT int cudnnCnnVersionCheck(void) {
  return sublibrary_call("libcudnn_cnn.so.9", "cudnnCnnVersionCheck");
}
FAKE_EXPORT int cudnnAdvVersionCheck(void) {
  return sublibrary_call("libcudnn_adv.so.9", "cudnnAdvVersionCheck");
}
#else
/* Like 8.x before 8.9: no cudnnGetMaxDeviceVersion. */
FAKE_EXPORT int cudnnOpsInferVersionCheck(void) {
  return ((status_fn)core_symbol("cudnnOpsInferVersionCheck"))();
}
FAKE_EXPORT int cudnnOpsTrainVersionCheck(void) {
  return sublibrary_call("libcudnn_ops_train.so.8", "cudnnOpsTrainVersionCheck");
}
FAKE_EXPORT int cudnnCnnInferVersionCheck(void) {
  return sublibrary_call("libcudnn_cnn_infer.so.8", "cudnnCnnInferVersionCheck");
}
FAKE_EXPORT int cudnnCnnTrainVersionCheck(void) {
  return sublibrary_call("libcudnn_cnn_train.so.8", "cudnnCnnTrainVersionCheck");
}
FAKE_EXPORT int cudnnAdvInferVersionCheck(void) {
  return sublibrary_call("libcudnn_adv_infer.so.8", "cudnnAdvInferVersionCheck");
}
FAKE_EXPORT int cudnnAdvTrainVersionCheck(void) {
  return sublibrary_call("libcudnn_adv_train.so.8", "cudnnAdvTrainVersionCheck");
}
#endif
