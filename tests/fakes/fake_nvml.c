/* Fake libnvidia-ml.so.1, driven by the scenario (README.md). Built twice: the current API (with
 * the versioned symbols) and, with FAKE_NVML_OLD, an old driver's library that exports only the
 * unversioned names, so the probe's fallbacks are exercised. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fake_scenario.h"

typedef struct nvmlDevice_st* nvmlDevice_t;
typedef int nvmlReturn_t;

enum {
  k_success = 0,
  k_uninitialized = 1,
  k_invalid_argument = 2,
  k_not_supported = 3,
  k_not_found = 6,
  k_insufficient_size = 7,
  k_gpu_is_lost = 15,
  k_argument_version_mismatch = 25,
  k_max_mig = 7,
  k_mig_base = 0x10000,
};

typedef struct {
  char busIdLegacy[16];
  unsigned domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
} nvmlPciInfo_t;
typedef struct {
  unsigned long long total, free, used;
} nvmlMemory_t;
typedef struct {
  unsigned version;
  unsigned long long total, reserved, free, used;
} nvmlMemory_v2_t;
typedef struct {
  unsigned pid;
  unsigned long long usedGpuMemory;
  unsigned gpuInstanceId, computeInstanceId;
} nvmlProcessInfo_v2_t;
typedef struct {
  unsigned pid;
  unsigned long long usedGpuMemory;
} nvmlProcessInfo_v1_t;
typedef struct {
  unsigned version;
  int sensorType;
  int temperature;
} nvmlTemperature_t;

static int g_initialised = 0;

/* ---- scenario helpers ---------------------------------------------------------------------- */

/* The return code a field's function gives: "na" -> NOT_SUPPORTED, "err:N" -> N, else SUCCESS. */
static nvmlReturn_t field_rc(int gpu, const char* key) {
  const char* v = fake_gpu_get(gpu, key);
  if (v == NULL) {
    return k_success;
  }
  if (strcmp(v, "na") == 0) {
    return k_not_supported;
  }
  if (strncmp(v, "err:", 4) == 0) {
    return (nvmlReturn_t)strtol(v + 4, NULL, 0);
  }
  return k_success;
}

static unsigned long long field(int gpu, const char* key, unsigned long long fallback) {
  return (unsigned long long)fake_gpu_int(gpu, key, (long long)fallback);
}

/* Physical GPU index of a handle; -1 for MIG handles or garbage. */
static int gpu_of(nvmlDevice_t device) {
  const uintptr_t raw = (uintptr_t)device;
  if (raw == 0 || raw >= k_mig_base) {
    return -1;
  }
  const int gpu = (int)raw - 1;
  return gpu < fake_gpu_count() ? gpu : -1;
}

/* Common entry checks; sets *gpu. Also applies a per-field rc. */
static nvmlReturn_t enter(nvmlDevice_t device, const char* key, int* gpu) {
  if (!g_initialised) {
    return k_uninitialized;
  }
  *gpu = gpu_of(device);
  if (*gpu < 0) {
    return k_invalid_argument;
  }
  /* A GPU lost after NVML gave its handle: every query of it answers GPU_IS_LOST. */
  if (fake_gpu_int(*gpu, "lost_after_handle", 0) != 0) {
    return k_gpu_is_lost;
  }
  return key != NULL ? field_rc(*gpu, key) : k_success;
}

static nvmlReturn_t copy_string(char* out, unsigned length, const char* value) {
  if (out == NULL || strlen(value) + 1 > length) {
    return length == 0 ? k_invalid_argument : k_insufficient_size;
  }
  memcpy(out, value, strlen(value) + 1);
  return k_success;
}

/* ---- library ------------------------------------------------------------------------------- */

static nvmlReturn_t do_init(void) {
  fake_maybe_crash_or_hang("nvml.init");
  const nvmlReturn_t rc = (nvmlReturn_t)fake_get_int("nvml.init_rc", 0);
  g_initialised = rc == k_success;
  return rc;
}

FAKE_EXPORT nvmlReturn_t nvmlInit(void) {
  return do_init();
}
#ifndef FAKE_NVML_OLD
FAKE_EXPORT nvmlReturn_t nvmlInit_v2(void) {
  return do_init();
}
FAKE_EXPORT nvmlReturn_t nvmlInitWithFlags(unsigned flags) {
  (void)flags;
  return do_init();
}
#endif

FAKE_EXPORT nvmlReturn_t nvmlShutdown(void) {
  g_initialised = 0;
  return k_success;
}

