#include <fmt/format.h>

#include <span>

#include "checks/checks.hpp"
#include "checks/rules/per_gpu.hpp"
#include "findings/catalog.hpp"
#include "gpucheck/plural.hpp"

namespace gpucheck::checks {

namespace {
// Its findings, spelt here (CheckDef::findings adds them to the catalogue).
constexpr FindingCode k_ecc_disabled{"gpu.ecc_disabled"};
constexpr FindingCode k_ecc_uncorrected{"gpu.ecc_uncorrected"};

constexpr FindingSpec k_findings[] = {
    {k_ecc_disabled, Severity::info, "ECC off",
     "ECC memory protection is supported but switched off.", "ECC is supported but off on GPU {0}",
     "on data-center GPUs keep ECC on: sudo nvidia-smi -i {1} -e 1, then reboot",
     where(k_where_gpu, "GPU index, for nvidia-smi -i")},
    {k_ecc_uncorrected, Severity::fail, "Uncorrected ECC errors",
     "The GPU memory had uncorrectable errors since the driver loaded; data may be corrupt and "
     "new contexts may fail with error 214.",
     "GPU {0} (serial {1}) has {2} since the driver loaded",
     "drain the GPU, then reset it (sudo nvidia-smi -i {3} -r) or reboot; if errors return, "
     "check retired pages / remapped rows and ask the vendor for an RMA (serial {1})",
     where(k_where_gpu, "its serial number",
           "the count of uncorrected ECC errors since the driver loaded (\"2 uncorrected ECC "
           "errors\")",
           "GPU index, for nvidia-smi -i"),
     Drain::yes},
};

std::span<const FindingSpec> own_findings() {
  return k_findings;
}

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
    return make_result(info, "ECC is off",
                       {make_finding(k_ecc_disabled, gpu.index, gpu_label(gpu), gpu.index)},
                       gpu.index);
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
    return make_result(info, summary,
                       {make_finding(k_ecc_uncorrected, gpu.index, gpu_label(gpu), serial_text(gpu),
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
  return {k_info, &run, &own_findings};
}

} // namespace gpucheck::checks
