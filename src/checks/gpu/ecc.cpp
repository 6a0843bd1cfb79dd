#include <fmt/format.h>

#include "checks/checks.hpp"
#include "checks/rules/per_gpu.hpp"
#include "findings/catalog.hpp"
#include "gpucheck/plural.hpp"

namespace gpucheck::checks {

namespace {
constexpr CheckInfo k_info{"gpu.ecc", "ECC errors",
                           "ECC is on and the GPU had no uncorrected ECC error since the driver "
                           "loaded.",
                           CheckKind::passive};

std::string serial_text(const GpuInfo& gpu) {
  return gpu.serial.empty() ? std::string("unknown") : gpu.serial;
}

CheckResult judge(const CheckInfo& info, const GpuInfo& gpu, const SystemSnapshot&) {
  if (!gpu.ecc_enabled) {
    return skip_result(info, "ECC is not supported on this GPU", gpu.index);
  }
  if (!*gpu.ecc_enabled) {
    return make_result(
        info, "ECC is off",
        {make_finding(codes::k_gpu_ecc_disabled, gpu.index, gpu_label(gpu), gpu.index)}, gpu.index);
  }
  if (!gpu.ecc_uncorrected_volatile) {
    return skip_result(info, "ECC is on; the error counters are not reported", gpu.index);
  }
  const uint64_t uncorrected = *gpu.ecc_uncorrected_volatile;
  const std::string summary = fmt::format(
      "ECC on: {} uncorrected, {} corrected errors since the driver loaded", uncorrected,
      gpu.ecc_corrected_volatile ? std::to_string(*gpu.ecc_corrected_volatile)
                                 : std::string("unknown"));
  if (uncorrected > 0) {
    return make_result(
        info, summary,
        {make_finding(codes::k_gpu_ecc_uncorrected, gpu.index, gpu_label(gpu), serial_text(gpu),
                      plural(uncorrected, "uncorrected ECC error"), gpu.index)},
        gpu.index);
  }
  return make_result(info, summary, {}, gpu.index);
}

std::vector<CheckResult> run(const CheckContext& context) {
  return for_each_gpu(k_info, context.snapshot, &judge);
}
} // namespace

CheckDef gpu_ecc_check() {
  return {k_info, &run};
}

} // namespace gpucheck::checks
