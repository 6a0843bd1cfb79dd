#include <fmt/format.h>

#include "checks/checks.hpp"
#include "checks/rules/per_gpu.hpp"
#include "findings/catalog.hpp"

namespace gpucheck::checks {

namespace {
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
    findings.push_back(make_finding(codes::k_gpu_row_remap_failed, gpu.index, gpu_label(gpu),
                                    gpu.serial.empty() ? std::string("unknown") : gpu.serial,
                                    uncorrectable, correctable));
  }
  if (gpu.remapped_rows_pending.value_or(false)) {
    findings.push_back(make_finding(codes::k_gpu_row_remap_pending, gpu.index, gpu_label(gpu),
                                    uncorrectable, correctable, gpu.index));
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
  return {k_info, &run};
}

} // namespace gpucheck::checks