FAKE_EXPORT const char* nvmlErrorString(nvmlReturn_t rc) {
  return rc == 18 ? "Driver/library version mismatch" : "fake NVML error";
}

FAKE_EXPORT nvmlReturn_t nvmlSystemGetDriverVersion(char* version, unsigned length) {
  if (!g_initialised) {
    return k_uninitialized;
  }
  const char* v = fake_get("nvml.driver_version");
  return copy_string(version, length, v != NULL ? v : "580.95.05");
}

FAKE_EXPORT nvmlReturn_t nvmlSystemGetNVMLVersion(char* version, unsigned length) {
  if (!g_initialised) {
    return k_uninitialized;
  }
  const char* v = fake_get("nvml.nvml_version");
  return copy_string(version, length, v != NULL ? v : "13.580.95.05");
}

FAKE_EXPORT nvmlReturn_t nvmlSystemGetCudaDriverVersion(int* version) {
  if (!g_initialised) {
    return k_uninitialized;
  }
  *version = (int)fake_get_int("nvml.cuda_driver_version_kernel", 13000);
  return k_success;
}

#ifndef FAKE_NVML_OLD
FAKE_EXPORT nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int* version) {
  if (!g_initialised) {
    return k_uninitialized;
  }
  const long long rc = fake_get_int("nvml.cuda_driver_version_rc", 0);
  if (rc != 0) {
    return (nvmlReturn_t)rc;
  }
  *version =
      (int)fake_get_int("nvml.cuda_driver_version", fake_get_int("cuda.driver_version", 13000));
  return k_success;
}
#endif

/* ---- devices ------------------------------------------------------------------------------- */

static nvmlReturn_t get_count(unsigned* count) {
  if (!g_initialised) {
    return k_uninitialized;
  }
  *count = (unsigned)fake_gpu_count();
  return k_success;
}

static nvmlReturn_t get_handle(unsigned index, nvmlDevice_t* device) {
  if (!g_initialised) {
    return k_uninitialized;
  }
  if (index >= (unsigned)fake_gpu_count()) {
    return k_invalid_argument;
  }
  const nvmlReturn_t rc = (nvmlReturn_t)fake_gpu_int((int)index, "handle_rc", 0);
  if (rc != k_success) {
    return rc;
  }
  *device = (nvmlDevice_t)(uintptr_t)(index + 1);
  return k_success;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetCount(unsigned* count) {
  return get_count(count);
}
FAKE_EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned index, nvmlDevice_t* device) {
  return get_handle(index, device);
}
#ifndef FAKE_NVML_OLD
FAKE_EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned* count) {
  return get_count(count);
}
FAKE_EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned index, nvmlDevice_t* device) {
  return get_handle(index, device);
}
#endif

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char* name, unsigned length) {
  int gpu = 0;
  nvmlReturn_t rc = enter(device, NULL, &gpu);
  return rc != k_success ? rc : copy_string(name, length, fake_gpu_name(gpu));
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char* uuid, unsigned length) {
  int gpu = 0;
  nvmlReturn_t rc = enter(device, NULL, &gpu);
  return rc != k_success ? rc : copy_string(uuid, length, fake_gpu_uuid(gpu));
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetSerial(nvmlDevice_t device, char* serial, unsigned length) {
  int gpu = 0;
  nvmlReturn_t rc = enter(device, "serial", &gpu);
  if (rc != k_success) {
    return rc;
  }
  char fallback[32];
  snprintf(fallback, sizeof fallback, "165000000%04d", gpu);
  const char* v = fake_gpu_get(gpu, "serial");
  return copy_string(serial, length, v != NULL ? v : fallback);
}

static nvmlReturn_t get_pci(nvmlDevice_t device, nvmlPciInfo_t* pci) {
  int gpu = 0;
  nvmlReturn_t rc = enter(device, "pci", &gpu);
  if (rc != k_success) {
    return rc;
  }
  memset(pci, 0, sizeof *pci);
  const char* bus_id = fake_gpu_bus_id(gpu);
  unsigned function = 0;
  sscanf(bus_id, "%x:%x:%x.%x", &pci->domain, &pci->bus, &pci->device, &function);
  snprintf(pci->busId, sizeof pci->busId, "%s", bus_id);
  snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "%04X:%02X:%02X.%X", pci->domain, pci->bus,
           pci->device, function);
  pci->pciDeviceId = (unsigned)field(gpu, "pci_device_id", 0x233010DEu);
  pci->pciSubSystemId = (unsigned)field(gpu, "pci_subsystem_id", 0x16C110DEu);
  return k_success;
}

