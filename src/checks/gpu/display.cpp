// gpu.display: a GPU that drives a display (F40). The driver then enforces a run-time limit on
// each kernel (CU_DEVICE_ATTRIBUTE_KERNEL_EXEC_TIMEOUT) so the desktop stays responsive: long
// kernels die with "the launch timed out and was terminated" (702).
#include <fmt/format.h>

#include "checks/checks.hpp"
#include "checks/rules/per_gpu.hpp"
#include "findings/catalog.hpp"

namespace gpucheck::checks {

namespace {
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
                       {make_finding_as(severity, codes::k_gpu_display_watchdog, gpu.index,
                                        gpu_label(gpu), display_text(gpu))},
                       gpu.index);
  }
  if (gpu.display_active.value_or(false)) {
    return make_result(info, "drives a display; no kernel time limit",
                       {make_finding(codes::k_gpu_display_active, gpu.index, gpu_label(gpu))},
                       gpu.index);
  }
  return make_result(info, "no display watchdog", {}, gpu.index);
}

std::vector<CheckResult> run(const CheckContext& context) {
  return for_each_gpu(k_info, context.snapshot, &judge);
}
} // namespace

CheckDef gpu_display_check() {
  return {k_info, &run};
}

} // namespace gpucheck::checks
