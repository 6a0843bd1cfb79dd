#include <fmt/format.h>

#include <span>

#include "checks/checks.hpp"
#include "checks/rules/per_gpu.hpp"
#include "findings/catalog.hpp"
#include "gpucheck/plural.hpp"

namespace gpucheck::checks {

namespace {
// Its findings, spelt here (CheckDef::findings adds them to the catalogue).
constexpr FindingCode k_mig_change_pending{"gpu.mig_change_pending"};
constexpr FindingCode k_mig_no_instance{"gpu.mig_no_instance"};

constexpr FindingSpec k_findings[] = {
    {k_mig_change_pending, Severity::warn, "MIG mode change pending",
     "A MIG mode change takes effect only after a GPU reset.",
     "GPU {0}: MIG mode is {1} now and {2} after the next reset",
     "reset the GPU (sudo nvidia-smi -i {3} -r, with no process on it) or reboot",
     where(k_where_gpu, "MIG mode now (enabled, disabled)", "MIG mode after the next reset",
           "GPU index, for nvidia-smi -i")},
    {k_mig_no_instance, Severity::fail, "MIG enabled without instances",
     "With MIG enabled, CUDA sees only MIG instances; with none created the GPU is invisible to "
     "CUDA.",
     "MIG is enabled on GPU {0} but no MIG instance exists, so CUDA sees no device on it",
     "create instances (list profiles: nvidia-smi mig -i {1} -lgip; create: sudo nvidia-smi mig "
     "-i {1} -cgi <profile> -C), or disable MIG (sudo nvidia-smi -i {1} -mig 0) and reset the "
     "GPU",
     where(k_where_gpu, "GPU index, for nvidia-smi -i")},
};

std::span<const FindingSpec> own_findings() {
  return k_findings;
}

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
    findings.push_back(make_finding(k_mig_change_pending, gpu.index, gpu_label(gpu),
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
    findings.push_back(make_finding(k_mig_no_instance, gpu.index, gpu_label(gpu), gpu.index));
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
  return {k_info, &run, &own_findings};
}

} // namespace gpucheck::checks