#ifndef FAKE_NVML_OLD
FAKE_EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t* pci) {
  return get_pci(device, pci);
}
#endif
FAKE_EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v2(nvmlDevice_t device, nvmlPciInfo_t* pci) {
  return get_pci(device, pci);
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetCudaComputeCapability(nvmlDevice_t device, int* major,
                                                            int* minor) {
  int gpu = 0;
  nvmlReturn_t rc = enter(device, "cc", &gpu);
  if (rc != k_success) {
    return rc;
  }
  *major = 9;
  *minor = 0;
  const char* cc = fake_gpu_get(gpu, "cc");
  if (cc != NULL) {
    sscanf(cc, "%d.%d", major, minor);
  }
  return k_success;
}

static void memory_of(int gpu, unsigned long long* total, unsigned long long* reserved,
                      unsigned long long* used) {
  *total = field(gpu, "memory_total", 85899345920ULL);
  *reserved = field(gpu, "memory_reserved", 0);
  *used = field(gpu, "memory_used", 0);
}

#ifndef FAKE_NVML_OLD
FAKE_EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t* memory) {
  int gpu = 0;
  nvmlReturn_t rc = enter(device, "memory", &gpu);
  if (rc != k_success) {
    return rc;
  }
  if (memory->version != 0x02000028u) {
    return k_argument_version_mismatch;
  }
  memory_of(gpu, &memory->total, &memory->reserved, &memory->used);
  memory->free = memory->total - memory->reserved - memory->used;
  return k_success;
}
#endif

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t* memory) {
  int gpu = 0;
  nvmlReturn_t rc = enter(device, "memory", &gpu);
  if (rc != k_success) {
    return rc;
  }
  unsigned long long reserved = 0;
  memory_of(gpu, &memory->total, &reserved, &memory->used);
  /* The v1 call counts reserved memory as used. */
  memory->used += reserved;
  memory->free = memory->total - memory->used;
  return k_success;
}

/* A function that reads one unsigned field. */
#define FAKE_UNSIGNED_FIELD(function, key, fallback)                                               \
  FAKE_EXPORT nvmlReturn_t function(nvmlDevice_t device, unsigned* value) {                        \
    int gpu = 0;                                                                                   \
    nvmlReturn_t rc = enter(device, key, &gpu);                                                    \
    if (rc == k_success) {                                                                         \
      *value = (unsigned)field(gpu, key, fallback);                                                \
    }                                                                                              \
    return rc;                                                                                     \
  }

FAKE_UNSIGNED_FIELD(nvmlDeviceGetCurrPcieLinkGeneration, "pcie_gen", 5)
FAKE_UNSIGNED_FIELD(nvmlDeviceGetMaxPcieLinkGeneration, "pcie_gen_max", 5)
FAKE_UNSIGNED_FIELD(nvmlDeviceGetCurrPcieLinkWidth, "pcie_width", 16)
FAKE_UNSIGNED_FIELD(nvmlDeviceGetMaxPcieLinkWidth, "pcie_width_max", 16)
FAKE_UNSIGNED_FIELD(nvmlDeviceGetPowerUsage, "power_mw", 71000)
FAKE_UNSIGNED_FIELD(nvmlDeviceGetEnforcedPowerLimit, "power_limit_mw", 700000)
#ifndef FAKE_NVML_OLD
FAKE_UNSIGNED_FIELD(nvmlDeviceGetNumaNodeId, "numa_node", 0)
#endif

