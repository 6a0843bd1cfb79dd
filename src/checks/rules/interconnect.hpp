#pragma once
/// Pure rules over the interconnect facts NVML gives: what a GPU model's NVLinks should
/// be, how a pair's path reads, and the verdicts of gpu.nvlink, gpu.fabric and gpu.topology.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "gpucheck/check.hpp"
#include "gpucheck/model/check_result.hpp"
#include "gpucheck/model/snapshot.hpp"

namespace gpucheck::checks {

/// NVLinks an NVLink board's GPU has (SXM/HGX parts: H100/H200/B200 18, H800 8, A100 12, A800 8,
/// V100 6); nullopt for a model whose count depends on bridges fitted (PCIe, NVL) or is unknown.
std::optional<int> expected_nvlinks(std::string_view gpu_name);

/// How nvidia-smi topo -m would name a pair's path: "NV18" (direct links), "NVLink" (through
/// NVSwitches), else "PIX", "PXB", "PHB", "NODE", "SYS", "BOARD"; "?" when unknown.
std::string path_label(const GpuPath& path);

/// A GPU's NVLink verdict: the findings (pair and link named), a summary; `skip` set when there
/// is nothing to judge (no NVLink, one GPU, a driver without the calls) with the reason.
struct InterconnectVerdict {
  std::string summary;
  std::vector<Finding> findings;
  std::vector<Metric> metrics;
  std::optional<std::string> skip;
};

/// The snapshot's GPUs by PCI bus id (any case), built once for every link's far end to be found
/// in constant time: a scan of every GPU per link made replaying 4,000 GPUs quadratic.
class GpusByBus {
public:
  explicit GpusByBus(const SystemSnapshot& snapshot);
  /// The GPU at `bus_id`, or nullptr (an NVSwitch, or a GPU NVML did not list).
  [[nodiscard]] const GpuInfo* find(std::string_view bus_id) const;

private:
  std::unordered_map<std::string, const GpuInfo*> m_by_bus;
};

/// gpu.nvlink for one GPU of the snapshot, `gpus` being the snapshot's.
InterconnectVerdict judge_nvlink(const GpuInfo& gpu, const SystemSnapshot& snapshot,
                                 const GpusByBus& gpus);
/// The same, building the index (one GPU judged alone).
InterconnectVerdict judge_nvlink(const GpuInfo& gpu, const SystemSnapshot& snapshot);

/// The fabric cliques of a snapshot's GPUs whose registration completed, each with its members in
/// the snapshot's order: built once for every GPU's verdict (per GPU it made a replay quadratic).
using FabricCliques = std::map<std::pair<std::string, uint32_t>, std::vector<const GpuInfo*>>;
FabricCliques fabric_cliques(const SystemSnapshot& snapshot);

/// gpu.fabric for one GPU: its registration with the NVLink fabric, and whether it shares a clique
/// with the node's other GPUs (`cliques`: fabric_cliques() of the snapshot).
InterconnectVerdict judge_fabric(const GpuInfo& gpu, const SystemSnapshot& snapshot,
                                 const FabricCliques& cliques);
/// The same, building the cliques (one GPU judged alone).
InterconnectVerdict judge_fabric(const GpuInfo& gpu, const SystemSnapshot& snapshot);

/// gpu.topology for the node: every pair's path and NVML's P2P status, each GPU's NUMA node and
/// CPUs.
InterconnectVerdict judge_topology(const SystemSnapshot& snapshot);

/// The check result of a verdict: its skip, or its summary, findings and metrics (gpu.topology,
/// gpu.nvlink, gpu.fabric).
CheckResult interconnect_result(const CheckInfo& info, InterconnectVerdict verdict,
                                std::optional<int> gpu);

} // namespace gpucheck::checks
