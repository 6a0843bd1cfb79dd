#include "checks/rules/interconnect.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <utility>

#include "checks/rules/per_gpu.hpp"
#include "findings/catalog.hpp"
#include "gpucheck/model/text.hpp"
#include "gpucheck/plural.hpp"

namespace gpucheck::checks {

namespace {
/// nvmlDeviceGetNvLinkVersion answers an nvmlNvlinkVersion_t: 1 = 1.0, 2 = 2.0, 3 = 2.2, 4 = 3.0,
/// 5 = 3.1, 6 = 4.0 (Hopper: an H100 answered 6), 7 = 5.0 (Blackwell).
std::string nvlink_version_name(int raw) {
  static constexpr const char* k_names[] = {"1.0", "2.0", "2.2", "3.0", "3.1", "4.0", "5.0"};
  return raw >= 1 && raw <= 7 ? k_names[raw - 1] : fmt::format("of NVML version {}", raw);
}

/// The NVLink generation as people say it (4 for NVLink 4.0, 2.2 for 2.2); nullopt for a value
/// NVML's enumeration does not have.
std::optional<double> nvlink_generation(int raw) {
  static constexpr double k_generations[] = {1.0, 2.0, 2.2, 3.0, 3.1, 4.0, 5.0};
  return raw >= 1 && raw <= 7 ? std::optional<double>(k_generations[raw - 1]) : std::nullopt;
}

bool contains(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

/// Whether the NVML probe found `symbol` absent (an older driver).
bool nvml_lacks(const SystemSnapshot& snapshot, std::string_view symbol) {
  const auto& missing = snapshot.nvml.library.missing_symbols;
  return std::find(missing.begin(), missing.end(), symbol) != missing.end();
}

/// "GPU 1" for a link whose far end is a GPU of this node, "NVSwitch 0000:F0:00.0" otherwise.
std::string peer_text(const GpusByBus& gpus, const NvLinkInfo& link) {
  if (const GpuInfo* peer = gpus.find(link.remote_bus_id)) {
    return fmt::format("GPU {}", peer->index);
  }
  return link.remote_bus_id.empty()
             ? std::string("an unknown peer")
             : fmt::format("{} (an NVSwitch or a GPU not listed)", link.remote_bus_id);
}

std::string join_ints(const std::vector<int>& values) {
  return fmt::format("{}", fmt::join(values, ", "));
}

std::string fabric_manager_text(const SystemSnapshot& snapshot) {
  if (!snapshot.fabric_manager_running) {
    return "whether nv-fabricmanager runs could not be read";
  }
  return *snapshot.fabric_manager_running
             ? "nv-fabricmanager is running"
             : "no nv-fabricmanager process is visible here (in a container or VM it runs on the "
               "host)";
}

} // namespace

std::optional<int> expected_nvlinks(std::string_view gpu_name) {
  const std::string name = lower(gpu_name);
  if (contains(name, "pcie") || contains(name, " nvl")) {
    return std::nullopt; // bridges, if any, decide
  }
  if (contains(name, "h100 80gb hbm3") || contains(name, "h100 sxm") || contains(name, "h200") ||
      contains(name, "b200") || contains(name, "gb200") || contains(name, "h20")) {
    return 18;
  }
  if (contains(name, "h800") || contains(name, "a800-sxm")) {
    return 8;
  }
  if (contains(name, "a100-sxm")) {
    return 12;
  }
  if (contains(name, "v100-sxm")) {
    return 6;
  }
  return std::nullopt;
}

std::string path_label(const GpuPath& path) {
  if (path.nvlinks > 0) {
    return fmt::format("NV{}", path.nvlinks);
  }
  if (path.p2p_nvlink == "ok") {
    return "NVLink";
  }
  static const std::map<std::string, std::string> k_labels{
      {"same_board", "BOARD"}, {"single_switch", "PIX"}, {"multiple_switches", "PXB"},
      {"host_bridge", "PHB"},  {"numa_node", "NODE"},    {"system", "SYS"}};
  const auto it = k_labels.find(path.pcie_path);
  return it != k_labels.end() ? it->second : std::string("?");
}

GpusByBus::GpusByBus(const SystemSnapshot& snapshot) {
  for (const GpuInfo& gpu : snapshot.gpus) {
    if (!gpu.pci_bus_id.empty()) {
      m_by_bus.emplace(lower(gpu.pci_bus_id), &gpu); // the first of a repeated address, as before
    }
  }
}

const GpuInfo* GpusByBus::find(std::string_view bus_id) const {
  if (bus_id.empty()) {
    return nullptr;
  }
  const auto it = m_by_bus.find(lower(bus_id));
  return it != m_by_bus.end() ? it->second : nullptr;
}

InterconnectVerdict judge_nvlink(const GpuInfo& gpu, const SystemSnapshot& snapshot) {
  return judge_nvlink(gpu, snapshot, GpusByBus(snapshot));
}

namespace {
/// Where a GPU's active links go, counted: a GPU of this node (direct) or NVSwitches
/// ("4 to GPU 1", "18 to NVSwitch").
std::vector<std::string> link_destinations(const GpuInfo& gpu, const GpusByBus& gpus) {
  std::map<std::string, int> peers;
  for (const NvLinkInfo& link : gpu.nvlinks) {
    if (link.active) {
      const GpuInfo* peer = gpus.find(link.remote_bus_id);
      ++peers[peer != nullptr ? fmt::format("GPU {}", peer->index) : std::string("NVSwitch")];
    }
  }
  std::vector<std::string> parts;
  for (const auto& [peer, count] : peers) {
    parts.push_back(fmt::format("{} to {}", count, peer));
  }
  return parts;
}
} // namespace

InterconnectVerdict judge_nvlink(const GpuInfo& gpu, const SystemSnapshot& snapshot,
                                 const GpusByBus& gpus) {
  InterconnectVerdict out;
  if (snapshot.gpus.size() < 2) {
    out.skip = "one GPU: no NVLink peer to judge";
    return out;
  }
  if (gpu.nvlinks.empty()) {
    out.skip = nvml_lacks(snapshot, "nvmlDeviceGetNvLinkState")
                   ? "this driver's NVML has no nvmlDeviceGetNvLinkState"
                   : "NVML lists no NVLink on this GPU (a PCIe card without a bridge, or NVLink "
                     "hidden by virtualisation)";
    return out;
  }
  std::vector<int> down;
  int up = 0;
  std::optional<int> version;
  for (const NvLinkInfo& link : gpu.nvlinks) {
    if (link.active) {
      ++up;
      version = version ? version : link.version;
    } else {
      down.push_back(link.link);
    }
  }
  const std::optional<int> expected = expected_nvlinks(gpu.name);
  if (up == 0 && !expected) {
    out.skip = "no NVLink of this GPU is active (no bridge fitted)";
    return out;
  }
  const int should = expected.value_or(static_cast<int>(gpu.nvlinks.size()));
  if (up < should) {
    std::string which = down.empty() ? std::string() : "links " + join_ints(down);
    const int unlisted = should - static_cast<int>(gpu.nvlinks.size());
    if (unlisted > 0) {
      which += fmt::format("{}{} NVML does not list", which.empty() ? "" : "; ",
                           plural(unlisted, "link"));
    }
    out.findings.push_back(
        make_finding(codes::k_nvlink_links_down, gpu.index, gpu_label(gpu), up, should, which));
  }
  for (const NvLinkInfo& link : gpu.nvlinks) {
    const std::string peer = peer_text(gpus, link);
    if (link.recovery_errors.value_or(0) > 0) {
      out.findings.push_back(make_finding(codes::k_nvlink_recovery_errors, gpu.index,
                                          gpu_label(gpu), link.link,
                                          plural(*link.recovery_errors, "recovery event"), peer));
    }
    // From NVLink 4 on, the DL CRC count (what nvidia-smi shows) stands for the flit and data
    // counters, which are then not read.
    const uint64_t flit = link.crc_flit_errors.value_or(0);
    const uint64_t data = link.crc_data_errors.value_or(0);
    const uint64_t crc = link.crc_errors ? *link.crc_errors : flit + data;
    const uint64_t replays = link.replay_errors.value_or(0);
    if (crc > 0 || replays > 0) {
      const std::string crc_text = link.crc_errors
                                       ? plural(crc, "CRC error")
                                       : fmt::format("{}, {}", plural(flit, "CRC flit error"),
                                                     plural(data, "CRC data error"));
      out.findings.push_back(make_finding(codes::k_nvlink_crc_errors, gpu.index, gpu_label(gpu),
                                          link.link, crc_text, plural(replays, "replay"), peer));
    }
  }
  out.metrics.push_back({"nvlink_active", static_cast<double>(up), "links", ""});
  // The generation, not NVML's enumeration (which says 6 for NVLink 4.0): an alert reads it.
  if (const std::optional<double> generation =
          version ? nvlink_generation(*version) : std::nullopt) {
    out.metrics.push_back({"nvlink_version", *generation, "",
                           fmt::format("NVLink {}; NVML's nvmlNvlinkVersion_t {}",
                                       nvlink_version_name(*version), *version)});
  }
  const std::vector<std::string> parts = link_destinations(gpu, gpus);
  out.summary = fmt::format("{} of {} NVLinks up{}{}", up, should,
                            version ? fmt::format(" (NVLink {})", nvlink_version_name(*version))
                                    : std::string(),
                            parts.empty() ? "" : fmt::format(": {}", fmt::join(parts, ", ")));
  return out;
}

FabricCliques fabric_cliques(const SystemSnapshot& snapshot) {
  // The members themselves, not their indices: a snapshot (a replayed one may be hand-made or
  // corrupt) can repeat an index, and looking a member up by index then found a GPU without
  // fabric facts and read an empty optional (found by fuzz_snapshot).
  FabricCliques cliques;
  for (const GpuInfo& other : snapshot.gpus) {
    if (other.fabric && other.fabric->state == "completed" && other.fabric->status == 0) {
      cliques[{other.fabric->cluster_uuid, other.fabric->clique_id}].push_back(&other);
    }
  }
  return cliques;
}

InterconnectVerdict judge_fabric(const GpuInfo& gpu, const SystemSnapshot& snapshot) {
  return judge_fabric(gpu, snapshot, fabric_cliques(snapshot));
}

InterconnectVerdict judge_fabric(const GpuInfo& gpu, const SystemSnapshot& snapshot,
                                 const FabricCliques& cliques) {
  InterconnectVerdict out;
  if (!gpu.fabric) {
    out.skip = nvml_lacks(snapshot, "nvmlDeviceGetGpuFabricInfo") &&
                       nvml_lacks(snapshot, "nvmlDeviceGetGpuFabricInfoV")
                   ? "this driver's NVML has no nvmlDeviceGetGpuFabricInfo (R525 and newer have it)"
                   : "NVML could not read this GPU's fabric state";
    return out;
  }
  const GpuFabricInfo& fabric = *gpu.fabric;
  if (fabric.state == "not_supported") {
    out.skip = "not an NVLink fabric (NVSwitch) system";
    return out;
  }
  if (fabric.state != "completed") {
    out.findings.push_back(make_finding_as(
        fabric.state == "in_progress" ? Severity::warn : Severity::fail, codes::k_fabric_not_ready,
        gpu.index, gpu_label(gpu), fabric.state, fabric_manager_text(snapshot)));
    out.summary = fmt::format("fabric registration {}", fabric.state);
    return out;
  }
  if (fabric.status != 0) {
    out.findings.push_back(make_finding(codes::k_fabric_registration_failed, gpu.index,
                                        gpu_label(gpu), fabric.status_name,
                                        fabric_manager_text(snapshot)));
    out.summary = fmt::format("fabric registration completed with {}", fabric.status_name);
    return out;
  }
  // Every GPU of one node should be in one clique of one cluster: the clique most of the node's
  // registered GPUs are in is the node's; a GPU outside it is named with one GPU inside it.
  using Clique = FabricCliques::key_type;
  const Clique own{fabric.cluster_uuid, fabric.clique_id};
  const auto own_members = cliques.find(own);
  const size_t own_size = own_members == cliques.end() ? 0 : own_members->second.size();
  for (const auto& [clique, members] : cliques) {
    if (clique != own && members.size() >= own_size) {
      const GpuInfo& other = *members.front();
      out.findings.push_back(make_finding(codes::k_fabric_clique_split, gpu.index, gpu_label(gpu),
                                          fabric.clique_id, fabric.cluster_uuid, other.index,
                                          other.fabric->clique_id, other.fabric->cluster_uuid));
      break;
    }
  }
  out.metrics.push_back({"fabric_clique", static_cast<double>(fabric.clique_id), "", ""});
  out.summary = fmt::format("fabric registration completed: clique {}, cluster {}",
                            fabric.clique_id, fabric.cluster_uuid);
  return out;
}

InterconnectVerdict judge_topology(const SystemSnapshot& snapshot) {
  InterconnectVerdict out;
  if (snapshot.gpus.size() < 2) {
    out.skip = snapshot.gpus.empty() ? "no GPU reported by NVML" : "one GPU: no pair to place";
    return out;
  }
  if (snapshot.gpu_paths.empty()) {
    out.skip = nvml_lacks(snapshot, "nvmlDeviceGetTopologyCommonAncestor")
                   ? "this driver's NVML has no nvmlDeviceGetTopologyCommonAncestor"
                   : "NVML did not give the paths between GPUs";
    return out;
  }
  std::map<std::string, int> by_label;
  // GPUs that meet through NVSwitches have no direct link: a series that reads 0 for every pair of
  // a healthy DGX would only invite a wrong alert, so the count is given where a direct link is.
  const bool any_direct = std::any_of(snapshot.gpu_paths.begin(), snapshot.gpu_paths.end(),
                                      [](const GpuPath& p) { return p.nvlinks > 0; });
  for (const GpuPath& path : snapshot.gpu_paths) {
    const std::string label = path_label(path);
    ++by_label[label];
    if (any_direct) {
      out.metrics.push_back(pair_metric("path", path.gpu_a, path.gpu_b, "nvlinks",
                                        static_cast<double>(path.nvlinks), "links",
                                        fmt::format("{}; PCIe {}; P2P read {}", label,
                                                    path.pcie_path.empty() ? "?" : path.pcie_path,
                                                    path.p2p_read.empty() ? "?" : path.p2p_read)));
    }
    if (!path.p2p_read.empty() && path.p2p_read != "ok") {
      out.findings.push_back(make_finding(codes::k_topology_p2p_unsupported, path.gpu_a, path.gpu_a,
                                          path.gpu_b, path.p2p_read, label));
    }
  }
  for (const GpuInfo& gpu : snapshot.gpus) {
    if (gpu.numa_node) {
      out.metrics.push_back(
          gpu_metric(gpu.index, "numa_node", static_cast<double>(*gpu.numa_node), "",
                     gpu.cpu_affinity ? fmt::format("CPUs {}", *gpu.cpu_affinity) : ""));
    }
  }
  std::vector<std::string> parts;
  for (const auto& [label, count] : by_label) {
    parts.push_back(fmt::format("{} {}", count, label));
  }
  out.summary = fmt::format("{}, {}: {}", plural(snapshot.gpus.size(), "GPU"),
                            plural(snapshot.gpu_paths.size(), "pair"), fmt::join(parts, ", "));
  return out;
}

CheckResult interconnect_result(const CheckInfo& info, InterconnectVerdict verdict,
                                std::optional<int> gpu) {
  if (verdict.skip) {
    return skip_result(info, *verdict.skip, gpu);
  }
  CheckResult result = make_result(info, verdict.summary, std::move(verdict.findings), gpu);
  result.metrics = std::move(verdict.metrics);
  return result;
}

} // namespace gpucheck::checks