/* nvmlEnableState_t and nvmlComputeMode_t are ints of the same size. */
FAKE_UNSIGNED_FIELD(nvmlDeviceGetPersistenceMode, "persistence", 1)
FAKE_UNSIGNED_FIELD(nvmlDeviceGetComputeMode, "compute_mode", 0)
FAKE_UNSIGNED_FIELD(nvmlDeviceGetRetiredPagesPendingStatus, "retired_pending", 0)
FAKE_UNSIGNED_FIELD(nvmlDeviceGetDisplayMode, "display_mode", 0)
FAKE_UNSIGNED_FIELD(nvmlDeviceGetDisplayActive, "display_active", 0)

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t device, unsigned* current,
                                              unsigned* pending) {
  int gpu = 0;
  nvmlReturn_t rc = enter(device, "mig_mode", &gpu);
  if (rc == k_success) {
    *current = (unsigned)field(gpu, "mig_mode", 0);
    *pending = (unsigned)field(gpu, "mig_pending", *current);
  }
  return rc;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t device, unsigned* count) {
  int gpu = 0;
  nvmlReturn_t rc = enter(device, "mig_mode", &gpu);
  if (rc == k_success) {
    *count = field(gpu, "mig_mode", 0) != 0 ? k_max_mig : 0;
  }
  return rc;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t device, unsigned index,
                                                             nvmlDevice_t* mig) {
  int gpu = 0;
  nvmlReturn_t rc = enter(device, "mig_mode", &gpu);
  if (rc != k_success) {
    return rc;
  }
  if (field(gpu, "mig_mode", 0) == 0 || index >= k_max_mig) {
    return k_invalid_argument;
  }
  if (index >= field(gpu, "mig_devices", 0)) {
    return k_not_found;
  }
  *mig = (nvmlDevice_t)(uintptr_t)(k_mig_base + (unsigned)gpu * 256u + index);
  return k_success;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetEccMode(nvmlDevice_t device, unsigned* current,
                                              unsigned* pending) {
  int gpu = 0;
  nvmlReturn_t rc = enter(device, "ecc_mode", &gpu);
  if (rc == k_success) {
    *current = (unsigned)field(gpu, "ecc_mode", 1);
    *pending = (unsigned)field(gpu, "ecc_pending", *current);
  }
  return rc;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t device, int error_type,
                                                     int counter_type, unsigned long long* count) {
  int gpu = 0;
  nvmlReturn_t rc = enter(device, "ecc_mode", &gpu);
  if (rc != k_success) {
    return rc;
  }
  static const char* const k_keys[2][2] = {
      {"ecc_corrected_volatile", "ecc_corrected_aggregate"},
      {"ecc_uncorrected_volatile", "ecc_uncorrected_aggregate"}};
  if (error_type < 0 || error_type > 1 || counter_type < 0 || counter_type > 1) {
    return k_invalid_argument;
  }
  const char* key = k_keys[error_type][counter_type];
  rc = field_rc(gpu, key);
  if (rc == k_success) {
    *count = field(gpu, key, 0);
  }
  return rc;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetRetiredPages(nvmlDevice_t device, int cause, unsigned* count,
                                                   unsigned long long* addresses) {
  int gpu = 0;
  nvmlReturn_t rc = enter(device, "retired_pages", &gpu);
  if (rc != k_success) {
    return rc;
  }
  const unsigned have = (unsigned)field(gpu, cause == 0 ? "retired_sbe" : "retired_dbe", 0);
  if (*count < have || addresses == NULL) {
    const int small = *count < have;
    *count = have;
    return small ? k_insufficient_size : k_success;
  }
  for (unsigned i = 0; i < have; ++i) {
    addresses[i] = 0x1000ULL * (i + 1);
  }
  *count = have;
  return k_success;
}

#ifndef FAKE_NVML_OLD
FAKE_EXPORT nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t device, unsigned* corrected,
                                                   unsigned* uncorrected, unsigned* pending,
                                                   unsigned* failure) {
  int gpu = 0;
  nvmlReturn_t rc = enter(device, "remapped_rows", &gpu);
  if (rc == k_success) {
    *corrected = (unsigned)field(gpu, "remapped_corr", 0);
    *uncorrected = (unsigned)field(gpu, "remapped_unc", 0);
    *pending = (unsigned)field(gpu, "remapped_pending", 0);
    *failure = (unsigned)field(gpu, "remapped_failure", 0);
  }
  return rc;
}
#endif

static nvmlReturn_t clock_reasons(nvmlDevice_t device, unsigned long long* reasons) {
  int gpu = 0;
  nvmlReturn_t rc = enter(device, "clock_events", &gpu);
  if (rc == k_success) {
    *reasons = field(gpu, "clock_events", 0x1);
  }
  return rc;
}

#ifndef FAKE_NVML_OLD
FAKE_EXPORT nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t device,
                                                                unsigned long long* reasons) {
  return clock_reasons(device, reasons);
}
#endif
FAKE_EXPORT nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t device,
                                                                   unsigned long long* reasons) {
  return clock_reasons(device, reasons);
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, int sensor,
                                                  unsigned* celsius) {
  int gpu = 0;
  nvmlReturn_t rc = enter(device, "temperature", &gpu);
  if (rc == k_success) {
    if (sensor != 0) {
      return k_invalid_argument;
    }
    *celsius = (unsigned)field(gpu, "temperature", 34);
  }
  return rc;
}

