// gpu.display: a GPU that drives a display (F40). The driver then enforces a run-time limit on
// each kernel (CU_DEVICE_ATTRIBUTE_KERNEL_EXEC_TIMEOUT) so the desktop stays responsive: long
// kernels die with "the launch timed out and was terminated" (702).
#include <fmt/format.h>

#include <span>

#include "checks/checks.hpp"
#include "checks/rules/per_gpu.hpp"
#include "findings/catalog.hpp"

namespace gpucheck::checks {

namespace {
// Its findings, spelt here (CheckDef::findings adds them to the catalogue).
constexpr FindingCode k_display_active{"gpu.display_active"};
constexpr FindingCode k_display_watchdog{"gpu.display_watchdog"};

constexpr FindingSpec k_findings[] = {
    {k_display_active, Severity::info, "GPU drives a display",
     "The GPU drives a display; the desktop shares its time and memory with compute work.",
     "GPU {0} drives an active display (no kernel time limit applies)",
     "for long or timed compute, prefer a GPU without a display", where(k_where_gpu)},
    {k_display_watchdog, Severity::warn, "Display watchdog limits kernels",
     "The GPU drives a display (or, under WSL, the Windows driver's TDR applies), so the driver "
     "kills any kernel that runs longer than a few seconds: \"the launch timed out and was "
     "terminated\" (CUDA error 702), sometimes Xid 8.",
     "GPU {0} has a kernel run-time limit (CU_DEVICE_ATTRIBUTE_KERNEL_EXEC_TIMEOUT = 1): {1}",
     "run long kernels on a GPU without a display (drive the desktop from the integrated GPU "
     "or another card), stop the display manager for long jobs (sudo systemctl stop "
     "display-manager), or split work into shorter kernels",
     where(
         k_where_gpu,
         "why the limit applies (an active display, a monitor connected, or the driver's report)")},
};

std::span<const FindingSpec> own_findings() {
  return k_findings;
}

constexpr CheckInfo k_info{"gpu.display", "Display watchdog",
                           "No kernel run-time limit (display watchdog) applies to the GPU: it "
                           "drives no display, or the limit is off.",
                           CheckKind::passive};

std::string display_text(const GpuInfo& gpu) {
  if (gpu.display_active.value_or(false)) {
    return "it drives an active display";
  }
  if (gpu.display_mode.value_or(false)) {
    return "a monitor is connected to it";
  }
  return "the driver reports a kernel time limit";
}

CheckResult judge(const CheckInfo& info, const GpuInfo& gpu, const SystemSnapshot& s) {
  if (!gpu.kernel_exec_timeout && !gpu.display_active && !gpu.display_mode) {
    return skip_result(info, "neither the kernel time limit nor the display state is reported",
                       gpu.index);
  }
  if (gpu.kernel_exec_timeout.value_or(false)) {
    // Under WSL the Windows driver's TDR always applies: expected there, a note.
    const Severity severity = s.environment.wsl ? Severity::info : Severity::warn;
    return make_result(info, "kernels have a run-time limit (display watchdog)",
                       {make_finding_as(severity, k_display_watchdog, gpu.index, gpu_label(gpu),
                                        display_text(gpu))},
                       gpu.index);
  }
  if (gpu.display_active.value_or(false)) {
    return make_result(info, "drives a display; no kernel time limit",
                       {make_finding(k_display_active, gpu.index, gpu_label(gpu))}, gpu.index);
  }
  return make_result(info, "no display watchdog", {}, gpu.index);
}

std::vector<CheckResult> run(const CheckContext& context) {
  return for_each_gpu(k_info, context.snapshot, &judge);
}
} // namespace

CheckDef gpu_display_check() {
  return {k_info, &run, &own_findings};
}

} // namespace gpucheck::checks
