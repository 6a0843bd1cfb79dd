#pragma once
/// What the engine knows of the GPUs before any context exists: the driver's list under
/// /proc/driver/nvidia/gpus (bus id and UUID, read in the parent), which of them the user's
/// CUDA_VISIBLE_DEVICES lets through, and the census, an NVML child's reading of each GPU's
/// free memory and processes (`gpucheck --child gpu-census PARENT_PID`), taken before the plan
/// and again after the timed work. A protocol header: std and nlohmann only.

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gpucheck::protocol {

/// A GPU as the driver lists it.
struct HostGpu {
  std::string bus_id; ///< "0000:3b:00.0", as the /proc directory is named
  std::string uuid;   ///< "GPU-...", from its information file; empty when unreadable
  /// MIG instances exist on it (/proc/driver/nvidia/capabilities/gpuMINOR/mig/gi*): CUDA sees
  /// the instances, not the GPU, so its UUID cannot name what a child should see.
  bool mig = false;
};

/// A bus id in the form the engine compares: lower-case hex ("0000:3B:00.0" -> "0000:3b:00.0").
std::string normal_bus_id(std::string bus_id);

/// GPUs under <sysroot>/proc/driver/nvidia/gpus, in PCI order.
std::vector<HostGpu> driver_gpus(const std::string& sysroot);

/// A GPU the active checks will use, and the CUDA_VISIBLE_DEVICES its children get (its UUID,
/// or the user's own entry for a MIG instance), so that each child's cuInit sees one GPU.
struct VisibleGpu {
  HostGpu gpu;                 ///< bus_id empty for a MIG instance (its parent is not known here)
  std::string visible_devices; ///< the value the children get; empty: leave it as it is
  int ordinal = -1; ///< with visible_devices empty: the CUDA ordinal the children are given
};

/// The driver's GPUs that `cuda_visible_devices` (unset: all) lets through, in CUDA's order
/// for that list: indices into the PCI-ordered list (CUDA_DEVICE_ORDER=PCI_BUS_ID; the default
/// fastest-first order is the same on hosts of one GPU model), UUIDs or unique UUID prefixes,
/// MIG UUIDs. Like CUDA, the list stops at the first entry that names no GPU.
std::vector<VisibleGpu> visible_gpus(const std::vector<HostGpu>& gpus,
                                     const std::optional<std::string>& cuda_visible_devices);

struct CensusProcess {
  uint32_t pid = 0;
  std::string name; ///< from /proc/PID/comm; empty when not visible (another PID namespace)
  std::optional<uint64_t> used_bytes;
};

struct CensusGpu {
  std::string uuid;
  std::string bus_id; ///< as in HostGpu (lower-case hex, 4-digit domain)
  std::optional<uint64_t> free_bytes;
  std::optional<uint64_t> total_bytes;
  std::vector<CensusProcess> processes; ///< other than gpucheck's own (the census excludes them)
};

struct Census {
  std::string error; ///< set when NVML could not be asked (then `gpus` is empty)
  std::vector<CensusGpu> gpus;
  /// The GPU with this UUID or bus id, if the census has it.
  [[nodiscard]] const CensusGpu* find(const HostGpu& gpu) const;
};

nlohmann::json census_to_json(const Census& census);
/// Lenient: wrong types and missing keys become missing facts, never an exception.
Census census_from_json(const nlohmann::json& json);

/// "1234 (python3), 5678": the processes for a message.
std::string describe_processes(const std::vector<CensusProcess>& processes);

} // namespace gpucheck::protocol