#ifndef FAKE_NVML_OLD
FAKE_EXPORT nvmlReturn_t nvmlDeviceGetTemperatureV(nvmlDevice_t device, nvmlTemperature_t* t) {
  int gpu = 0;
  nvmlReturn_t rc = enter(device, "temperature", &gpu);
  if (rc != k_success) {
    return rc;
  }
  if (t->version != 0x0100000Cu) {
    return k_argument_version_mismatch;
  }
  if (t->sensorType != 0) {
    return k_invalid_argument;
  }
  t->temperature = (int)field(gpu, "temperature", 34);
  return k_success;
}
#endif

static nvmlReturn_t clock_field(nvmlDevice_t device, int type, unsigned* mhz, const char* key,
                                unsigned fallback) {
  int gpu = 0;
  nvmlReturn_t rc = enter(device, key, &gpu);
  if (rc == k_success) {
    if (type != 1) {
      return k_not_supported;
    }
    *mhz = (unsigned)field(gpu, key, fallback);
  }
  return rc;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, int type, unsigned* mhz) {
  return clock_field(device, type, mhz, "sm_clock", 1980);
}
FAKE_EXPORT nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t device, int type, unsigned* mhz) {
  return clock_field(device, type, mhz, "sm_clock_max", 1980);
}

/* ---- processes: "pid:bytes,pid:bytes" ------------------------------------------------------ */

static unsigned parse_processes(const char* text, unsigned* pids, unsigned long long* bytes,
                                unsigned capacity) {
  unsigned n = 0;
  while (text != NULL && *text != '\0' && n < capacity) {
    char* end = NULL;
    pids[n] = (unsigned)strtoul(text, &end, 10);
    bytes[n] = 0;
    if (end == text) {
      break;
    }
    if (*end == ':') {
      bytes[n] = strtoull(end + 1, &end, 10);
    }
    ++n;
    text = *end == ',' ? end + 1 : end;
  }
  return n;
}

static nvmlReturn_t processes(nvmlDevice_t device, const char* key, unsigned* count, void* infos,
                              int v2) {
  int gpu = 0;
  nvmlReturn_t rc = enter(device, "processes", &gpu);
  if (rc != k_success) {
    return rc;
  }
  unsigned pids[64];
  unsigned long long bytes[64];
  const unsigned have = parse_processes(fake_gpu_get(gpu, key), pids, bytes, 64);
  if (*count < have || (infos == NULL && have > 0)) {
    *count = have;
    return k_insufficient_size;
  }
  for (unsigned i = 0; i < have; ++i) {
    if (v2) {
      nvmlProcessInfo_v2_t* out = (nvmlProcessInfo_v2_t*)infos + i;
      out->pid = pids[i];
      out->usedGpuMemory = bytes[i];
      out->gpuInstanceId = 0xFFFFFFFFu;
      out->computeInstanceId = 0xFFFFFFFFu;
    } else {
      nvmlProcessInfo_v1_t* out = (nvmlProcessInfo_v1_t*)infos + i;
      out->pid = pids[i];
      out->usedGpuMemory = bytes[i];
    }
  }
  *count = have;
  return k_success;
}

#define FAKE_PROCESS_FUNCTION(function, key, v2)                                                   \
  FAKE_EXPORT nvmlReturn_t function(nvmlDevice_t device, unsigned* count, void* infos) {           \
    return processes(device, key, count, infos, v2);                                               \
  }

FAKE_PROCESS_FUNCTION(nvmlDeviceGetComputeRunningProcesses, "compute_processes", 0)
FAKE_PROCESS_FUNCTION(nvmlDeviceGetGraphicsRunningProcesses, "graphics_processes", 0)
#ifndef FAKE_NVML_OLD
FAKE_PROCESS_FUNCTION(nvmlDeviceGetComputeRunningProcesses_v2, "compute_processes", 1)
FAKE_PROCESS_FUNCTION(nvmlDeviceGetGraphicsRunningProcesses_v2, "graphics_processes", 1)
FAKE_PROCESS_FUNCTION(nvmlDeviceGetComputeRunningProcesses_v3, "compute_processes", 1)
FAKE_PROCESS_FUNCTION(nvmlDeviceGetGraphicsRunningProcesses_v3, "graphics_processes", 1)
#endif

/* ---- topology, NVLink, fabric ---------------------------------------------------------------- */

enum { k_nvlink_max = 18 };

/* A link the GPU has: `nvlinks` links (default 0: none, every link call answers NOT_SUPPORTED). */
static nvmlReturn_t enter_link(nvmlDevice_t device, unsigned link, int* gpu) {
  nvmlReturn_t rc = enter(device, "nvlink", gpu);
  if (rc != k_success) {
    return rc;
  }
  if (link >= k_nvlink_max) {
    return k_invalid_argument;
  }
  return link < (unsigned)field(*gpu, "nvlinks", 0) ? k_success : k_not_supported;
}

