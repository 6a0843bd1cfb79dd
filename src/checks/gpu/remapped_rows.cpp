#include <fmt/format.h>

#include <span>

#include "checks/checks.hpp"
#include "checks/rules/per_gpu.hpp"
#include "findings/catalog.hpp"

namespace gpucheck::checks {

namespace {
// Its findings, spelt here (CheckDef::findings adds them to the catalogue).
constexpr FindingCode k_row_remap_failed{"gpu.row_remap_failed"};
constexpr FindingCode k_row_remap_pending{"gpu.row_remap_pending"};

constexpr FindingSpec k_findings[] = {
    {k_row_remap_failed, Severity::fail, "Row remapping failed",
     "The GPU could not remap a failing memory row (a bank ran out of spare rows); NVIDIA's RMA "
     "criterion for A100 and later.",
     "GPU {0} (serial {1}) reports a row-remapping failure ({2} uncorrectable, {3} correctable "
     "rows remapped)",
     "drain the GPU, run NVIDIA's field diagnostic and ask for an RMA, quoting serial {1}",
     where(k_where_gpu, "its serial number", "rows remapped for uncorrectable errors",
           "rows remapped for correctable errors"),
     Drain::yes},
    {k_row_remap_pending, Severity::warn, "Row remapping pending",
     "A failing memory row was scheduled for remapping; it takes effect at the next GPU reset.",
     "GPU {0} has a row remapping pending ({1} uncorrectable, {2} correctable rows remapped)",
     "drain the GPU and reset it (sudo nvidia-smi -i {3} -r) or reboot to apply the remap",
     where(k_where_gpu, "rows remapped for uncorrectable errors",
           "rows remapped for correctable errors", "GPU index, for nvidia-smi -i"),
     Drain::yes},
};

std::span<const FindingSpec> own_findings() {
  return k_findings;
}

constexpr CheckInfo k_info{"gpu.remapped_rows", "Memory row remapping",
                           "No row remapping is pending and none has failed (A100 and later).",
                           CheckKind::passive};

CheckResult judge(const CheckInfo& info, const GpuInfo& gpu, const SystemSnapshot&) {
  if (!gpu.remapped_rows_pending && !gpu.remapped_rows_failure) {
    return skip_result(info, "row remapping is not reported for this GPU (before A100)", gpu.index);
  }
  const std::string uncorrectable = gpu.remapped_rows_uncorrectable
                                        ? std::to_string(*gpu.remapped_rows_uncorrectable)
                                        : std::string("unknown");
  const std::string correctable = gpu.remapped_rows_correctable
                                      ? std::to_string(*gpu.remapped_rows_correctable)
                                      : std::string("unknown");
  std::vector<Finding> findings;
  if (gpu.remapped_rows_failure.value_or(false)) {
    findings.push_back(make_finding(k_row_remap_failed, gpu.index, gpu_label(gpu),
                                    gpu.serial.empty() ? std::string("unknown") : gpu.serial,
                                    uncorrectable, correctable));
  }
  if (gpu.remapped_rows_pending.value_or(false)) {
    findings.push_back(make_finding(k_row_remap_pending, gpu.index, gpu_label(gpu), uncorrectable,
                                    correctable, gpu.index));
  }
  return make_result(
      info,
      fmt::format("rows remapped: {} uncorrectable, {} correctable", uncorrectable, correctable),
      std::move(findings), gpu.index);
}

std::vector<CheckResult> run(const CheckContext& context) {
  return for_each_gpu(k_info, context.snapshot, &judge);
}
} // namespace

CheckDef gpu_remapped_rows_check() {
  return {k_info, &run, &own_findings};
}

} // namespace gpucheck::checks
