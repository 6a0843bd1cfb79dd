#pragma once
/// NVML as a table of function pointers resolved with dlsym from libnvidia-ml.so.1. The toolkit
/// ships no nvml.h, so the types are declared here by hand from NVML API 13 (sizes checked, see
/// methods.md §6). Each entry is resolved by its newest versioned name first and older names
/// after, so old drivers still load. Only child processes may call load_nvml_api().

#include <array>
#include <cstdint>
#include <string>

#include "platform/dynlib.hpp"

namespace gpucheck::platform {

// NVML's own C spellings, so the table reads like the header it replaces.
// NOLINTBEGIN(readability-identifier-naming)
using nvmlDevice_t = struct nvmlDevice_st*;
using nvmlReturn_t = int;
using nvmlEnableState_t = int;
using nvmlComputeMode_t = int;

using nvmlEventSet_t = struct nvmlEventSet_st*;

/// nvmlEventSetWait_v2's answer.
struct nvmlEventData_t {
  nvmlDevice_t device;
  unsigned long long eventType;
  unsigned long long eventData; ///< the Xid, for nvmlEventTypeXidCriticalError
  unsigned gpuInstanceId;
  unsigned computeInstanceId;
};

struct nvmlPciInfo_t {
  char busIdLegacy[16];
  unsigned domain;
  unsigned bus;
  unsigned device;
  unsigned pciDeviceId;
  unsigned pciSubSystemId;
  char busId[32];
};
static_assert(sizeof(nvmlPciInfo_t) == 68);

struct nvmlMemory_t {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};
static_assert(sizeof(nvmlMemory_t) == 24);

struct nvmlMemory_v2_t {
  unsigned version;
  unsigned long long total;
  unsigned long long reserved;
  unsigned long long free;
  unsigned long long used;
};
static_assert(sizeof(nvmlMemory_v2_t) == 40);

/// Used by the _v2 and _v3 process queries.
struct nvmlProcessInfo_v2_t {
  unsigned pid;
  unsigned long long usedGpuMemory;
  unsigned gpuInstanceId;
  unsigned computeInstanceId;
};
static_assert(sizeof(nvmlProcessInfo_v2_t) == 24);

/// Used by the unversioned process queries of old drivers.
struct nvmlProcessInfo_v1_t {
  unsigned pid;
  unsigned long long usedGpuMemory;
};
static_assert(sizeof(nvmlProcessInfo_v1_t) == 16);

struct nvmlTemperature_t {
  unsigned version;
  int sensorType;
  int temperature;
};
static_assert(sizeof(nvmlTemperature_t) == 12);
/// nvmlDeviceGetGpuFabricInfo (R525+): no version field.
struct nvmlGpuFabricInfo_t {
  unsigned char clusterUuid[16];
  nvmlReturn_t status;
  unsigned cliqueId;
  unsigned char state;
};
static_assert(sizeof(nvmlGpuFabricInfo_t) == 28);

/// nvmlDeviceGetGpuFabricInfoV with version 2 (a newer NVML's v3 only appends).
struct nvmlGpuFabricInfo_v2_t {
  unsigned version;
  unsigned char clusterUuid[16];
  nvmlReturn_t status;
  unsigned cliqueId;
  unsigned char state;
  unsigned healthMask;
};
static_assert(sizeof(nvmlGpuFabricInfo_v2_t) == 36);

/// One value of nvmlDeviceGetFieldValues: the caller sets fieldId (and scopeId), NVML the rest.
struct nvmlFieldValue_t {
  unsigned fieldId;
  unsigned scopeId;
  long long timestamp;
  long long latencyUsec;
  unsigned valueType;
  nvmlReturn_t nvmlReturn;
  unsigned long long value; ///< the union nvmlValue_t; the NVLink counters are unsigned long long
};
static_assert(sizeof(nvmlFieldValue_t) == 40);
// NOLINTEND(readability-identifier-naming)

/// NVML's struct version: sizeof | (version << 24).
constexpr unsigned k_nvml_memory_v2_version = sizeof(nvmlMemory_v2_t) | (2U << 24);
constexpr unsigned k_nvml_temperature_v1_version = sizeof(nvmlTemperature_t) | (1U << 24);
constexpr unsigned k_nvml_fabric_info_v2_version = sizeof(nvmlGpuFabricInfo_v2_t) | (2U << 24);
static_assert(k_nvml_memory_v2_version == 0x02000028U);
static_assert(k_nvml_fabric_info_v2_version == 0x02000024U);
static_assert(k_nvml_temperature_v1_version == 0x0100000CU);

constexpr nvmlReturn_t k_nvml_success = 0;
constexpr nvmlReturn_t k_nvml_not_supported = 3;
constexpr nvmlReturn_t k_nvml_insufficient_size = 7;
constexpr int k_nvml_string_buffer = 96; ///< enough for names, UUIDs, serials, versions

constexpr int k_nvml_clock_sm = 1;                   ///< nvmlClockType_t NVML_CLOCK_SM
constexpr int k_nvml_clock_mem = 2;                  ///< NVML_CLOCK_MEM
constexpr nvmlReturn_t k_nvml_timeout = 10;          ///< NVML_ERROR_TIMEOUT
constexpr unsigned long long k_nvml_event_xid = 0x8; ///< nvmlEventTypeXidCriticalError
constexpr int k_nvml_temperature_gpu = 0;        ///< nvmlTemperatureSensors_t NVML_TEMPERATURE_GPU
constexpr int k_nvml_memory_error_corrected = 0; ///< nvmlMemoryErrorType_t
constexpr int k_nvml_memory_error_uncorrected = 1;
constexpr int k_nvml_counter_volatile = 0; ///< nvmlEccCounterType_t
constexpr int k_nvml_counter_aggregate = 1;
constexpr int k_nvml_retired_sbe = 0; ///< nvmlPageRetirementCause_t MULTIPLE_SINGLE_BIT_ECC_ERRORS
constexpr int k_nvml_retired_dbe = 1; ///< DOUBLE_BIT_ECC_ERROR
constexpr unsigned k_nvml_nvlink_max_links = 18; ///< NVML_NVLINK_MAX_LINKS
constexpr int k_nvml_nvlink_error_replay = 0;    ///< nvmlNvLinkErrorCounter_t DL_REPLAY
constexpr int k_nvml_nvlink_error_recovery = 1;  ///< DL_RECOVERY
constexpr int k_nvml_nvlink_error_crc_flit = 2;  ///< DL_CRC_FLIT
constexpr int k_nvml_nvlink_error_crc_data = 3;  ///< DL_CRC_DATA
/// nvmlFieldValue_t fieldIds: each counter's total over every link, in the order of the
/// nvmlNvLinkErrorCounter_t values above (replay, recovery, CRC flit, CRC data).
constexpr std::array<unsigned, 4> k_nvml_fi_nvlink_error_totals{52, 59, 38, 45};
/// nvmlFieldValue_t fieldIds NVML_FI_DEV_NVLINK_ERROR_DL_REPLAY, _RECOVERY and _CRC: one link's
/// counter (scopeId: the link). Replay and recovery are nvmlDeviceGetNvLinkErrorCounter's; CRC
/// is the count nvidia-smi nvlink -e shows on NVLink 4, not the flit or data counter.
constexpr unsigned k_nvml_fi_nvlink_error_dl_replay = 161;
constexpr unsigned k_nvml_fi_nvlink_error_dl_recovery = 162;
constexpr unsigned k_nvml_fi_nvlink_error_dl_crc = 163;
constexpr unsigned k_nvml_value_type_unsigned_int = 1; ///< nvmlValueType_t
constexpr unsigned k_nvml_value_type_unsigned_long = 2;
constexpr unsigned k_nvml_value_type_unsigned_long_long = 3;
constexpr unsigned k_nvml_value_type_signed_long_long = 4;
constexpr int k_nvml_p2p_caps_read = 0;       ///< nvmlGpuP2PCapsIndex_t NVML_P2P_CAPS_INDEX_READ
constexpr int k_nvml_p2p_caps_nvlink = 2;     ///< NVML_P2P_CAPS_INDEX_NVLINK
constexpr unsigned k_nvml_cpu_set_words = 64; ///< 4096 CPUs in unsigned longs

/// `nvml_signature_t<void (T)>` is T: lets a macro argument hold a type with commas.
template <typename T> struct NvmlSignature;
template <typename T> struct NvmlSignature<void(T)> { using type = T; };
template <typename T> using nvml_signature_t = typename NvmlSignature<T>::type;

// X(field, (signature), names...): the field is named after the unversioned NVML function (or the
// struct generation it uses); names are tried in order.
#define GPUCHECK_NVML_FUNCTIONS(X)                                                                 \
  X(nvmlInit, (nvmlReturn_t(*)()), "nvmlInit_v2", "nvmlInit")                                      \
  X(nvmlShutdown, (nvmlReturn_t(*)()), "nvmlShutdown")                                             \
  X(nvmlErrorString, (const char* (*)(nvmlReturn_t)), "nvmlErrorString")                           \
  X(nvmlSystemGetDriverVersion, (nvmlReturn_t(*)(char*, unsigned)), "nvmlSystemGetDriverVersion")  \
  X(nvmlSystemGetNVMLVersion, (nvmlReturn_t(*)(char*, unsigned)), "nvmlSystemGetNVMLVersion")      \
  X(nvmlSystemGetCudaDriverVersion_v2, (nvmlReturn_t(*)(int*)),                                    \
    "nvmlSystemGetCudaDriverVersion_v2")                                                           \
  X(nvmlSystemGetCudaDriverVersion, (nvmlReturn_t(*)(int*)), "nvmlSystemGetCudaDriverVersion")     \
  X(nvmlDeviceGetCount, (nvmlReturn_t(*)(unsigned*)), "nvmlDeviceGetCount_v2",                     \
    "nvmlDeviceGetCount")                                                                          \
  X(nvmlDeviceGetHandleByIndex, (nvmlReturn_t(*)(unsigned, nvmlDevice_t*)),                        \
    "nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex")                                 \
  X(nvmlDeviceGetName, (nvmlReturn_t(*)(nvmlDevice_t, char*, unsigned)), "nvmlDeviceGetName")      \
  X(nvmlDeviceGetUUID, (nvmlReturn_t(*)(nvmlDevice_t, char*, unsigned)), "nvmlDeviceGetUUID")      \
  X(nvmlDeviceGetSerial, (nvmlReturn_t(*)(nvmlDevice_t, char*, unsigned)), "nvmlDeviceGetSerial")  \
  X(nvmlDeviceGetPciInfo, (nvmlReturn_t(*)(nvmlDevice_t, nvmlPciInfo_t*)),                         \
    "nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetPciInfo_v2")                                          \
  X(nvmlDeviceGetCudaComputeCapability, (nvmlReturn_t(*)(nvmlDevice_t, int*, int*)),               \
    "nvmlDeviceGetCudaComputeCapability")                                                          \
  X(nvmlDeviceGetMemoryInfo_v2, (nvmlReturn_t(*)(nvmlDevice_t, nvmlMemory_v2_t*)),                 \
    "nvmlDeviceGetMemoryInfo_v2")                                                                  \
  X(nvmlDeviceGetMemoryInfo, (nvmlReturn_t(*)(nvmlDevice_t, nvmlMemory_t*)),                       \
    "nvmlDeviceGetMemoryInfo")                                                                     \
  X(nvmlDeviceGetCurrPcieLinkGeneration, (nvmlReturn_t(*)(nvmlDevice_t, unsigned*)),               \
    "nvmlDeviceGetCurrPcieLinkGeneration")                                                         \
  X(nvmlDeviceGetMaxPcieLinkGeneration, (nvmlReturn_t(*)(nvmlDevice_t, unsigned*)),                \
    "nvmlDeviceGetMaxPcieLinkGeneration")                                                          \
  X(nvmlDeviceGetCurrPcieLinkWidth, (nvmlReturn_t(*)(nvmlDevice_t, unsigned*)),                    \
    "nvmlDeviceGetCurrPcieLinkWidth")                                                              \
  X(nvmlDeviceGetMaxPcieLinkWidth, (nvmlReturn_t(*)(nvmlDevice_t, unsigned*)),                     \
    "nvmlDeviceGetMaxPcieLinkWidth")                                                               \
  X(nvmlDeviceGetPersistenceMode, (nvmlReturn_t(*)(nvmlDevice_t, nvmlEnableState_t*)),             \
    "nvmlDeviceGetPersistenceMode")                                                                \
  X(nvmlDeviceGetComputeMode, (nvmlReturn_t(*)(nvmlDevice_t, nvmlComputeMode_t*)),                 \
    "nvmlDeviceGetComputeMode")                                                                    \
  X(nvmlDeviceGetMigMode, (nvmlReturn_t(*)(nvmlDevice_t, unsigned*, unsigned*)),                   \
    "nvmlDeviceGetMigMode")                                                                        \
  X(nvmlDeviceGetMaxMigDeviceCount, (nvmlReturn_t(*)(nvmlDevice_t, unsigned*)),                    \
    "nvmlDeviceGetMaxMigDeviceCount")                                                              \
  X(nvmlDeviceGetMigDeviceHandleByIndex, (nvmlReturn_t(*)(nvmlDevice_t, unsigned, nvmlDevice_t*)), \
    "nvmlDeviceGetMigDeviceHandleByIndex")                                                         \
  X(nvmlDeviceGetEccMode, (nvmlReturn_t(*)(nvmlDevice_t, nvmlEnableState_t*, nvmlEnableState_t*)), \
    "nvmlDeviceGetEccMode")                                                                        \
  X(nvmlDeviceGetTotalEccErrors, (nvmlReturn_t(*)(nvmlDevice_t, int, int, unsigned long long*)),   \
    "nvmlDeviceGetTotalEccErrors")                                                                 \
  X(nvmlDeviceGetRetiredPages,                                                                     \
    (nvmlReturn_t(*)(nvmlDevice_t, int, unsigned*, unsigned long long*)),                          \
    "nvmlDeviceGetRetiredPages")                                                                   \
  X(nvmlDeviceGetRetiredPagesPendingStatus, (nvmlReturn_t(*)(nvmlDevice_t, nvmlEnableState_t*)),   \
    "nvmlDeviceGetRetiredPagesPendingStatus")                                                      \
  X(nvmlDeviceGetRemappedRows,                                                                     \
    (nvmlReturn_t(*)(nvmlDevice_t, unsigned*, unsigned*, unsigned*, unsigned*)),                   \
    "nvmlDeviceGetRemappedRows")                                                                   \
  X(nvmlDeviceGetCurrentClocksEventReasons, (nvmlReturn_t(*)(nvmlDevice_t, unsigned long long*)),  \
    "nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons")         \
  X(nvmlDeviceGetTemperatureV, (nvmlReturn_t(*)(nvmlDevice_t, nvmlTemperature_t*)),                \
    "nvmlDeviceGetTemperatureV")                                                                   \
  X(nvmlDeviceGetTemperature, (nvmlReturn_t(*)(nvmlDevice_t, int, unsigned*)),                     \
    "nvmlDeviceGetTemperature")                                                                    \
  X(nvmlDeviceGetPowerUsage, (nvmlReturn_t(*)(nvmlDevice_t, unsigned*)),                           \
    "nvmlDeviceGetPowerUsage")                                                                     \
  X(nvmlDeviceGetEnforcedPowerLimit, (nvmlReturn_t(*)(nvmlDevice_t, unsigned*)),                   \
    "nvmlDeviceGetEnforcedPowerLimit")                                                             \
  X(nvmlDeviceGetClockInfo, (nvmlReturn_t(*)(nvmlDevice_t, int, unsigned*)),                       \
    "nvmlDeviceGetClockInfo")                                                                      \
  X(nvmlDeviceGetMaxClockInfo, (nvmlReturn_t(*)(nvmlDevice_t, int, unsigned*)),                    \
    "nvmlDeviceGetMaxClockInfo")                                                                   \
  X(nvmlDeviceGetNumaNodeId, (nvmlReturn_t(*)(nvmlDevice_t, unsigned*)),                           \
    "nvmlDeviceGetNumaNodeId")                                                                     \
  X(nvmlDeviceGetDisplayMode, (nvmlReturn_t(*)(nvmlDevice_t, nvmlEnableState_t*)),                 \
    "nvmlDeviceGetDisplayMode")                                                                    \
  X(nvmlDeviceGetDisplayActive, (nvmlReturn_t(*)(nvmlDevice_t, nvmlEnableState_t*)),               \
    "nvmlDeviceGetDisplayActive")                                                                  \
  X(nvmlDeviceGetCpuAffinity, (nvmlReturn_t(*)(nvmlDevice_t, unsigned, unsigned long*)),           \
    "nvmlDeviceGetCpuAffinity")                                                                    \
  X(nvmlDeviceGetTopologyCommonAncestor, (nvmlReturn_t(*)(nvmlDevice_t, nvmlDevice_t, int*)),      \
    "nvmlDeviceGetTopologyCommonAncestor")                                                         \
  X(nvmlDeviceGetP2PStatus, (nvmlReturn_t(*)(nvmlDevice_t, nvmlDevice_t, int, int*)),              \
    "nvmlDeviceGetP2PStatus")                                                                      \
  X(nvmlDeviceGetNvLinkState, (nvmlReturn_t(*)(nvmlDevice_t, unsigned, nvmlEnableState_t*)),       \
    "nvmlDeviceGetNvLinkState")                                                                    \
  X(nvmlDeviceGetNvLinkVersion, (nvmlReturn_t(*)(nvmlDevice_t, unsigned, unsigned*)),              \
    "nvmlDeviceGetNvLinkVersion")                                                                  \
  X(nvmlDeviceGetNvLinkRemotePciInfo, (nvmlReturn_t(*)(nvmlDevice_t, unsigned, nvmlPciInfo_t*)),   \
    "nvmlDeviceGetNvLinkRemotePciInfo_v2")                                                         \
  X(nvmlDeviceGetNvLinkErrorCounter,                                                               \
    (nvmlReturn_t(*)(nvmlDevice_t, unsigned, int, unsigned long long*)),                           \
    "nvmlDeviceGetNvLinkErrorCounter")                                                             \
  X(nvmlDeviceGetFieldValues, (nvmlReturn_t(*)(nvmlDevice_t, int, nvmlFieldValue_t*)),             \
    "nvmlDeviceGetFieldValues")                                                                    \
  X(nvmlDeviceGetGpuFabricInfoV, (nvmlReturn_t(*)(nvmlDevice_t, nvmlGpuFabricInfo_v2_t*)),         \
    "nvmlDeviceGetGpuFabricInfoV")                                                                 \
  X(nvmlDeviceGetGpuFabricInfo, (nvmlReturn_t(*)(nvmlDevice_t, nvmlGpuFabricInfo_t*)),             \
    "nvmlDeviceGetGpuFabricInfo")                                                                  \
  X(nvmlDeviceGetComputeRunningProcesses_v2,                                                       \
    (nvmlReturn_t(*)(nvmlDevice_t, unsigned*, nvmlProcessInfo_v2_t*)),                             \
    "nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetComputeRunningProcesses_v2")          \
  X(nvmlDeviceGetComputeRunningProcesses_v1,                                                       \
    (nvmlReturn_t(*)(nvmlDevice_t, unsigned*, nvmlProcessInfo_v1_t*)),                             \
    "nvmlDeviceGetComputeRunningProcesses")                                                        \
  X(nvmlDeviceGetGraphicsRunningProcesses_v2,                                                      \
    (nvmlReturn_t(*)(nvmlDevice_t, unsigned*, nvmlProcessInfo_v2_t*)),                             \
    "nvmlDeviceGetGraphicsRunningProcesses_v3", "nvmlDeviceGetGraphicsRunningProcesses_v2")        \
  X(nvmlDeviceGetGraphicsRunningProcesses_v1,                                                      \
    (nvmlReturn_t(*)(nvmlDevice_t, unsigned*, nvmlProcessInfo_v1_t*)),                             \
    "nvmlDeviceGetGraphicsRunningProcesses")                                                       \
  X(nvmlEventSetCreate, (nvmlReturn_t(*)(nvmlEventSet_t*)), "nvmlEventSetCreate")                  \
  X(nvmlDeviceRegisterEvents, (nvmlReturn_t(*)(nvmlDevice_t, unsigned long long, nvmlEventSet_t)), \
    "nvmlDeviceRegisterEvents")                                                                    \
  X(nvmlEventSetWait, (nvmlReturn_t(*)(nvmlEventSet_t, nvmlEventData_t*, unsigned)),               \
    "nvmlEventSetWait_v2", "nvmlEventSetWait")                                                     \
  X(nvmlEventSetFree, (nvmlReturn_t(*)(nvmlEventSet_t)), "nvmlEventSetFree")

struct NvmlApi {
#define GPUCHECK_NVML_FIELD(field, signature, ...) nvml_signature_t<void signature> field = nullptr;
  GPUCHECK_NVML_FUNCTIONS(GPUCHECK_NVML_FIELD)
#undef GPUCHECK_NVML_FIELD

  /// nvmlInit, the device count and the handle lookup all resolved.
  bool usable = false;
};

/// Resolve every entry from an opened libnvidia-ml. Absent entries stay nullptr (an older
/// driver); their first name is recorded in lib.load().missing_symbols.
NvmlApi load_nvml_api(DynamicLibrary& lib);

/// "LIB_RM_VERSION_MISMATCH" for 18 (NVML_ERROR_ prefix dropped; "SUCCESS" for 0), from a
/// built-in table; "NVML_ERROR_<n>" for a code not in it.
std::string nvml_error_name(int code);

} // namespace gpucheck::platform