/* Whether `link` is in the comma-separated list `nvlink_down`. */
static int link_down(int gpu, unsigned link) {
  const char* list = fake_gpu_get(gpu, "nvlink_down");
  while (list != NULL && *list != '\0') {
    char* end = NULL;
    const unsigned long value = strtoul(list, &end, 10);
    if (end == list) {
      break;
    }
    if (value == link) {
      return 1;
    }
    list = *end == ',' ? end + 1 : end;
  }
  return 0;
}

static int active_links(int gpu) {
  int active = 0;
  for (unsigned link = 0; link < (unsigned)field(gpu, "nvlinks", 0); ++link) {
    active += !link_down(gpu, link);
  }
  return active;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t device, unsigned link,
                                                  unsigned* active) {
  int gpu = 0;
  const nvmlReturn_t rc = enter_link(device, link, &gpu);
  if (rc == k_success) {
    *active = !link_down(gpu, link);
  }
  return rc;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetNvLinkVersion(nvmlDevice_t device, unsigned link,
                                                    unsigned* version) {
  int gpu = 0;
  const nvmlReturn_t rc = enter_link(device, link, &gpu);
  if (rc == k_success) {
    *version = (unsigned)field(gpu, "nvlink_version", 6); /* NVML_NVLINK_VERSION_4_0 */
  }
  return rc;
}

#ifndef FAKE_NVML_OLD
/* Remote end: `nvlink_remote` ("peer": GPU N^1, the other of a bridged pair; else a bus id);
 * default an NVSwitch's address. */
static nvmlReturn_t remote_pci(nvmlDevice_t device, unsigned link, nvmlPciInfo_t* pci) {
  int gpu = 0;
  const nvmlReturn_t rc = enter_link(device, link, &gpu);
  if (rc != k_success) {
    return rc;
  }
  memset(pci, 0, sizeof *pci);
  const char* remote = fake_gpu_get(gpu, "nvlink_remote");
  const char* bus_id = remote == NULL                ? "00000000:F0:00.0"
                       : strcmp(remote, "peer") == 0 ? fake_gpu_bus_id(gpu ^ 1)
                                                     : remote;
  unsigned function = 0;
  sscanf(bus_id, "%x:%x:%x.%x", &pci->domain, &pci->bus, &pci->device, &function);
  snprintf(pci->busId, sizeof pci->busId, "%s", bus_id);
  return k_success;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(nvmlDevice_t device, unsigned link,
                                                             nvmlPciInfo_t* pci) {
  return remote_pci(device, link, pci);
}
#endif

#ifndef FAKE_NVML_OLD
/* nvmlFieldValue_t; only the NVLink error totals over every link (fields 52, 59, 38, 45: the
 * sums of the counters below) and each link's DL replay, recovery and CRC counters (161, 162,
 * 163, scopeId the link; CRC is `nvlink.L.crc`, apart from the flit and data counters, as on an
 * H200) are answered, each other field NOT_SUPPORTED. `nvlink_totals` and `nvlink_scoped` "na"
 * make those NOT_SUPPORTED too (a driver that reads counters link by link only). */
typedef struct {
  unsigned fieldId;
  unsigned scopeId;
  long long timestamp;
  long long latencyUsec;
  unsigned valueType;
  nvmlReturn_t nvmlReturn;
  unsigned long long value;
} nvmlFieldValue_t;

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t device, int count,
                                                  nvmlFieldValue_t* values) {
  static const struct {
    unsigned id;
    const char* name;
  } k_totals[] = {{52, "replay"}, {59, "recovery"}, {38, "crc_flit"}, {45, "crc_data"}};
  int gpu = 0;
  const nvmlReturn_t rc = enter(device, NULL, &gpu);
  if (rc != k_success) {
    return rc;
  }
  if (count < 0 || (count > 0 && values == NULL)) {
    return k_invalid_argument;
  }
  const nvmlReturn_t totals_rc = field_rc(gpu, "nvlink_totals");
  const nvmlReturn_t scoped_rc = field_rc(gpu, "nvlink_scoped");
  for (int i = 0; i < count; ++i) {
    values[i].nvmlReturn = k_not_supported;
    const unsigned link = values[i].scopeId;
    if (values[i].fieldId >= 161 && values[i].fieldId <= 163 && scoped_rc == k_success &&
        link < (unsigned)field(gpu, "nvlinks", 0)) {
      static const char* const k_scoped[] = {"replay", "recovery", "crc"};
      char key[64];
      snprintf(key, sizeof key, "nvlink.%u.%s", link, k_scoped[values[i].fieldId - 161]);
      values[i].valueType = 3; /* NVML_VALUE_TYPE_UNSIGNED_LONG_LONG */
      values[i].nvmlReturn = k_success;
      values[i].value = field(gpu, key, 0);
      continue;
    }
    for (size_t t = 0; t < sizeof k_totals / sizeof k_totals[0]; ++t) {
      if (values[i].fieldId != k_totals[t].id || totals_rc != k_success) {
        continue;
      }
      unsigned long long sum = 0;
      for (unsigned link = 0; link < (unsigned)field(gpu, "nvlinks", 0); ++link) {
        char key[64];
        snprintf(key, sizeof key, "nvlink.%u.%s", link, k_totals[t].name);
        sum += field(gpu, key, 0);
      }
      values[i].valueType = 3; /* NVML_VALUE_TYPE_UNSIGNED_LONG_LONG */
      values[i].nvmlReturn = k_success;
      values[i].value = sum;
    }
  }
  return k_success;
}
#endif

/* Counters: `nvlink.L.replay`, `nvlink.L.recovery`, `nvlink.L.crc_flit`, `nvlink.L.crc_data`;
 * `nvlink_counters` "na"/"err:N" fails this call alone. */
FAKE_EXPORT nvmlReturn_t nvmlDeviceGetNvLinkErrorCounter(nvmlDevice_t device, unsigned link,
                                                         int counter, unsigned long long* value) {
  static const char* const k_names[] = {"replay", "recovery", "crc_flit", "crc_data", "ecc_data"};
  int gpu = 0;
  nvmlReturn_t rc = enter_link(device, link, &gpu);
  if (rc == k_success) {
    rc = field_rc(gpu, "nvlink_counters");
  }
  if (rc != k_success) {
    return rc;
  }
  if (counter < 0 || counter > 4) {
    return k_invalid_argument;
  }
  char key[64];
  snprintf(key, sizeof key, "nvlink.%u.%s", link, k_names[counter]);
  *value = field(gpu, key, 0);
  return k_success;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetCpuAffinity(nvmlDevice_t device, unsigned words,
                                                  unsigned long* set) {
  int gpu = 0;
  const nvmlReturn_t rc = enter(device, "cpu_affinity", &gpu);
  if (rc != k_success) {
    return rc;
  }
  if (words == 0 || set == NULL) {
    return k_invalid_argument;
  }
  memset(set, 0, words * sizeof *set);
  set[0] = (unsigned long)field(gpu, "cpu_affinity", 0xFFFF);
  return k_success;
}

/* `topology.A.B` (either order): the common ancestor level; default NODE (40) when both GPUs are
 * on one NUMA node, SYSTEM (50) otherwise. */
FAKE_EXPORT nvmlReturn_t nvmlDeviceGetTopologyCommonAncestor(nvmlDevice_t a, nvmlDevice_t b,
                                                             int* level) {
  int gpu_a = 0;
  int gpu_b = 0;
  nvmlReturn_t rc = enter(a, "topology", &gpu_a);
  if (rc == k_success) {
    rc = enter(b, "topology", &gpu_b);
  }
  if (rc != k_success) {
    return rc;
  }
  char key[64];
  snprintf(key, sizeof key, "topology.%d.%d", gpu_a < gpu_b ? gpu_a : gpu_b,
           gpu_a < gpu_b ? gpu_b : gpu_a);
  const int same_node = field(gpu_a, "numa_node", 0) == field(gpu_b, "numa_node", 0);
  *level = (int)fake_get_int(key, same_node ? 40 : 50);
  return k_success;
}

/* `p2p.A.B.read` / `p2p.A.B.nvlink` (A < B): an nvmlGpuP2PStatus_t; default OK for read, and for
 * NVLink when both GPUs have an active link (else 5, NOT_SUPPORTED). */
FAKE_EXPORT nvmlReturn_t nvmlDeviceGetP2PStatus(nvmlDevice_t a, nvmlDevice_t b, int index,
                                                int* status) {
  int gpu_a = 0;
  int gpu_b = 0;
  nvmlReturn_t rc = enter(a, "p2p", &gpu_a);
  if (rc == k_success) {
    rc = enter(b, "p2p", &gpu_b);
  }
  if (rc != k_success) {
    return rc;
  }
  const char* what = index == 0 ? "read" : index == 1 ? "write" : index == 2 ? "nvlink" : "other";
  char key[64];
  snprintf(key, sizeof key, "p2p.%d.%d.%s", gpu_a < gpu_b ? gpu_a : gpu_b,
           gpu_a < gpu_b ? gpu_b : gpu_a, what);
  const int nvlink = active_links(gpu_a) > 0 && active_links(gpu_b) > 0;
  *status = (int)fake_get_int(key, index == 2 && !nvlink ? 5 : 0);
  return k_success;
}

#ifndef FAKE_NVML_OLD
typedef struct {
  unsigned char clusterUuid[16];
  nvmlReturn_t status;
  unsigned cliqueId;
  unsigned char state;
} nvmlGpuFabricInfo_t;
typedef struct {
  unsigned version;
  unsigned char clusterUuid[16];
  nvmlReturn_t status;
  unsigned cliqueId;
  unsigned char state;
  unsigned healthMask;
} nvmlGpuFabricInfo_v2_t;

/* `fabric_state` (0 not supported, 1 not started, 2 in progress, 3 completed; default 0),
 * `fabric_status` (nvmlReturn_t), `fabric_clique`, `fabric_cluster` (32 hex digits),
 * `fabric_health`. */
static nvmlReturn_t fabric(nvmlDevice_t device, unsigned char* uuid, nvmlReturn_t* status,
                           unsigned* clique, unsigned char* state, unsigned* health) {
  int gpu = 0;
  const nvmlReturn_t rc = enter(device, "fabric", &gpu);
  if (rc != k_success) {
    return rc;
  }
  memset(uuid, 0, 16);
  const char* cluster = fake_gpu_get(gpu, "fabric_cluster");
  for (int i = 0; cluster != NULL && i < 16 && cluster[2 * i] != '\0' && cluster[2 * i + 1] != '\0';
       ++i) {
    unsigned byte = 0;
    sscanf(cluster + 2 * i, "%2x", &byte);
    uuid[i] = (unsigned char)byte;
  }
  *status = (nvmlReturn_t)field(gpu, "fabric_status", 0);
  *clique = (unsigned)field(gpu, "fabric_clique", 0);
  *state = (unsigned char)field(gpu, "fabric_state", 0);
  if (health != NULL) {
    *health = (unsigned)field(gpu, "fabric_health", 0);
  }
  return k_success;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetGpuFabricInfo(nvmlDevice_t device,
                                                    nvmlGpuFabricInfo_t* info) {
  return fabric(device, info->clusterUuid, &info->status, &info->cliqueId, &info->state, NULL);
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetGpuFabricInfoV(nvmlDevice_t device,
                                                     nvmlGpuFabricInfo_v2_t* info) {
  if (info->version != (sizeof(nvmlGpuFabricInfo_v2_t) | (2u << 24))) {
    return k_argument_version_mismatch;
  }
  return fabric(device, info->clusterUuid, &info->status, &info->cliqueId, &info->state,
                &info->healthMask);
}
#endif

/* ---- events (the long level's Xid watch) ---------------------------------------------------- */
/* nvmlEventSetWait waits its timeout and answers NVML_ERROR_TIMEOUT (no event): a healthy GPU. */

typedef struct nvmlEventSet_st* nvmlEventSet_t;
typedef struct {
  nvmlDevice_t device;
  unsigned long long eventType;
  unsigned long long eventData;
  unsigned gpuInstanceId;
  unsigned computeInstanceId;
} nvmlEventData_t;

static int g_event_set_token = 0;

FAKE_EXPORT nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t* set) {
  *set = (nvmlEventSet_t)&g_event_set_token;
  return k_success;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t device, unsigned long long types,
                                                  nvmlEventSet_t set) {
  (void)device;
  (void)types;
  (void)set;
  return k_success;
}

static nvmlReturn_t event_wait(nvmlEventSet_t set, nvmlEventData_t* data, unsigned timeout_ms) {
  (void)set;
  (void)data;
  struct timespec pause = {(time_t)(timeout_ms / 1000), (long)(timeout_ms % 1000) * 1000000L};
  nanosleep(&pause, NULL);
  return 10; /* NVML_ERROR_TIMEOUT */
}

#ifndef FAKE_NVML_OLD
FAKE_EXPORT nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t* data,
                                             unsigned timeout_ms) {
  return event_wait(set, data, timeout_ms);
}
#endif
FAKE_EXPORT nvmlReturn_t nvmlEventSetWait(nvmlEventSet_t set, nvmlEventData_t* data,
                                          unsigned timeout_ms) {
  return event_wait(set, data, timeout_ms);
}

FAKE_EXPORT nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set) {
  (void)set;
  return k_success;
}
