/* Fake libcuda.so.1: the driver API calls gpucheck's cuda probe makes, driven by the scenario
 * (README.md). Honours CUDA_VISIBLE_DEVICES like the real driver. */
#define _GNU_SOURCE
#include <cuda.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_scenario.h"

enum { k_max_visible = 64 };

static int g_initialised = 0;
static int g_visible[k_max_visible]; /* physical index of each CUDA ordinal */
static int g_visible_count = 0;

static int uuid_has_prefix(int gpu, const char* entry) {
  const char* uuid = fake_gpu_uuid(gpu);
  return strncmp(uuid, entry, strlen(entry)) == 0;
}

/* The driver's rules: a comma-separated list of indices or GPU-uuid prefixes; parsing stops at
 * the first entry that is invalid, unknown, ambiguous or repeated; "" or -1 hides every GPU. */
static void compute_visible(void) {
  const int count = fake_gpu_count();
  g_visible_count = 0;
  const char* env = getenv("CUDA_VISIBLE_DEVICES");
  if (env == NULL) {
    for (int i = 0; i < count && i < k_max_visible; ++i) {
      if (fake_gpu_int(i, "cuda", 1) != 0) {
        g_visible[g_visible_count++] = i;
      }
    }
    return;
  }
  char* copy = strdup(env);
  char* save = NULL;
  for (char* tok = strtok_r(copy, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
    while (*tok == ' ') {
      ++tok;
    }
    int gpu = -1;
    if (strncmp(tok, "GPU-", 4) == 0) {
      int matches = 0;
      for (int i = 0; i < count; ++i) {
        if (uuid_has_prefix(i, tok)) {
          gpu = i;
          ++matches;
        }
      }
      if (matches != 1) {
        break;
      }
    } else {
      char* end = NULL;
      const long value = strtol(tok, &end, 10);
      if (end == tok || (*end != '\0' && *end != ' ') || value < 0 || value >= count) {
        break;
      }
      gpu = (int)value;
    }
    int repeated = 0;
    for (int k = 0; k < g_visible_count; ++k) {
      repeated |= g_visible[k] == gpu;
    }
    if (repeated || fake_gpu_int(gpu, "cuda", 1) == 0 || g_visible_count >= k_max_visible) {
      break;
    }
    g_visible[g_visible_count++] = gpu;
  }
  free(copy);
}

FAKE_EXPORT CUresult cuDriverGetVersion(int* version) {
  if (version == NULL) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  *version = (int)fake_get_int("cuda.driver_version", 13000);
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuInit(unsigned int flags) {
  (void)flags;
  fake_maybe_crash_or_hang("cuda.init");
  const CUresult rc = (CUresult)fake_get_int("cuda.init_rc", 0);
  if (rc != CUDA_SUCCESS) {
    return rc;
  }
  compute_visible();
  if (g_visible_count == 0) {
    return CUDA_ERROR_NO_DEVICE;
  }
  g_initialised = 1;
  return CUDA_SUCCESS;
}

static int physical(CUdevice dev) {
  return (dev >= 0 && dev < g_visible_count) ? g_visible[dev] : -1;
}

FAKE_EXPORT CUresult cuDeviceGetCount(int* count) {
  if (!g_initialised) {
    return CUDA_ERROR_NOT_INITIALIZED;
  }
  *count = g_visible_count;
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuDeviceGet(CUdevice* device, int ordinal) {
  if (!g_initialised) {
    return CUDA_ERROR_NOT_INITIALIZED;
  }
  if (ordinal < 0 || ordinal >= g_visible_count) {
    return CUDA_ERROR_INVALID_DEVICE;
  }
  *device = ordinal;
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuDeviceGetName(char* name, int len, CUdevice dev) {
  const int gpu = physical(dev);
  if (!g_initialised || gpu < 0) {
    return g_initialised ? CUDA_ERROR_INVALID_DEVICE : CUDA_ERROR_NOT_INITIALIZED;
  }
  snprintf(name, (size_t)len, "%s", fake_gpu_name(gpu));
  return CUDA_SUCCESS;
}

static void parse_cc(int gpu, int* major, int* minor) {
  const char* cc = fake_gpu_get(gpu, "cc");
  *major = 9;
  *minor = 0;
  if (cc != NULL) {
    sscanf(cc, "%d.%d", major, minor);
  }
}

FAKE_EXPORT CUresult cuDeviceGetAttribute(int* value, CUdevice_attribute attrib, CUdevice dev) {
  const int gpu = physical(dev);
  if (!g_initialised || gpu < 0) {
    return g_initialised ? CUDA_ERROR_INVALID_DEVICE : CUDA_ERROR_NOT_INITIALIZED;
  }
  int major = 0;
  int minor = 0;
  parse_cc(gpu, &major, &minor);
  switch (attrib) {
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
    *value = major;
    return CUDA_SUCCESS;
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
    *value = minor;
    return CUDA_SUCCESS;
  case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
    *value = (int)fake_gpu_int(gpu, "sm_count", 132);
    return CUDA_SUCCESS;
  case CU_DEVICE_ATTRIBUTE_KERNEL_EXEC_TIMEOUT:
    *value = (int)fake_gpu_int(gpu, "exec_timeout", 0);
    return CUDA_SUCCESS;
  default:
    return CUDA_ERROR_INVALID_VALUE;
  }
}

FAKE_EXPORT CUresult cuDeviceTotalMem(size_t* bytes, CUdevice dev) {
  const int gpu = physical(dev);
  if (!g_initialised || gpu < 0) {
    return g_initialised ? CUDA_ERROR_INVALID_DEVICE : CUDA_ERROR_NOT_INITIALIZED;
  }
  *bytes = (size_t)fake_gpu_int(gpu, "memory_total", 85899345920LL);
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuDeviceGetUuid(CUuuid* uuid, CUdevice dev) {
  const int gpu = physical(dev);
  if (!g_initialised || gpu < 0) {
    return g_initialised ? CUDA_ERROR_INVALID_DEVICE : CUDA_ERROR_NOT_INITIALIZED;
  }
  /* "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" back to its 16 bytes. */
  const char* text = fake_gpu_uuid(gpu) + 4;
  int byte = 0;
  for (const char* p = text; *p != '\0' && byte < 16; ++p) {
    if (*p == '-') {
      continue;
    }
    unsigned value = 0;
    if (sscanf(p, "%2x", &value) != 1) {
      break;
    }
    uuid->bytes[byte++] = (char)value;
    ++p;
  }
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuDeviceGetPCIBusId(char* bus_id, int len, CUdevice dev) {
  const int gpu = physical(dev);
  if (!g_initialised || gpu < 0) {
    return g_initialised ? CUDA_ERROR_INVALID_DEVICE : CUDA_ERROR_NOT_INITIALIZED;
  }
  /* The driver API prints a 4-digit domain: "0000:3B:00.0". */
  unsigned domain = 0;
  unsigned bus = 0;
  unsigned device = 0;
  unsigned function = 0;
  sscanf(fake_gpu_bus_id(gpu), "%x:%x:%x.%x", &domain, &bus, &device, &function);
  snprintf(bus_id, (size_t)len, "%04X:%02X:%02X.%X", domain, bus, device, function);
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuGetErrorName(CUresult error, const char** name) {
  switch (error) {
  case CUDA_SUCCESS:
    *name = "CUDA_SUCCESS";
    return CUDA_SUCCESS;
  case CUDA_ERROR_NO_DEVICE:
    *name = "CUDA_ERROR_NO_DEVICE";
    return CUDA_SUCCESS;
  default:
    /* Lets a test tell the table apart from this fallback. */
    *name = fake_get("cuda.error_name");
    return *name != NULL ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
  }
}

FAKE_EXPORT CUresult cuGetErrorString(CUresult error, const char** text) {
  (void)error;
  *text = "fake driver error";
  return CUDA_SUCCESS;
}

/* No real context can be made: the scenario chooses the answer (default 801, NOT_SUPPORTED; 2,
 * OUT_OF_MEMORY, for a GPU that other processes fill). With context_rc=0 a token context exists:
 * it can be made current, report its memory and load modules (cuModuleLoadDataEx below); every
 * other call on it answers 801. */
static int g_context_gpu = -1; /* the GPU whose token context was retained */

FAKE_EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext* context, CUdevice dev) {
  if (context != NULL) {
    *context = NULL;
  }
  const int gpu = physical(dev);
  if (!g_initialised || gpu < 0) {
    return CUDA_ERROR_INVALID_DEVICE;
  }
  const CUresult rc = (CUresult)fake_gpu_int(gpu, "context_rc", 801);
  if (rc == CUDA_SUCCESS) {
    static int token;
    g_context_gpu = gpu;
    *context = (CUcontext)&token;
  }
  return rc;
}

FAKE_EXPORT CUresult cuDevicePrimaryCtxRelease(CUdevice dev) {
  (void)dev;
  return g_context_gpu >= 0 ? CUDA_SUCCESS : CUDA_ERROR_NOT_SUPPORTED;
}

FAKE_EXPORT CUresult cuCtxSetCurrent(CUcontext context) {
  return context != NULL && g_context_gpu >= 0 ? CUDA_SUCCESS : CUDA_ERROR_NOT_SUPPORTED;
}

FAKE_EXPORT CUresult cuCtxSetLimit(CUlimit limit, size_t value) {
  (void)limit;
  (void)value;
  return g_context_gpu >= 0 ? CUDA_SUCCESS : CUDA_ERROR_NOT_SUPPORTED;
}

FAKE_EXPORT CUresult cuMemGetInfo(size_t* free_bytes, size_t* total_bytes) {
  if (g_context_gpu < 0) {
    return CUDA_ERROR_NOT_SUPPORTED;
  }
  const long long total = fake_gpu_int(g_context_gpu, "memory_total", 85899345920LL);
  const long long used = fake_gpu_int(g_context_gpu, "memory_used", 0);
  *total_bytes = (size_t)total;
  *free_bytes = (size_t)(total > used ? total - used : 0);
  return CUDA_SUCCESS;
}

/* The oldest driver (cuDriverGetVersion form) that JITs PTX of this ISA (7.x: CUDA 11.x, 8.0-8.5:
 * 12.0-12.5, 8.6-8.8: 12.7-12.9, 9.x: 13.x). */
static long ptx_driver(unsigned isa_major, unsigned isa_minor) {
  if (isa_major <= 7) {
    return 11000 + 10L * isa_minor;
  }
  if (isa_major == 8) {
    return 12000 + 10L * (isa_minor <= 5 ? isa_minor : isa_minor + 1);
  }
  return 1000L * (isa_major + 4) + 10L * isa_minor;
}

static uint32_t read_u32(const unsigned char* p) {
  uint32_t v;
  memcpy(&v, p, sizeof v);
  return v;
}

static uint16_t read_u16(const unsigned char* p) {
  uint16_t v;
  memcpy(&v, p, sizeof v);
  return v;
}

static uint64_t read_u64(const unsigned char* p) {
  uint64_t v;
  memcpy(&v, p, sizeof v);
  return v;
}

/* The driver's rule for a fatbin, on its table of contents: the toolkit that built it is the one
 * of its PTX's ISA (ISA major + 4: 9.x -> CUDA 13); a driver of an older CUDA major rejects the
 * image (222, UNSUPPORTED_PTX_VERSION, what R570 answers for CUDA 13 code). Otherwise SASS of the
 * GPU's major and a minor at or below its own runs (ignored under CUDA_FORCE_PTX_JIT=1), else PTX
 * at or below the GPU's arch that this driver can JIT, else 209 (NO_BINARY_FOR_GPU). Not a fatbin:
 * 200 (INVALID_IMAGE). */
static int g_modules_loaded = 0;

FAKE_EXPORT CUresult cuModuleLoadDataEx(CUmodule* module, const void* image, unsigned int count,
                                        CUjit_option* options, void** values) {
  (void)count;
  (void)options;
  (void)values;
  if (g_context_gpu < 0) {
    return CUDA_ERROR_NOT_SUPPORTED;
  }
  const unsigned char* bytes = (const unsigned char*)image;
  if (read_u32(bytes) != 0xBA55ED50u) {
    return CUDA_ERROR_INVALID_IMAGE;
  }
  const long driver = fake_get_int("cuda.driver_version", 13000);
  int cc_major = 0;
  int cc_minor = 0;
  parse_cc(g_context_gpu, &cc_major, &cc_minor);
  const char* force = getenv("CUDA_FORCE_PTX_JIT");
  const int force_ptx = force != NULL && strcmp(force, "1") == 0;
  const uint16_t header = read_u16(bytes + 6);
  const uint64_t end = header + read_u64(bytes + 8);
  int sass_fits = 0;
  int ptx_fits = 0;
  long toolkit_major = 0;
  for (uint64_t at = header; at + 48 <= end;) {
    const unsigned char* entry = bytes + at;
    const uint16_t kind = read_u16(entry);
    const uint32_t arch = read_u32(entry + 28);
    if (kind == 1) {
      const unsigned isa_minor = read_u16(entry + 24);
      const unsigned isa_major = read_u16(entry + 26);
      if ((long)isa_major + 4 > toolkit_major) {
        toolkit_major = (long)isa_major + 4;
      }
      ptx_fits |=
          (int)arch <= cc_major * 10 + cc_minor && driver >= ptx_driver(isa_major, isa_minor);
    } else if (kind == 2) {
      sass_fits |= !force_ptx && (int)arch / 10 == cc_major && (int)arch % 10 <= cc_minor;
    }
    at += read_u32(entry + 4) + read_u64(entry + 8);
  }
  if (toolkit_major > driver / 1000) {
    return CUDA_ERROR_UNSUPPORTED_PTX_VERSION;
  }
  if (!sass_fits && !ptx_fits) {
    return CUDA_ERROR_NO_BINARY_FOR_GPU;
  }
  static int token;
  *module = (CUmodule)&token;
  ++g_modules_loaded;
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuModuleUnload(CUmodule module) {
  (void)module;
  return g_modules_loaded > 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

FAKE_EXPORT CUresult cuModuleGetFunction(CUfunction* function, CUmodule module, const char* name) {
  static int token;
  if (module == NULL || name == NULL || strncmp(name, "gpucheck_", 9) != 0) {
    return CUDA_ERROR_NOT_FOUND;
  }
  *function = (CUfunction)&token;
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuFuncGetAttribute(int* value, CUfunction_attribute attribute,
                                        CUfunction function) {
  (void)attribute;
  (void)function;
  *value = 32;
  return CUDA_SUCCESS;
}

/* `p2p.A.B.access` (physical indices A < B, both directions): 1 (default) or 0. */
static int peer_access(CUdevice a, CUdevice b) {
  const int ga = physical(a);
  const int gb = physical(b);
  if (ga < 0 || gb < 0 || ga == gb) {
    return -1;
  }
  char key[64];
  snprintf(key, sizeof key, "p2p.%d.%d.access", ga < gb ? ga : gb, ga < gb ? gb : ga);
  return (int)fake_get_int(key, 1);
}

FAKE_EXPORT CUresult cuDeviceCanAccessPeer(int* can, CUdevice dev, CUdevice peer) {
  const int access = peer_access(dev, peer);
  if (!g_initialised || access < 0) {
    return CUDA_ERROR_INVALID_DEVICE;
  }
  *can = access;
  return CUDA_SUCCESS;
}

/* Performance rank 0 and native atomics where there is access (as on NVLink). */
FAKE_EXPORT CUresult cuDeviceGetP2PAttribute(int* value, CUdevice_P2PAttribute attribute,
                                             CUdevice src, CUdevice dst) {
  const int access = peer_access(src, dst);
  if (!g_initialised || access < 0) {
    return CUDA_ERROR_INVALID_DEVICE;
  }
  *value = attribute == CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK ? 0 : access;
  return CUDA_SUCCESS;
}
