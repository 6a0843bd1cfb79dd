// Child side of the NVML probe: load libnvidia-ml.so.1, initialise, and read every GPU.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <set>
#include <strings.h>

#include "gpucheck/model/json_io.hpp"
#include "platform/nvml_api.hpp"
#include "platform/probes_child.hpp"
#include "protocol/census.hpp"

namespace gpucheck::platform {

namespace {

/// NVML's "value not available" marker for a process's memory.
constexpr unsigned long long k_nvml_value_not_available = ~0ULL;
constexpr unsigned k_process_slack = 16;

constexpr nvmlReturn_t k_nvml_gpu_is_lost = 15;
/// Queries of the GPU being read that answered GPU_IS_LOST (read_gpu() resets it): a GPU can be
/// lost after NVML gave its handle, and then no fact of it is read.
int g_lost_answers = 0; // NOLINT(cppcoreguidelines-avoid-non-const-global-variables): one thread

nvmlReturn_t counted(nvmlReturn_t rc) {
  if (rc == k_nvml_gpu_is_lost) {
    ++g_lost_answers;
  }
  return rc;
}

/// Call fn(args..., &value) when fn exists; the value when it returns SUCCESS, else nullopt
/// (NOT_SUPPORTED and every other failure alike: the fact could not be read).
template <typename T, typename Fn, typename... Args>
std::optional<T> read_value(Fn fn, Args... args) {
  if (fn == nullptr) {
    return std::nullopt;
  }
  T value{};
  if (counted(fn(args..., &value)) != k_nvml_success) {
    return std::nullopt;
  }
  return value;
}

template <typename Fn> std::string read_string(Fn fn, nvmlDevice_t device) {
  std::array<char, k_nvml_string_buffer> buffer{};
  if (fn == nullptr || counted(fn(device, buffer.data(), buffer.size())) != k_nvml_success) {
    return {};
  }
  return std::string(buffer.data());
}

template <typename Fn> std::optional<std::string> read_system_string(Fn fn) {
  std::array<char, k_nvml_string_buffer> buffer{};
  if (fn == nullptr || fn(buffer.data(), buffer.size()) != k_nvml_success) {
    return std::nullopt;
  }
  return std::string(buffer.data());
}

template <typename T> std::optional<int> as_int(std::optional<T> value) {
  return value ? std::optional<int>(static_cast<int>(*value)) : std::nullopt;
}

/// "00000000:3B:00.0" (NVML's 8-digit domain) -> "0000:3B:00.0", the form the model uses.
std::string short_bus_id(const std::string& bus_id) {
  const auto colon = bus_id.find(':');
  if (colon == 8 && bus_id.compare(0, 4, "0000") == 0) {
    return bus_id.substr(4);
  }
  return bus_id;
}

std::string process_name(uint32_t pid) {
  std::ifstream comm(fmt::format("/proc/{}/comm", pid));
  std::string name;
  std::getline(comm, name);
  return name;
}

std::optional<std::string> compute_mode_name(std::optional<int> mode) {
  static constexpr std::array<const char*, 4> k_names{"default", "exclusive_thread", "prohibited",
                                                      "exclusive_process"};
  if (!mode || *mode < 0 || *mode >= static_cast<int>(k_names.size())) {
    return mode ? std::optional<std::string>(fmt::format("unknown_{}", *mode)) : std::nullopt;
  }
  return std::string(k_names[static_cast<size_t>(*mode)]);
}

/// One process query (count first, then the list); appends processes not yet seen.
template <typename Info, typename Fn>
void read_processes(Fn fn, nvmlDevice_t device, std::vector<GpuProcess>& out,
                    std::set<uint32_t>& seen) {
  unsigned count = 0;
  nvmlReturn_t rc = fn(device, &count, nullptr);
  if (rc != k_nvml_insufficient_size) {
    return; // SUCCESS: no processes; anything else: the query is not available
  }
  // Processes come and go between the two calls: leave room for a few more.
  std::vector<Info> infos(count + k_process_slack);
  count = static_cast<unsigned>(infos.size());
  rc = fn(device, &count, infos.data());
  if (rc != k_nvml_success) {
    return;
  }
  for (unsigned i = 0; i < count && i < infos.size(); ++i) {
    const Info& info = infos[i];
    if (!seen.insert(info.pid).second) {
      continue;
    }
    GpuProcess process;
    process.pid = info.pid;
    if (info.usedGpuMemory != k_nvml_value_not_available) {
      process.used_memory_bytes = info.usedGpuMemory;
    }
    process.name = process_name(info.pid);
    out.push_back(std::move(process));
  }
}

/// The compute processes on a GPU (the newest query the library has).
void read_compute_processes(const NvmlApi& api, nvmlDevice_t device, std::vector<GpuProcess>& out,
                            std::set<uint32_t>& seen) {
  if (api.nvmlDeviceGetComputeRunningProcesses_v2 != nullptr) {
    read_processes<nvmlProcessInfo_v2_t>(api.nvmlDeviceGetComputeRunningProcesses_v2, device, out,
                                         seen);
  } else if (api.nvmlDeviceGetComputeRunningProcesses_v1 != nullptr) {
    read_processes<nvmlProcessInfo_v1_t>(api.nvmlDeviceGetComputeRunningProcesses_v1, device, out,
                                         seen);
  }
}

void read_memory(const NvmlApi& api, nvmlDevice_t device, GpuInfo& gpu) {
  if (api.nvmlDeviceGetMemoryInfo_v2 != nullptr) {
    nvmlMemory_v2_t memory{};
    memory.version = k_nvml_memory_v2_version;
    if (api.nvmlDeviceGetMemoryInfo_v2(device, &memory) == k_nvml_success) {
      gpu.memory_total_bytes = memory.total;
      gpu.memory_used_bytes = memory.used;
      gpu.memory_free_bytes = memory.free;
      return;
    }
  }
  if (api.nvmlDeviceGetMemoryInfo != nullptr) {
    nvmlMemory_t memory{};
    if (api.nvmlDeviceGetMemoryInfo(device, &memory) == k_nvml_success) {
      gpu.memory_total_bytes = memory.total;
      gpu.memory_used_bytes = memory.used;
      gpu.memory_free_bytes = memory.free;
    }
  }
}

void read_mig(const NvmlApi& api, nvmlDevice_t device, GpuInfo& gpu) {
  if (api.nvmlDeviceGetMigMode != nullptr) {
    unsigned current = 0;
    unsigned pending = 0;
    if (api.nvmlDeviceGetMigMode(device, &current, &pending) == k_nvml_success) {
      gpu.mig_enabled = current != 0;
      gpu.mig_pending = pending != 0;
    }
  }
  const auto slots = read_value<unsigned>(api.nvmlDeviceGetMaxMigDeviceCount, device);
  if (!slots || api.nvmlDeviceGetMigDeviceHandleByIndex == nullptr) {
    return;
  }
  int existing = 0;
  for (unsigned i = 0; i < *slots; ++i) {
    nvmlDevice_t mig = nullptr;
    if (api.nvmlDeviceGetMigDeviceHandleByIndex(device, i, &mig) == k_nvml_success) {
      ++existing;
    }
  }
  gpu.mig_instance_count = existing;
}

void read_ecc(const NvmlApi& api, nvmlDevice_t device, GpuInfo& gpu) {
  if (api.nvmlDeviceGetEccMode != nullptr) {
    nvmlEnableState_t current = 0;
    nvmlEnableState_t pending = 0;
    if (api.nvmlDeviceGetEccMode(device, &current, &pending) == k_nvml_success) {
      gpu.ecc_enabled = current != 0;
    }
  }
  const auto errors = api.nvmlDeviceGetTotalEccErrors;
  gpu.ecc_uncorrected_volatile = read_value<unsigned long long>(
      errors, device, k_nvml_memory_error_uncorrected, k_nvml_counter_volatile);
  gpu.ecc_corrected_volatile = read_value<unsigned long long>(
      errors, device, k_nvml_memory_error_corrected, k_nvml_counter_volatile);
  gpu.ecc_uncorrected_aggregate = read_value<unsigned long long>(
      errors, device, k_nvml_memory_error_uncorrected, k_nvml_counter_aggregate);
}

std::optional<int> retired_page_count(const NvmlApi& api, nvmlDevice_t device, int cause) {
  if (api.nvmlDeviceGetRetiredPages == nullptr) {
    return std::nullopt;
  }
  unsigned count = 0;
  const nvmlReturn_t rc = api.nvmlDeviceGetRetiredPages(device, cause, &count, nullptr);
  if (rc != k_nvml_success && rc != k_nvml_insufficient_size) {
    return std::nullopt;
  }
  return static_cast<int>(count);
}

void read_retirement(const NvmlApi& api, nvmlDevice_t device, GpuInfo& gpu) {
  gpu.retired_pages_sbe = retired_page_count(api, device, k_nvml_retired_sbe);
  gpu.retired_pages_dbe = retired_page_count(api, device, k_nvml_retired_dbe);
  if (const auto pending =
          read_value<nvmlEnableState_t>(api.nvmlDeviceGetRetiredPagesPendingStatus, device)) {
    gpu.retired_pages_pending = *pending != 0;
  }
  if (api.nvmlDeviceGetRemappedRows != nullptr) {
    unsigned corrected = 0;
    unsigned uncorrected = 0;
    unsigned pending = 0;
    unsigned failure = 0;
    if (api.nvmlDeviceGetRemappedRows(device, &corrected, &uncorrected, &pending, &failure) ==
        k_nvml_success) {
      gpu.remapped_rows_correctable = static_cast<int>(corrected);
      gpu.remapped_rows_uncorrectable = static_cast<int>(uncorrected);
      gpu.remapped_rows_pending = pending != 0;
      gpu.remapped_rows_failure = failure != 0;
    }
  }
}

std::optional<int> read_temperature(const NvmlApi& api, nvmlDevice_t device) {
  if (api.nvmlDeviceGetTemperatureV != nullptr) {
    nvmlTemperature_t temperature{};
    temperature.version = k_nvml_temperature_v1_version;
    temperature.sensorType = k_nvml_temperature_gpu;
    if (api.nvmlDeviceGetTemperatureV(device, &temperature) == k_nvml_success) {
      return temperature.temperature;
    }
  }
  return as_int(read_value<unsigned>(api.nvmlDeviceGetTemperature, device, k_nvml_temperature_gpu));
}

std::optional<double> watts(std::optional<unsigned> milliwatts) {
  return milliwatts ? std::optional<double>(*milliwatts / 1000.0) : std::nullopt;
}

/// A CPU bit mask (unsigned longs, bit i = CPU i) as a cpulist: "0-55,112-167".
std::string cpulist(const std::vector<unsigned long>& words) {
  constexpr unsigned k_bits = sizeof(unsigned long) * 8;
  std::string out;
  const unsigned total = static_cast<unsigned>(words.size()) * k_bits;
  auto set = [&](unsigned cpu) {
    return cpu < total && ((words[cpu / k_bits] >> (cpu % k_bits)) & 1UL) != 0;
  };
  for (unsigned cpu = 0; cpu < total; ++cpu) {
    if (!set(cpu)) {
      continue;
    }
    unsigned last = cpu;
    while (set(last + 1)) {
      ++last;
    }
    out += (out.empty() ? "" : ",") +
           (last == cpu ? std::to_string(cpu) : fmt::format("{}-{}", cpu, last));
    cpu = last;
  }
  return out;
}

std::optional<std::string> read_cpu_affinity(const NvmlApi& api, nvmlDevice_t device) {
  if (api.nvmlDeviceGetCpuAffinity == nullptr) {
    return std::nullopt;
  }
  std::vector<unsigned long> words(k_nvml_cpu_set_words, 0UL);
  if (api.nvmlDeviceGetCpuAffinity(device, k_nvml_cpu_set_words, words.data()) != k_nvml_success) {
    return std::nullopt;
  }
  return cpulist(words);
}

std::string pci_bus_id_of(const nvmlPciInfo_t& pci) {
  return short_bus_id(std::string(pci.busId, strnlen(pci.busId, sizeof pci.busId)));
}

/// A field's value when NVML read it and it is a non-negative integer, else nullopt.
std::optional<uint64_t> field_integer(const nvmlFieldValue_t& field) {
  if (field.nvmlReturn != k_nvml_success) {
    return std::nullopt;
  }
  switch (field.valueType) {
  case k_nvml_value_type_unsigned_int:
    return static_cast<uint32_t>(field.value);
  case k_nvml_value_type_unsigned_long:
  case k_nvml_value_type_unsigned_long_long:
    return field.value;
  case k_nvml_value_type_signed_long_long:
    return static_cast<long long>(field.value) >= 0 ? std::optional<uint64_t>(field.value)
                                                    : std::nullopt;
  default:
    return std::nullopt;
  }
}

/// nvmlDeviceGetFieldValues on `fields` (fieldId and scopeId set); false when the call itself
/// failed or is missing, each field's own nvmlReturn otherwise.
bool read_fields(const NvmlApi& api, nvmlDevice_t device, std::vector<nvmlFieldValue_t>& fields) {
  return api.nvmlDeviceGetFieldValues != nullptr && !fields.empty() &&
         counted(api.nvmlDeviceGetFieldValues(device, static_cast<int>(fields.size()),
                                              fields.data())) == k_nvml_success;
}

/// Each link's error counters, in the order of k_nvml_nvlink_error_*: replay, recovery, CRC
/// flit, CRC data.
using LinkErrors = std::array<std::optional<uint64_t>, 4>;

/// Each counter's total over every link, in one call.
LinkErrors read_error_totals(const NvmlApi& api, nvmlDevice_t device) {
  LinkErrors totals;
  std::vector<nvmlFieldValue_t> fields(totals.size());
  for (size_t i = 0; i < fields.size(); ++i) {
    fields[i].fieldId = k_nvml_fi_nvlink_error_totals[i];
  }
  if (read_fields(api, device, fields)) {
    for (size_t i = 0; i < fields.size(); ++i) {
      totals[i] = field_integer(fields[i]);
    }
  }
  return totals;
}

/// The DL fields scoped to one link: replay, recovery and CRC.
using ScopedErrors = std::array<std::optional<uint64_t>, 3>;
constexpr std::array<unsigned, 3> k_scoped_fields{k_nvml_fi_nvlink_error_dl_replay,
                                                  k_nvml_fi_nvlink_error_dl_recovery,
                                                  k_nvml_fi_nvlink_error_dl_crc};

/// Each link's DL replay, recovery and CRC counters in one call, as NVLink 4 GPUs have them.
std::vector<ScopedErrors> read_scoped_errors(const NvmlApi& api, nvmlDevice_t device,
                                             const std::vector<NvLinkInfo>& links) {
  const size_t width = k_scoped_fields.size();
  std::vector<ScopedErrors> out(links.size());
  std::vector<nvmlFieldValue_t> fields(width * links.size());
  for (size_t j = 0; j < links.size(); ++j) {
    for (size_t k = 0; k < width; ++k) {
      fields[width * j + k].fieldId = k_scoped_fields[k];
      fields[width * j + k].scopeId = static_cast<unsigned>(links[j].link);
    }
  }
  if (read_fields(api, device, fields)) {
    for (size_t j = 0; j < links.size(); ++j) {
      for (size_t k = 0; k < width; ++k) {
        out[j][k] = field_integer(fields[width * j + k]);
      }
    }
  }
  return out;
}

/// Each link's error counters. A counter whose total over the links reads 0 is 0 on every
/// link; replay, recovery and the DL CRC count come from one call of fields where NVML has
/// them, and a link with the DL CRC count needs no flit or data counter (nvidia-smi shows the
/// former there, and the data counter grows on healthy H200 links). What is left is read link
/// by link (nvmlDeviceGetNvLinkErrorCounter), one call a link and counter.
void read_link_errors(const NvmlApi& api, nvmlDevice_t device, std::vector<NvLinkInfo>& links) {
  if (links.empty()) {
    return;
  }
  const LinkErrors totals = read_error_totals(api, device);
  // Read even when every total is 0: the DL CRC count is not the flit and data counters'.
  const std::vector<ScopedErrors> scoped = read_scoped_errors(api, device, links);
  const std::array<std::optional<uint64_t> NvLinkInfo::*, 4> members{
      &NvLinkInfo::replay_errors, &NvLinkInfo::recovery_errors, &NvLinkInfo::crc_flit_errors,
      &NvLinkInfo::crc_data_errors};
  const std::array<int, 4> counters{k_nvml_nvlink_error_replay, k_nvml_nvlink_error_recovery,
                                    k_nvml_nvlink_error_crc_flit, k_nvml_nvlink_error_crc_data};
  for (size_t j = 0; j < links.size(); ++j) {
    links[j].crc_errors = scoped[j][2];
  }
  for (size_t i = 0; i < counters.size(); ++i) {
    const bool crc = i >= 2;
    for (size_t j = 0; j < links.size(); ++j) {
      NvLinkInfo& info = links[j];
      if (totals[i] == 0ULL) {
        info.*members[i] = 0;
      } else if (crc && info.crc_errors) {
        continue;
      } else if (!crc && scoped[j][i]) {
        info.*members[i] = scoped[j][i];
      } else if (const auto value = read_value<unsigned long long>(
                     api.nvmlDeviceGetNvLinkErrorCounter, device, static_cast<unsigned>(info.link),
                     counters[i])) {
        info.*members[i] = *value;
      }
    }
  }
}

/// Every link whose state NVML can read (a link the GPU does not have answers NOT_SUPPORTED or
/// INVALID_ARGUMENT and is left out).
std::vector<NvLinkInfo> read_nvlinks(const NvmlApi& api, nvmlDevice_t device) {
  std::vector<NvLinkInfo> links;
  if (api.nvmlDeviceGetNvLinkState == nullptr) {
    return links;
  }
  for (unsigned link = 0; link < k_nvml_nvlink_max_links; ++link) {
    nvmlEnableState_t active = 0;
    if (api.nvmlDeviceGetNvLinkState(device, link, &active) != k_nvml_success) {
      continue;
    }
    NvLinkInfo info;
    info.link = static_cast<int>(link);
    info.active = active != 0;
    info.version = as_int(read_value<unsigned>(api.nvmlDeviceGetNvLinkVersion, device, link));
    if (const auto pci =
            read_value<nvmlPciInfo_t>(api.nvmlDeviceGetNvLinkRemotePciInfo, device, link)) {
      info.remote_bus_id = pci_bus_id_of(*pci);
    }
    links.push_back(std::move(info));
  }
  read_link_errors(api, device, links);
  return links;
}

std::string fabric_state_name(unsigned state) {
  static constexpr std::array<const char*, 4> k_names{"not_supported", "not_started", "in_progress",
                                                      "completed"};
  return state < k_names.size() ? std::string(k_names[state]) : fmt::format("unknown_{}", state);
}

std::optional<GpuFabricInfo> read_fabric(const NvmlApi& api, nvmlDevice_t device) {
  GpuFabricInfo out;
  const auto fill = [&out](const unsigned char* uuid, nvmlReturn_t status, unsigned clique,
                           unsigned state) {
    out.state = fabric_state_name(state);
    out.status = status;
    out.status_name = nvml_error_name(status);
    out.clique_id = clique;
    for (int i = 0; i < 16; ++i) {
      out.cluster_uuid += fmt::format("{:02x}", uuid[i]);
    }
  };
  if (api.nvmlDeviceGetGpuFabricInfoV != nullptr) {
    nvmlGpuFabricInfo_v2_t info{};
    info.version = k_nvml_fabric_info_v2_version;
    if (api.nvmlDeviceGetGpuFabricInfoV(device, &info) == k_nvml_success) {
      fill(info.clusterUuid, info.status, info.cliqueId, info.state);
      out.health_mask = info.healthMask;
      return out;
    }
  }
  if (api.nvmlDeviceGetGpuFabricInfo != nullptr) {
    nvmlGpuFabricInfo_t info{};
    if (api.nvmlDeviceGetGpuFabricInfo(device, &info) == k_nvml_success) {
      fill(info.clusterUuid, info.status, info.cliqueId, info.state);
      return out;
    }
  }
  return std::nullopt;
}

std::string topology_level_name(int level) {
  switch (level) {
  case 0:
    return "same_board";
  case 10:
    return "single_switch";
  case 20:
    return "multiple_switches";
  case 30:
    return "host_bridge";
  case 40:
    return "numa_node";
  case 50:
    return "system";
  default:
    return fmt::format("unknown_{}", level);
  }
}

std::string p2p_status_name(int status) {
  static constexpr std::array<const char*, 7> k_names{"ok",
                                                      "chipset_not_supported",
                                                      "gpu_not_supported",
                                                      "topology_not_supported",
                                                      "disabled_by_regkey",
                                                      "not_supported",
                                                      "unknown"};
  return status >= 0 && status < static_cast<int>(k_names.size())
             ? std::string(k_names[static_cast<size_t>(status)])
             : fmt::format("unknown_{}", status);
}

/// The path between every pair of GPUs whose handles were had.
std::vector<GpuPath> read_paths(const NvmlApi& api, const std::vector<nvmlDevice_t>& devices,
                                const std::vector<GpuInfo>& gpus) {
  std::vector<GpuPath> paths;
  for (size_t a = 0; a < devices.size(); ++a) {
    for (size_t b = a + 1; b < devices.size(); ++b) {
      GpuPath path;
      path.gpu_a = gpus[a].index;
      path.gpu_b = gpus[b].index;
      if (const auto level =
              read_value<int>(api.nvmlDeviceGetTopologyCommonAncestor, devices[a], devices[b])) {
        path.pcie_path = topology_level_name(*level);
      }
      if (const auto status = read_value<int>(api.nvmlDeviceGetP2PStatus, devices[a], devices[b],
                                              k_nvml_p2p_caps_nvlink)) {
        path.p2p_nvlink = p2p_status_name(*status);
      }
      if (const auto status = read_value<int>(api.nvmlDeviceGetP2PStatus, devices[a], devices[b],
                                              k_nvml_p2p_caps_read)) {
        path.p2p_read = p2p_status_name(*status);
      }
      for (const NvLinkInfo& link : gpus[a].nvlinks) {
        if (link.active && !gpus[b].pci_bus_id.empty() &&
            strcasecmp(link.remote_bus_id.c_str(), gpus[b].pci_bus_id.c_str()) == 0) {
          ++path.nvlinks;
        }
      }
      paths.push_back(std::move(path));
    }
  }
  return paths;
}

GpuInfo read_gpu(const NvmlApi& api, nvmlDevice_t device, int index, std::string& first_lost_call) {
  GpuInfo gpu;
  gpu.index = index;
  g_lost_answers = 0;
  const auto note = [&first_lost_call](const char* call) {
    if (g_lost_answers > 0 && first_lost_call.empty()) {
      first_lost_call = call;
    }
  };
  gpu.name = read_string(api.nvmlDeviceGetName, device);
  note("nvmlDeviceGetName");
  gpu.uuid = read_string(api.nvmlDeviceGetUUID, device);
  note("nvmlDeviceGetUUID");
  gpu.serial = read_string(api.nvmlDeviceGetSerial, device);
  note("nvmlDeviceGetSerial");
  if (const auto pci = read_value<nvmlPciInfo_t>(api.nvmlDeviceGetPciInfo, device)) {
    gpu.pci_bus_id = short_bus_id(std::string(pci->busId, strnlen(pci->busId, sizeof pci->busId)));
    gpu.pci_device_id = fmt::format("0x{:08X}", pci->pciDeviceId);
  }
  note("nvmlDeviceGetPciInfo");
  if (!first_lost_call.empty()) {
    return gpu; // lost: its other queries would only answer GPU_IS_LOST too
  }
  if (api.nvmlDeviceGetCudaComputeCapability != nullptr) {
    int major = 0;
    int minor = 0;
    if (api.nvmlDeviceGetCudaComputeCapability(device, &major, &minor) == k_nvml_success) {
      gpu.cc_major = major;
      gpu.cc_minor = minor;
    }
  }
  read_memory(api, device, gpu);
  gpu.pcie_gen_current =
      as_int(read_value<unsigned>(api.nvmlDeviceGetCurrPcieLinkGeneration, device));
  gpu.pcie_gen_max = as_int(read_value<unsigned>(api.nvmlDeviceGetMaxPcieLinkGeneration, device));
  gpu.pcie_width_current = as_int(read_value<unsigned>(api.nvmlDeviceGetCurrPcieLinkWidth, device));
  gpu.pcie_width_max = as_int(read_value<unsigned>(api.nvmlDeviceGetMaxPcieLinkWidth, device));
  if (const auto mode = read_value<nvmlEnableState_t>(api.nvmlDeviceGetPersistenceMode, device)) {
    gpu.persistence_mode = *mode != 0;
  }
  gpu.compute_mode =
      compute_mode_name(read_value<nvmlComputeMode_t>(api.nvmlDeviceGetComputeMode, device));
  if (const auto mode = read_value<nvmlEnableState_t>(api.nvmlDeviceGetDisplayMode, device)) {
    gpu.display_mode = *mode != 0;
  }
  if (const auto active = read_value<nvmlEnableState_t>(api.nvmlDeviceGetDisplayActive, device)) {
    gpu.display_active = *active != 0;
  }
  read_mig(api, device, gpu);
  read_ecc(api, device, gpu);
  read_retirement(api, device, gpu);
  gpu.clock_event_reasons =
      read_value<unsigned long long>(api.nvmlDeviceGetCurrentClocksEventReasons, device);
  gpu.temperature_c = read_temperature(api, device);
  gpu.power_w = watts(read_value<unsigned>(api.nvmlDeviceGetPowerUsage, device));
  gpu.power_limit_w = watts(read_value<unsigned>(api.nvmlDeviceGetEnforcedPowerLimit, device));
  gpu.sm_clock_mhz =
      as_int(read_value<unsigned>(api.nvmlDeviceGetClockInfo, device, k_nvml_clock_sm));
  gpu.sm_clock_max_mhz =
      as_int(read_value<unsigned>(api.nvmlDeviceGetMaxClockInfo, device, k_nvml_clock_sm));
  gpu.numa_node = as_int(read_value<unsigned>(api.nvmlDeviceGetNumaNodeId, device));
  gpu.cpu_affinity = read_cpu_affinity(api, device);
  gpu.nvlinks = read_nvlinks(api, device);
  gpu.fabric = read_fabric(api, device);

  std::set<uint32_t> seen;
  read_compute_processes(api, device, gpu.processes, seen);
  if (api.nvmlDeviceGetGraphicsRunningProcesses_v2 != nullptr) {
    read_processes<nvmlProcessInfo_v2_t>(api.nvmlDeviceGetGraphicsRunningProcesses_v2, device,
                                         gpu.processes, seen);
  } else if (api.nvmlDeviceGetGraphicsRunningProcesses_v1 != nullptr) {
    read_processes<nvmlProcessInfo_v1_t>(api.nvmlDeviceGetGraphicsRunningProcesses_v1, device,
                                         gpu.processes, seen);
  }
  note("a later nvmlDeviceGet* query");
  return gpu;
}

} // namespace

nlohmann::json child_probe_nvml(const std::vector<std::string>& /*args*/) {
  NvmlInfo info;
  std::vector<GpuInfo> gpus;
  std::vector<nvmlDevice_t> devices;
  std::vector<GpuPath> paths;
  DynamicLibrary lib = DynamicLibrary::open("libnvidia-ml.so.1");
  // Resolve only from a loaded library: otherwise every name would count as a missing symbol.
  const NvmlApi api = lib.loaded() ? load_nvml_api(lib) : NvmlApi{};
  if (api.usable) {
    const nvmlReturn_t rc = api.nvmlInit();
    info.init_result = rc;
    info.init_result_name = nvml_error_name(rc);
    if (rc == k_nvml_success) {
      info.driver_version = read_system_string(api.nvmlSystemGetDriverVersion);
      info.nvml_version = read_system_string(api.nvmlSystemGetNVMLVersion);
      info.cuda_driver_version = read_value<int>(api.nvmlSystemGetCudaDriverVersion_v2);
      info.cuda_driver_version_kernel = read_value<int>(api.nvmlSystemGetCudaDriverVersion);
      if (const auto count = read_value<unsigned>(api.nvmlDeviceGetCount)) {
        info.device_count = static_cast<int>(*count);
        for (unsigned i = 0; i < *count; ++i) {
          nvmlDevice_t device = nullptr;
          // A GPU whose handle cannot be had (lost, reset required) is left out here; the
          // count above still shows it.
          const nvmlReturn_t handle_rc = api.nvmlDeviceGetHandleByIndex(i, &device);
          if (handle_rc == k_nvml_success) {
            std::string lost_call;
            GpuInfo gpu = read_gpu(api, device, static_cast<int>(i), lost_call);
            if (!lost_call.empty()) {
              // Lost after its handle was given: reported like a GPU with no handle, with what
              // was read of it before, not as a GPU with no name and no facts.
              info.handle_failures.push_back({static_cast<int>(i), k_nvml_gpu_is_lost,
                                              nvml_error_name(k_nvml_gpu_is_lost), lost_call,
                                              gpu.uuid, gpu.pci_bus_id});
              continue;
            }
            gpus.push_back(std::move(gpu));
            devices.push_back(device);
          } else {
            info.handle_failures.push_back({static_cast<int>(i), static_cast<int>(handle_rc),
                                            nvml_error_name(handle_rc), "", "", ""});
          }
        }
      }
      paths = read_paths(api, devices, gpus);
      if (api.nvmlShutdown != nullptr) {
        api.nvmlShutdown();
      }
    }
  }
  info.library = lib.load();
  return nlohmann::json{{"nvml", info}, {"gpus", gpus}, {"gpu_paths", paths}};
}

namespace {
/// What /proc/PID/stat says of a process: its parent, and whether it is on its way out.
struct ProcStat {
  uint32_t parent = 0;
  bool exiting = false; ///< PF_EXITING set, or a zombie: its memory is being freed, it runs nothing
};

ProcStat proc_stat(uint32_t pid) {
  std::ifstream stat(fmt::format("/proc/{}/stat", pid));
  std::string line;
  std::getline(stat, line);
  ProcStat out;
  const auto close = line.rfind(')'); // the name may hold spaces and parentheses
  if (close == std::string::npos) {
    return out;
  }
  char state = 0;
  unsigned parent = 0;
  long long group = 0;
  long long session = 0;
  long long tty = 0;
  long long foreground = 0;
  unsigned long flags = 0;
  const int got = std::sscanf(line.c_str() + close + 1, " %c %u %lld %lld %lld %lld %lu", &state,
                              &parent, &group, &session, &tty, &foreground, &flags);
  if (got < 2) {
    return out;
  }
  constexpr unsigned long k_pf_exiting = 0x4; // include/linux/sched.h
  out.parent = parent;
  out.exiting = state == 'Z' || state == 'X' || (got == 7 && (flags & k_pf_exiting) != 0);
  return out;
}
} // namespace

nlohmann::json child_gpu_census(const std::vector<std::string>& args) {
  // gpucheck's own processes: the run's parent (args[0]) and its children, the census included.
  std::set<uint32_t> own;
  if (!args.empty()) {
    own.insert(static_cast<uint32_t>(std::strtoul(args[0].c_str(), nullptr, 10)));
  }
  protocol::Census census;
  DynamicLibrary lib = DynamicLibrary::open("libnvidia-ml.so.1");
  const NvmlApi api = lib.loaded() ? load_nvml_api(lib) : NvmlApi{};
  if (!api.usable) {
    census.error = lib.loaded() ? "NVML lacks required symbols" : lib.load().error;
    return protocol::census_to_json(census);
  }
  const nvmlReturn_t rc = api.nvmlInit();
  if (rc != k_nvml_success) {
    census.error = fmt::format("nvmlInit: {}", nvml_error_name(rc));
    return protocol::census_to_json(census);
  }
  const auto count = read_value<unsigned>(api.nvmlDeviceGetCount);
  for (unsigned i = 0; count && i < *count; ++i) {
    nvmlDevice_t device = nullptr;
    if (api.nvmlDeviceGetHandleByIndex(i, &device) != k_nvml_success) {
      continue;
    }
    GpuInfo info;
    read_memory(api, device, info);
    std::set<uint32_t> seen;
    read_compute_processes(api, device, info.processes, seen);
    protocol::CensusGpu gpu;
    char uuid[96] = {};
    if (api.nvmlDeviceGetUUID != nullptr &&
        api.nvmlDeviceGetUUID(device, uuid, sizeof uuid) == k_nvml_success) {
      gpu.uuid = std::string(uuid, strnlen(uuid, sizeof uuid));
    }
    if (const auto pci = read_value<nvmlPciInfo_t>(api.nvmlDeviceGetPciInfo, device)) {
      gpu.bus_id = short_bus_id(std::string(pci->busId, strnlen(pci->busId, sizeof pci->busId)));
    }
    gpu.free_bytes = info.memory_free_bytes;
    gpu.total_bytes = info.memory_total_bytes;
    for (const GpuProcess& p : info.processes) {
      const ProcStat stat = proc_stat(p.pid);
      // A process on its way out (an earlier gpucheck's child whose result is in, a tenant that
      // just ended) frees its memory and runs nothing: not contention.
      if (own.count(p.pid) != 0 || own.count(stat.parent) != 0 || stat.exiting) {
        continue;
      }
      gpu.processes.push_back({p.pid, p.name, p.used_memory_bytes});
    }
    census.gpus.push_back(std::move(gpu));
  }
  if (api.nvmlShutdown != nullptr) {
    api.nvmlShutdown();
  }
  return protocol::census_to_json(census);
}

} // namespace gpucheck::platform
