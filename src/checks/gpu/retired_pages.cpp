#include <fmt/format.h>

#include "checks/checks.hpp"
#include "checks/rules/per_gpu.hpp"
#include "findings/catalog.hpp"
#include "gpucheck/plural.hpp"

namespace gpucheck::checks {

namespace {
constexpr CheckInfo k_info{"gpu.retired_pages", "Retired memory pages",
                           "No page retirement is pending and the retired-page count is below "
                           "NVIDIA's replacement limit (pre-A100 GPUs).",
                           CheckKind::passive};

/// Retired pages (double-bit plus single-bit) at which a board qualifies for replacement
/// (docs/checks.md cites the source).
constexpr int k_retired_pages_limit = 60;

CheckResult judge(const CheckInfo& info, const GpuInfo& gpu, const SystemSnapshot&) {
  if (!gpu.retired_pages_pending && !gpu.retired_pages_dbe && !gpu.retired_pages_sbe) {
    return skip_result(info,
                       "page retirement is not reported for this GPU (A100 and later remap rows "
                       "instead: see gpu.remapped_rows)",
                       gpu.index);
  }
  const int dbe = gpu.retired_pages_dbe.value_or(0);
  const int sbe = gpu.retired_pages_sbe.value_or(0);
  std::vector<Finding> findings;
  if (dbe + sbe >= k_retired_pages_limit) {
    findings.push_back(make_finding(codes::k_gpu_retired_pages_limit, gpu.index, gpu_label(gpu),
                                    gpu.serial.empty() ? std::string("unknown") : gpu.serial,
                                    dbe + sbe, dbe, sbe, k_retired_pages_limit));
  }
  if (gpu.retired_pages_pending.value_or(false)) {
    findings.push_back(make_finding(codes::k_gpu_retired_pages_pending, gpu.index, gpu_label(gpu),
                                    dbe, sbe, gpu.index));
  }
  return make_result(
      info,
      fmt::format("{} ({} double-bit, {} single-bit){}", plural(dbe + sbe, "retired page"), dbe,
                  sbe, gpu.retired_pages_pending.value_or(false) ? ", retirement pending" : ""),
      std::move(findings), gpu.index);
}

std::vector<CheckResult> run(const CheckContext& context) {
  return for_each_gpu(k_info, context.snapshot, &judge);
}
} // namespace

CheckDef gpu_retired_pages_check() {
  return {k_info, &run};
}

} // namespace gpucheck::checks
