#pragma once
/// Pure rules over the interconnect facts NVML gives: what a GPU model's NVLinks should
/// be, how a pair's path reads, and the verdicts of gpu.nvlink, gpu.fabric and gpu.topology.

#include <optional>
#include <string>
#include <string_view>
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

/// gpu.nvlink for one GPU of the snapshot.
InterconnectVerdict judge_nvlink(const GpuInfo& gpu, const SystemSnapshot& snapshot);

/// gpu.fabric for one GPU: its registration with the NVLink fabric, and whether it shares a clique
/// with the node's other GPUs.
InterconnectVerdict judge_fabric(const GpuInfo& gpu, const SystemSnapshot& snapshot);

/// gpu.topology for the node: every pair's path and NVML's P2P status, each GPU's NUMA node and
/// CPUs.
InterconnectVerdict judge_topology(const SystemSnapshot& snapshot);

/// The check result of a verdict: its skip, or its summary, findings and metrics (gpu.topology,
/// gpu.nvlink, gpu.fabric).
CheckResult interconnect_result(const CheckInfo& info, InterconnectVerdict verdict,
                                std::optional<int> gpu);

} // namespace gpucheck::checks
