#include "findings/tables.hpp"

namespace gpucheck {

// Findings of the multi-GPU checks: NVLink, fabric, topology, peer-to-peer copies and
// NCCL. {0} always names a GPU; a pair's findings name both GPUs.
namespace {
// What recurring arguments stand for (FindingSpec::placeholders).
constexpr std::string_view k_gpu = "GPU (index, name, PCI bus id)";

constexpr FindingSpec k_table[] = {
    {codes::k_fabric_clique_split, Severity::warn, "GPUs of one node in different fabric cliques",
     "GPUs of one node registered with the NVLink fabric in different cliques or clusters, so "
     "they cannot reach each other over NVLink; NCCL falls back to slower paths.",
     "GPU {0} is in clique {1} of cluster {2}; GPU {3} is in clique {4} of cluster {5}",
     "check the Fabric Manager's partition (nv-fabricmanager's log, fmpm -l on shared-NVSwitch "
     "systems) and the NVSwitch trays; restart nvidia-fabricmanager and re-run gpucheck",
     where(k_gpu, "its NVLink fabric clique id", "its fabric cluster UUID",
           "index of another GPU of this node", "that GPU's clique id", "that GPU's cluster UUID")},
    {codes::k_fabric_not_ready, Severity::fail, "GPU not registered with the NVLink fabric",
     "On an NVSwitch system a GPU works only once the Fabric Manager has registered it with the "
     "fabric; until then CUDA fails to initialise (CUDA_ERROR_SYSTEM_NOT_READY, 802) or NVLink "
     "is unusable.",
     "GPU {0}: fabric registration {1}; {2}",
     "start the Fabric Manager at the driver's exact version: systemctl enable --now "
     "nvidia-fabricmanager (journalctl -u nvidia-fabricmanager for its errors); in progress "
     "settles within a minute after boot: run gpucheck again",
     where(k_gpu, "its fabric registration state (not_started, in_progress)",
           "whether an nv-fabricmanager process is seen running"),
     Drain::yes},
    {codes::k_fabric_registration_failed, Severity::fail, "NVLink fabric registration failed",
     "The Fabric Manager finished registering this GPU with the NVLink fabric, but with an error.",
     "GPU {0}: fabric registration completed with {1}; {2}",
     "read the Fabric Manager's log (journalctl -u nvidia-fabricmanager) and dmesg for NVSwitch "
     "(SXid) errors; restart nvidia-fabricmanager, and reset the GPUs and switches if it repeats",
     where(k_gpu, "the NVML status the registration ended with",
           "whether an nv-fabricmanager process is seen running"),
     Drain::yes},
    {codes::k_nvlink_crc_errors, Severity::info, "NVLink CRC or replay errors counted",
     "The link counted CRC errors or replays since the driver loaded. The link layer retransmits, "
     "so data stays correct; a count that keeps rising means a marginal link.",
     "GPU {0} link {1}: {2} and {3} since the driver loaded (peer {4})",
     "watch whether the counts rise under load (nvidia-smi nvlink -e); if they do, reseat "
     "the GPU or its baseboard and have the link checked (dcgmi diag -r 3)",
     where(k_gpu, "NVLink number",
           "the CRC errors counted: the DL count nvidia-smi nvlink -e shows from NVLink 4 on "
           "(\"3 CRC errors\"), else the flit and data counters (\"1 CRC flit error, 2 CRC data "
           "errors\")",
           "replays counted (\"2 replays\")",
           "the link's far end (a GPU, or an NVSwitch's PCI bus id)")},
    {codes::k_nvlink_links_down, Severity::warn, "NVLinks down",
     "Fewer NVLinks are up than this GPU model has: peer-to-peer and NCCL traffic runs slower, "
     "or takes PCIe. Usual causes: a link that failed training, a Fabric Manager that is not up, "
     "a baseboard or NVSwitch fault.",
     "GPU {0}: {1} of {2} NVLinks up; down: {3}",
     "nvidia-smi nvlink -s shows each link; check the Fabric Manager "
     "(systemctl status nvidia-fabricmanager) and dmesg for Xid 74 (NVLink errors); a reset "
     "(nvidia-smi -r) or a power cycle retrains links; replace the part if a link stays down",
     where(k_gpu, "NVLinks up", "NVLinks this GPU model has (else those NVML lists)",
           "the links down, and how many NVML does not list")},
    {codes::k_nvlink_recovery_errors, Severity::warn, "NVLink recovered from errors",
     "The link went through error recovery (it stopped and retrained) since the driver loaded; "
     "traffic on it stalled meanwhile, and repeated recoveries mean a failing link.",
     "GPU {0} link {1}: {2} since the driver loaded (peer {3})",
     "look for Xid 74 in dmesg; reseat the GPU or its baseboard; have the link checked with dcgmi "
     "diag -r 3 and replace the part if recoveries continue",
     where(k_gpu, "NVLink number", "recovery events counted (\"2 recovery events\")",
           "the link's far end (a GPU, or an NVSwitch's PCI bus id)")},
    {codes::k_topology_p2p_unsupported, Severity::info, "GPU pair without peer-to-peer",
     "NVML says this pair of GPUs cannot read each other's memory directly; copies between them "
     "go through host memory. Common causes: GPUs under different CPU sockets or host bridges on "
     "some platforms, PCIe ACS or the IOMMU redirecting peer traffic, or a GPU model without "
     "P2P.",
     "GPUs {0} and {1} ({3}): NVML peer-to-peer read status {2}",
     "if these GPUs should reach each other (same PCIe switch, NVLink): boot with iommu=pt or "
     "disable ACS on the bridges (BIOS), and compare NCCL_P2P_DISABLE=1 results",
     where(
         "index of one GPU", "index of the other GPU",
         "NVML's peer-to-peer read status for the pair",
         "the path between them, as nvidia-smi topo -m labels it (NV#, PIX, PXB, PHB, NODE, SYS)")},
};
} // namespace

std::span<const FindingSpec> findings_interconnect() {
  return k_table;
}

} // namespace gpucheck
