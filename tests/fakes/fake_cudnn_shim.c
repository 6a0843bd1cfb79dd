/* Fake libcudnn.so.9 shim. Like the real one, it holds no implementation: each entry point
 * dlopen()s the sub-library that hosts it (by bare name, found through RUNPATH $ORIGIN or the
 * loader's search) on first use. When libcudnn_graph.so.9 cannot be loaded, every entry point
 * prints "Invalid handle. Cannot load symbol <name>" and aborts, as cuDNN 9.19 does; a missing
 * ops/cnn/adv library makes that library's calls return 3009 (SUBLIBRARY_UNAVAILABLE). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "fake_scenario.h"

enum { k_sublibrary_unavailable = 3009 };

static void* open_sublibrary(const char* soname) {
  return dlopen(soname, RTLD_NOW | RTLD_LOCAL);
}

static void cannot_load(const char* symbol) {
  fprintf(stderr, "Invalid handle. Cannot load symbol %s\n", symbol);
}

/* The graph library hosts the core API; without it the shim cannot go on. */
static void* graph_symbol(const char* symbol) {
  static void* handle = NULL;
  if (handle == NULL) {
    handle = open_sublibrary("libcudnn_graph.so.9");
  }
  void* fn = handle != NULL ? dlsym(handle, symbol) : NULL;
  if (fn == NULL) {
    cannot_load(symbol);
    abort();
  }
  return fn;
}

typedef size_t (*size_fn)(void);
typedef int (*status_fn)(void);
typedef const char* (*string_fn)(int);

FAKE_EXPORT size_t cudnnGetVersion(void) {
  return ((size_fn)graph_symbol("cudnnGetVersion"))();
}
FAKE_EXPORT size_t cudnnGetCudartVersion(void) {
  return ((size_fn)graph_symbol("cudnnGetCudartVersion"))();
}
FAKE_EXPORT size_t cudnnGetMaxDeviceVersion(void) {
  return ((size_fn)graph_symbol("cudnnGetMaxDeviceVersion"))();
}
FAKE_EXPORT const char* cudnnGetErrorString(int status) {
  return ((string_fn)graph_symbol("cudnnGetErrorString"))(status);
}
FAKE_EXPORT int cudnnGraphVersionCheck(void) {
  return ((status_fn)graph_symbol("cudnnGraphVersionCheck"))();
}

/* A call hosted by ops/cnn/adv: graph first (abort without it), then the sub-library. */
static int sublibrary_call(const char* soname, const char* symbol) {
  (void)graph_symbol("cudnnGetVersion");
  void* handle = open_sublibrary(soname);
  void* fn = handle != NULL ? dlsym(handle, symbol) : NULL;
  if (fn == NULL) {
    cannot_load(symbol);
    return k_sublibrary_unavailable;
  }
  return ((status_fn)fn)();
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
