// gpu.nccl's judge, findings, metrics and registration: the all-reduce's sizes and bus bandwidth,
// NCCL missing a skip.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "gpu_checks/nccl/nccl.hpp"
#include "gpu_checks/registry.hpp"
#include "protocol/payloads.hpp"

namespace gpucheck::gpu_checks::nccl {

namespace {
using checks::Judgement;

constexpr std::string_view k_title = "NCCL all-reduce";

constexpr FindingSpec k_findings[] = {
    {k_wrong_sum, Severity::fail, "NCCL all-reduce gave a wrong sum",
     "An all-reduce of small integers (whose float32 sums are exact) through NCCL returned a "
     "value that differs from the sum: the GPUs, their links or the NCCL installation corrupt "
     "collective results, which silently breaks data-parallel training.",
     "GPU {0}: all-reduce {1}: {2} of {3} elements wrong, first at [{4}]: got {5}, expected {6}",
     "rerun with NCCL_P2P_DISABLE=1 and NCCL_SHM_DISABLE=1 to find the transport at fault; "
     "check gpu.p2p and the NVLinks (nvidia-smi nvlink -e), the IOMMU/ACS settings, and which "
     "libnccl.so.2 is loaded (gpucheck --only lib); run dcgmi diag -r 3",
     where("GPU index", "buffer size and the GPU's PCI bus id (\"4 MiB sum on 0000:3b:00.0\")",
           "elements wrong", "elements checked", "index of the first wrong element",
           "value read there", "value expected (the exact sum)"),
     Drain::yes},
};

std::string version_text(int version) {
  // 2.x: major*10000 + minor*100 + patch (older: major*1000 + minor*100 + patch).
  if (version >= 10000) {
    return fmt::format("{}.{}.{}", version / 10000, version / 100 % 100, version % 100);
  }
  return version > 0 ? fmt::format("{}.{}.{}", version / 1000, version / 100 % 10, version % 100)
                     : std::string("?");
}

// nccl_busbw_gbps's floor is checks/rules/expected_figures.cpp's (a share of the NVLinks' rate).
constexpr MetricSpec k_metrics[] = {
    {"nccl_busbw_gbps", "GB/s"},
    {"nccl_allreduce_<n>mib_busbw_gbps", "GB/s"},
    {"nccl_allreduce_<n>mib_algbw_gbps", "GB/s"},
};

constexpr VerifySpec k_verify[] = {{"nccl", k_wrong_sum}};

constexpr SpanCheck<Payload> k_check{
    .info = {"gpu.nccl", k_title,
             "With two or more GPUs: NCCL (libnccl.so.2, as the loader finds it) all-reduces "
             "float32 sums over every GPU at 1, 16, 64 and 256 MiB; every element is checked and "
             "bus bandwidth reported as nccl-tests does. Skipped with one GPU or without NCCL.",
             CheckKind::active},
    .work = "nccl",
    // NCCL's own buffers and the smallest size; and a 256 MiB sum in place.
    .min_mib = 256 + 1,
    .wanted_mib = 2 * 256,
    .prepare_mib = 2 * 256,
    .run = &work,
    .judge = &judge,
    // It failed before NCCL was loaded (no driver, no context): its failure says it all.
    .first_key = "nccl_missing",
    .stopped = "the NCCL work stopped before NCCL was loaded",
    .findings = k_findings,
    .metrics = k_metrics,
    .verify = k_verify,
    .load = &load,
    .prepare = &prepare,
    .beyond_budget = true,
};
} // namespace

std::span<const FindingSpec> findings() {
  return k_findings;
}

Judgement judge(const SystemSnapshot& /*snapshot*/, const Payload& nccl, bool contended,
                std::vector<Metric>& metrics) {
  Judgement out;
  if (!nccl.missing.empty()) {
    out.skipped = true;
    out.summary = fmt::format("NCCL not available: {}", nccl.missing);
    return out;
  }
  const std::string note = contended ? "measured under contention" : "";
  std::vector<std::string> parts;
  for (const protocol::NcclSize& size : nccl.sizes) {
    metrics.push_back(
        sized_metric("nccl_allreduce", size.bytes, "busbw_gbps", size.busbw_gbps, "GB/s",
                     fmt::format("busbw = algbw x 2(n-1)/n, n = {}, median of 3 x {}{}", nccl.ranks,
                                 size.iterations, note.empty() ? "" : "; " + note)));
    metrics.push_back(
        sized_metric("nccl_allreduce", size.bytes, "algbw_gbps", size.algbw_gbps, "GB/s", note));
    parts.push_back(fmt::format("{} MiB {:.0f} GB/s", size.bytes >> 20, size.busbw_gbps));
  }
  if (!nccl.sizes.empty()) {
    metrics.push_back({"nccl_busbw_gbps", nccl.sizes.back().busbw_gbps, "GB/s",
                       fmt::format("at the largest size, {} MiB", nccl.sizes.back().bytes >> 20)});
  }
  out.summary = fmt::format(
      "{} GPUs, NCCL {}: bus bandwidth {}", nccl.ranks, version_text(nccl.version),
      parts.empty() ? std::string("not measured") : fmt::format("{}", fmt::join(parts, ", ")));
  return out;
}

} // namespace gpucheck::gpu_checks::nccl

namespace gpucheck::gpu_checks {
Registration nccl_registration() {
  return span_registration<nccl::k_check>();
}
} // namespace gpucheck::gpu_checks
