#include <fmt/format.h>

#include "checks/checks.hpp"
#include "checks/rules/per_gpu.hpp"
#include "findings/catalog.hpp"
#include "gpucheck/plural.hpp"

namespace gpucheck::checks {

namespace {
constexpr CheckInfo k_info{"gpu.mig", "MIG configuration",
                           "A MIG-enabled GPU has at least one MIG instance, and no MIG mode "
                           "change waits for a reset.",
                           CheckKind::passive};

std::string_view mode_text(bool enabled) {
  return enabled ? "enabled" : "disabled";
}

CheckResult judge(const CheckInfo& info, const GpuInfo& gpu, const SystemSnapshot&) {
  if (!gpu.mig_enabled) {
    return skip_result(info, "MIG is not supported on this GPU", gpu.index);
  }
  std::vector<Finding> findings;
  // mig_pending is the mode the GPU takes at its next reset.
  if (gpu.mig_pending && *gpu.mig_pending != *gpu.mig_enabled) {
    findings.push_back(make_finding(codes::k_gpu_mig_change_pending, gpu.index, gpu_label(gpu),
                                    mode_text(*gpu.mig_enabled), mode_text(*gpu.mig_pending),
                                    gpu.index));
  }
  if (!*gpu.mig_enabled) {
    return make_result(info, "MIG is disabled", std::move(findings), gpu.index);
  }
  if (!gpu.mig_instance_count) {
    if (findings.empty()) {
      return skip_result(info, "MIG is enabled; the number of MIG instances is not reported",
                         gpu.index);
    }
    return make_result(info, "MIG is enabled", std::move(findings), gpu.index);
  }
  if (*gpu.mig_instance_count == 0) {
    findings.push_back(
        make_finding(codes::k_gpu_mig_no_instance, gpu.index, gpu_label(gpu), gpu.index));
  }
  return make_result(
      info, fmt::format("MIG is enabled with {}", plural(*gpu.mig_instance_count, "instance")),
      std::move(findings), gpu.index);
}

std::vector<CheckResult> run(const CheckContext& context) {
  return for_each_gpu(k_info, context.snapshot, &judge);
}
} // namespace

CheckDef gpu_mig_check() {
  return {k_info, &run};
}

} // namespace gpucheck::checks
