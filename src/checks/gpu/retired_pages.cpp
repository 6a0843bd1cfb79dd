#include <fmt/format.h>

#include <span>

#include "checks/checks.hpp"
#include "checks/rules/per_gpu.hpp"
#include "findings/catalog.hpp"
#include "gpucheck/plural.hpp"

namespace gpucheck::checks {

namespace {
// Its findings, spelt here (CheckDef::findings adds them to the catalogue).
constexpr FindingCode k_retired_pages_limit{"gpu.retired_pages_limit"};
constexpr FindingCode k_retired_pages_pending{"gpu.retired_pages_pending"};

constexpr FindingSpec k_findings[] = {
    {k_retired_pages_limit, Severity::fail, "Retired pages at the RMA limit",
     "The GPU has retired so many memory pages (double-bit or repeated single-bit ECC errors) "
     "that NVIDIA considers the board due for replacement.",
     "GPU {0} (serial {1}) has {2} retired pages ({3} double-bit, {4} single-bit), at or above "
     "the limit of {5}",
     "drain the GPU and ask NVIDIA or the vendor for an RMA, quoting serial {1}",
     where(k_where_gpu, "its serial number", "pages retired in all",
           "pages retired for double-bit errors", "pages retired for single-bit errors",
           "the limit (60)"),
     Drain::yes},
    {k_retired_pages_pending, Severity::warn, "Page retirement pending",
     "Memory pages were marked for retirement; they are excluded only after a GPU reset or "
     "reboot, until then new work can hit the bad memory.",
     "GPU {0} has retired pages pending ({1} double-bit, {2} single-bit retired so far)",
     "drain the GPU and reset it (sudo nvidia-smi -i {3} -r) or reboot to apply the retirement",
     where(k_where_gpu, "pages retired for double-bit errors",
           "pages retired for single-bit errors", "GPU index, for nvidia-smi -i"),
     Drain::yes},
};

std::span<const FindingSpec> own_findings() {
  return k_findings;
}

constexpr CheckInfo k_info{"gpu.retired_pages", "Retired memory pages",
                           "No page retirement is pending and the retired-page count is below "
                           "NVIDIA's replacement limit (pre-A100 GPUs).",
                           CheckKind::passive};

/// Retired pages (double-bit plus single-bit) at which a board qualifies for replacement
/// (docs/checks.md cites the source).
constexpr int k_rma_pages = 60;

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
  if (dbe + sbe >= k_rma_pages) {
    findings.push_back(make_finding(k_retired_pages_limit, gpu.index, gpu_label(gpu),
                                    gpu.serial.empty() ? std::string("unknown") : gpu.serial,
                                    dbe + sbe, dbe, sbe, k_rma_pages));
  }
  if (gpu.retired_pages_pending.value_or(false)) {
    findings.push_back(
        make_finding(k_retired_pages_pending, gpu.index, gpu_label(gpu), dbe, sbe, gpu.index));
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
  return {k_info, &run, &own_findings};
}

} // namespace gpucheck::checks
