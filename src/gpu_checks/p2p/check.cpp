// gpu.p2p's judge, findings, metrics and registration: peer-to-peer copies between every pair of
// GPUs, in the child over all of them (rule peers_after_all), judged against the path NVML
// reports.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <span>

#include "checks/rules/interconnect.hpp"
#include "checks/rules/per_gpu.hpp"
#include "gpu_checks/p2p/p2p.hpp"
#include "gpu_checks/registry.hpp"
#include "gpucheck/model/text.hpp"

namespace gpucheck::gpu_checks::p2p {

namespace {
using checks::Judgement;
using checks::path_label;

constexpr FindingSpec k_findings[] = {
    {k_data_mismatch, Severity::fail, "peer-to-peer copy corrupted data",
     "A copy from one GPU's memory into another's, with peer access enabled, delivered data that "
     "differs from what was sent: the pair claims peer-to-peer but corrupts it, which hangs or "
     "silently breaks NCCL and data-parallel training (failure F39).",
     "GPU {0}: peer copy {1}: {2} of {3} words wrong, first at word {4}: got {5}, expected {6}",
     "run multi-GPU work with NCCL_P2P_DISABLE=1 until fixed; check the IOMMU (iommu=pt) and "
     "PCIe ACS settings, dmesg for Xid and AER errors, and the NVLinks (nvidia-smi nvlink -e); "
     "have the GPUs or baseboard checked (dcgmi diag -r 3)",
     where("GPU index", "the copy, as source -> destination PCI bus ids", "words wrong",
           "words checked", "index of the first wrong word", "value read there", "value expected"),
     Drain::yes},
    {k_bandwidth_low, Severity::warn, "peer-to-peer copies far below the path",
     "Copies between these two GPUs run far below what their path carries. On PCIe the usual "
     "cause is the IOMMU in translation mode or PCIe ACS on a bridge sending peer traffic "
     "through the root complex; on NVLink, links down or retraining.",
     "GPU {0} -> GPU {1}: {2} GB/s over {3}, below {4}% of the {5} GB/s that path carries",
     "for PCIe: boot with iommu=pt (or intel_iommu=off / amd_iommu=off), disable ACS on the "
     "bridges between the GPUs (BIOS, or setpci), update the BIOS; compare NCCL_P2P_DISABLE=1; "
     "for NVLink: nvidia-smi nvlink -s and -e on both GPUs",
     where("index of the GPU copied from", "index of the GPU copied to",
           "measured GB/s of peer writes", "the path (\"NVLink (4 links)\", \"PCIe gen4 x16\")",
           "the floor, in percent of the path", "GB/s the path carries")},
    {k_no_access, Severity::info, "GPU pair without peer access",
     "CUDA says these GPUs cannot map each other's memory, so copies between them are staged "
     "through host memory and NCCL uses slower paths. Normal for some PCIe topologies and for "
     "GPUs without P2P; not normal for GPUs joined by NVLink.",
     "GPU {0} cannot access GPU {1}'s memory directly (cuDeviceCanAccessPeer = 0; path {2})",
     "if the GPUs share a PCIe switch or NVLink: check the IOMMU (iommu=pt) and ACS settings, "
     "and the NVLinks (nvidia-smi nvlink -s)",
     where(
         "GPU index", "index of the other GPU",
         "the path between them, as nvidia-smi topo -m labels it (NV#, PIX, PXB, PHB, NODE, SYS)")},
};

/// A pair far below this share of what its path carries is flagged (a healthy NVLink or PCIe
/// peer copy reaches 75-90%; one redirected through the root complex by ACS/IOMMU, well under
/// a third).
constexpr double k_floor_share = 0.4;

/// "0000:3b:00.0" for any spelling ("00000000:3B:00.0" too).
std::string bus_key(const std::string& bus) {
  std::string text = lower(bus);
  const size_t colon = text.find(':');
  if (colon != std::string::npos && colon > 4) {
    text = text.substr(colon - 4);
  }
  return text;
}

const GpuInfo* gpu_of(const SystemSnapshot& snapshot, const protocol::PeerDevice& device) {
  for (const GpuInfo& gpu : snapshot.gpus) {
    if (!device.pci_bus_id.empty() && bus_key(gpu.pci_bus_id) == bus_key(device.pci_bus_id)) {
      return &gpu;
    }
  }
  return nullptr;
}

const GpuPath* path_of(const SystemSnapshot& snapshot, int a, int b) {
  for (const GpuPath& path : snapshot.gpu_paths) {
    if ((path.gpu_a == a && path.gpu_b == b) || (path.gpu_a == b && path.gpu_b == a)) {
      return &path;
    }
  }
  return nullptr;
}

/// GB/s one direction of a PCIe link carries per lane (after line coding).
double pcie_lane_gbps(int generation) {
  switch (generation) {
  case 1:
    return 0.25;
  case 2:
    return 0.5;
  case 3:
    return 0.985;
  case 4:
    return 1.969;
  case 5:
    return 3.938;
  case 6:
    return 7.563;
  default:
    return 0.0;
  }
}

/// What the path from `from` to `to` carries one way, GB/s, and its name; nullopt when the
/// snapshot cannot say.
std::optional<std::pair<double, std::string>>
path_capacity(const SystemSnapshot& snapshot, const GpuInfo& from, const GpuInfo& to) {
  const GpuPath* path = path_of(snapshot, from.index, to.index);
  int links = 0;
  std::optional<int> version;
  for (const NvLinkInfo& link : from.nvlinks) {
    if (link.active) {
      ++links;
      version = version ? version : link.version;
    }
  }
  if (path != nullptr && (path->nvlinks > 0 || path->p2p_nvlink == "ok") && links > 0) {
    const int used = path->nvlinks > 0 ? path->nvlinks : links;
    const double per_link = version.value_or(4) >= 5 ? 50.0 : 25.0;
    return std::pair{used * per_link, fmt::format("NVLink ({} links)", used)};
  }
  const int gen = std::min(from.pcie_gen_max.value_or(0), to.pcie_gen_max.value_or(0));
  const int width = std::min(from.pcie_width_max.value_or(0), to.pcie_width_max.value_or(0));
  if (gen <= 0 || width <= 0) {
    return std::nullopt;
  }
  return std::pair{pcie_lane_gbps(gen) * width, fmt::format("PCIe gen{} x{}", gen, width)};
}
} // namespace

namespace {
/// The NVML index of the child's device `device` (its CUDA ordinal when NVML has no match).
int index_of(const SystemSnapshot& snapshot, const protocol::PeersPayload& peers, int device) {
  const protocol::PeerDevice& d = peers.devices.at(static_cast<size_t>(device));
  const GpuInfo* gpu = gpu_of(snapshot, d);
  return gpu != nullptr ? gpu->index : d.ordinal;
}

/// p2p.no_access for every ordered pair without peer access (a warning where NVLink joins them).
void no_access_findings(const SystemSnapshot& snapshot, const protocol::PeersPayload& peers,
                        std::vector<Finding>& findings) {
  for (const protocol::PeerAccess& access : peers.access) {
    if (access.can_access || access.from < 0 || access.to < 0 ||
        access.from >= static_cast<int>(peers.devices.size()) ||
        access.to >= static_cast<int>(peers.devices.size())) {
      continue;
    }
    const int a = index_of(snapshot, peers, access.from);
    const int b = index_of(snapshot, peers, access.to);
    const GpuPath* path = path_of(snapshot, a, b);
    Finding finding = make_finding(k_no_access, a, a, b, path ? path_label(*path) : "?");
    if (path != nullptr && (path->nvlinks > 0 || path->p2p_nvlink == "ok")) {
      finding.severity = Severity::warn; // NVLink between them, yet no peer access
    }
    findings.push_back(std::move(finding));
  }
}

/// Each measured pair: its metrics, its part of the summary, and p2p.bandwidth_low below the
/// floor of its path; then p2p_gbps, the slowest direction.
void judge_pairs(const SystemSnapshot& snapshot, const protocol::PeersPayload& peers,
                 bool contended, std::vector<Metric>& metrics, std::vector<std::string>& parts,
                 std::vector<Finding>& findings) {
  double slowest = 0.0;
  for (const protocol::PeerPair& pair : peers.pairs) {
    const int a = index_of(snapshot, peers, pair.from);
    const int b = index_of(snapshot, peers, pair.to);
    const std::string note = contended ? "measured under contention" : "";
    metrics.push_back(pair_metric("p2p", a, b, "write_gbps", pair.write_gbps, "GB/s",
                                  fmt::format("{} MiB x {}, median of 3{}", pair.bytes >> 20,
                                              pair.copies, note.empty() ? "" : "; " + note)));
    metrics.push_back(pair_metric("p2p", a, b, "bidir_gbps", pair.bidir_gbps, "GB/s",
                                  note.empty() ? "this direction, both ways at once" : note));
    metrics.push_back(pair_metric("p2p", a, b, "latency_us", pair.latency_us, "us", note));
    slowest = slowest == 0.0 ? pair.write_gbps : std::min(slowest, pair.write_gbps);
    if (pair.from < pair.to) {
      parts.push_back(fmt::format("{}->{} {:.0f} GB/s ({:.0f} both ways), {:.1f} us", a, b,
                                  pair.write_gbps, pair.bidir_gbps, pair.latency_us));
    } else {
      parts.push_back(fmt::format("{}->{} {:.0f} GB/s", a, b, pair.write_gbps));
    }
    const GpuInfo* from = gpu_of(snapshot, peers.devices.at(static_cast<size_t>(pair.from)));
    const GpuInfo* to = gpu_of(snapshot, peers.devices.at(static_cast<size_t>(pair.to)));
    if (from == nullptr || to == nullptr) {
      continue;
    }
    if (const auto capacity = path_capacity(snapshot, *from, *to);
        capacity && pair.write_gbps < k_floor_share * capacity->first) {
      Finding finding = make_finding(
          k_bandwidth_low, a, a, b, fmt::format("{:.1f}", pair.write_gbps), capacity->second,
          static_cast<int>(k_floor_share * 100), fmt::format("{:.0f}", capacity->first));
      if (contended) {
        finding.severity = Severity::info;
        finding.message += " (measured under contention)";
      }
      findings.push_back(std::move(finding));
    }
  }
  if (!peers.pairs.empty()) {
    metrics.push_back({"p2p_gbps", slowest, "GB/s", "the slowest direction of any pair"});
  }
}

/// The long level's sweep: every size per ordered pair, as figures (the thresholds judge the
/// one size of the standard run, which the sweep repeats).
void sweep_metrics(const SystemSnapshot& snapshot, const protocol::PeersPayload& peers,
                   bool contended, std::vector<Metric>& metrics, std::vector<std::string>& parts) {
  std::vector<uint64_t> sizes;
  for (const protocol::PeerSweepPoint& point : peers.sweep) {
    const std::string note = contended ? "; measured under contention" : "";
    metrics.push_back(sized_pair_metric(
        "p2p", index_of(snapshot, peers, point.from), index_of(snapshot, peers, point.to),
        point.bytes, "gbps", point.write_gbps, "GB/s",
        fmt::format("size sweep (--level long): {} MiB x {}, median of 3{}", point.bytes >> 20,
                    point.copies, note)));
    if (std::find(sizes.begin(), sizes.end(), point.bytes) == sizes.end()) {
      sizes.push_back(point.bytes);
    }
  }
  if (!sizes.empty()) {
    parts.push_back(fmt::format("each way at {} sizes, {}-{} MiB", sizes.size(),
                                *std::min_element(sizes.begin(), sizes.end()) >> 20,
                                *std::max_element(sizes.begin(), sizes.end()) >> 20));
  }
}
} // namespace

namespace {
constexpr std::string_view k_title = "Peer-to-peer copies";

// p2p_gbps's floor is checks/rules/expected_figures.cpp's (a share of the NVLinks' rate).
constexpr MetricSpec k_metrics[] = {
    {"p2p_gbps", "GB/s"},
    {"p2p_<a>_<b>_write_gbps", "GB/s"},
    {"p2p_<a>_<b>_bidir_gbps", "GB/s"},
    {"p2p_<a>_<b>_latency_us", "us"},
    {"p2p_<a>_<b>_<n>mib_gbps", "GB/s"},
    {"peer_work_ms", "ms"},
};

constexpr VerifySpec k_verify[] = {{"p2p", k_data_mismatch}};

constexpr SpanCheck<Payload> k_check{
    .info = {"gpu.p2p", k_title,
             "With two or more GPUs: the peer access matrix, then copy-engine bandwidth between "
             "every pair (each way, and both ways at once) and latency, with peer access enabled, "
             "every received buffer verified. Skipped with one GPU.",
             CheckKind::active},
    .work = "peers",
    // What each GPU sends and receives, at the smallest size; a 64 MiB copy each way. Its
    // buffers are taken and filled before its gate.
    .min_mib = 2 * 4,
    .wanted_mib = 2 * 64,
    .prepare_mib = 2 * 64,
    .run = &work,
    .judge = &judge,
    // It failed before the access matrix (no driver, no context): its failure says it all.
    .first_key = "devices",
    .stopped = "the peer-to-peer work stopped before the access matrix",
    .findings = k_findings,
    .metrics = k_metrics,
    .verify = k_verify,
};
} // namespace

std::span<const FindingSpec> findings() {
  return k_findings;
}

Judgement judge(const SystemSnapshot& snapshot, const Payload& peers, bool contended,
                std::vector<Metric>& metrics) {
  Judgement out;
  no_access_findings(snapshot, peers, out.findings);
  std::vector<std::string> parts;
  judge_pairs(snapshot, peers, contended, metrics, parts, out.findings);
  sweep_metrics(snapshot, peers, contended, metrics, parts);
  out.summary =
      peers.pairs.empty()
          ? fmt::format("{} GPUs: no pair with peer access to measure", peers.devices.size())
          : fmt::format("{} GPUs: {}", peers.devices.size(), fmt::join(parts, "; "));
  return out;
}

} // namespace gpucheck::gpu_checks::p2p

namespace gpucheck::gpu_checks {
Registration p2p_registration() {
  return span_registration<p2p::k_check>();
}
} // namespace gpucheck::gpu_checks
