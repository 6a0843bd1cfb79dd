// gpu.nccl: NCCL all-reduce over every GPU, in the multi-GPU child after the peer copies (engine
// work `nccl`): the libnccl.so.2 the loader picks, ncclCommInitAll, float32 sums verified, and
// nccl-tests' bus bandwidth.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "checks/active/judging.hpp"
#include "findings/catalog.hpp"
#include "protocol/payloads.hpp"

namespace gpucheck::checks {

namespace {
constexpr CheckInfo k_info{
    "gpu.nccl", "NCCL all-reduce",
    "With two or more GPUs: NCCL (libnccl.so.2, as the loader finds it) all-reduces float32 sums "
    "over every GPU at 1, 16, 64 and 256 MiB; every element is checked and bus bandwidth reported "
    "as nccl-tests does. Skipped with one GPU or without NCCL.",
    CheckKind::active};

std::string version_text(int version) {
  // 2.x: major*10000 + minor*100 + patch (older: major*1000 + minor*100 + patch).
  if (version >= 10000) {
    return fmt::format("{}.{}.{}", version / 10000, version / 100 % 100, version % 100);
  }
  return version > 0 ? fmt::format("{}.{}.{}", version / 1000, version / 100 % 10, version % 100)
                     : std::string("?");
}

std::vector<CheckResult> run(const CheckContext& context) {
  return run_spanning(
      k_info, context,
      [](const nlohmann::json& payload, bool contended, std::vector<Metric>& metrics) {
        return judge_gpu_nccl(payload, contended, metrics);
      });
}
} // namespace

Judgement judge_gpu_nccl(const nlohmann::json& payload, bool contended,
                         std::vector<Metric>& metrics) {
  Judgement out;
  const Expected<protocol::NcclPayload> read = protocol::read_nccl(payload);
  if (!read && payload.contains("failure") && !payload.contains("nccl_missing")) {
    // It failed before NCCL was loaded (no driver, no context): its failure says it all.
    out.summary = "the NCCL work stopped before NCCL was loaded";
    return out;
  }
  if (!read) {
    return unreadable_result(k_info.title, GpuTarget{}, read.error());
  }
  const protocol::NcclPayload& nccl = read.value();
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

CheckDef gpu_nccl_check() {
  return {k_info, &run};
}

} // namespace gpucheck::checks
