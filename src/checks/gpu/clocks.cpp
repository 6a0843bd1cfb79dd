#include <fmt/format.h>
#include <fmt/ranges.h>

#include <span>

#include "checks/checks.hpp"
#include "checks/rules/per_gpu.hpp"
#include "findings/catalog.hpp"

namespace gpucheck::checks {

namespace {
// Its findings, spelt here (CheckDef::findings adds them to the catalogue).
constexpr FindingCode k_clocks_hw_slowdown{"gpu.clocks_hw_slowdown"};
constexpr FindingCode k_clocks_power_capped{"gpu.clocks_power_capped"};
constexpr FindingCode k_clocks_thermal_slowdown{"gpu.clocks_thermal_slowdown"};

constexpr FindingSpec k_findings[] = {
    {k_clocks_hw_slowdown, Severity::warn, "Hardware slowdown active",
     "The GPU's clocks are held down by hardware: HW slowdown or an external power brake "
     "(power delivery, PSU, chassis/BMC signal).",
     "GPU {0} is held down by {1} (clock event reasons {2})",
     "check the power cables and PSU, the chassis/BMC power-brake settings and the GPU's "
     "temperature; a slowdown that persists at idle points at a failing board",
     where(k_where_gpu, "the reasons (HW power brake, HW slowdown)",
           "NVML's clock event reason bits, in hex")},
    {k_clocks_power_capped, Severity::info, "At software power cap",
     "The GPU runs at its software power limit; normal under full load.",
     "GPU {0} is at its software power cap ({1})",
     "nothing to do under load; if it happens at low power draw, check the power limit "
     "(nvidia-smi -q -d POWER) and restore the default with sudo nvidia-smi -pl",
     where(k_where_gpu, "power draw and limit, in W")},
    {k_clocks_thermal_slowdown, Severity::warn, "Thermal slowdown active",
     "The GPU's clocks are reduced because it is too hot.",
     "GPU {0} is throttled by {1} (clock event reasons {2}; temperature {3})",
     "improve cooling: check airflow and fans, clean the heatsink, check the server's thermal "
     "profile for this GPU model",
     where(k_where_gpu, "the reasons (HW or SW thermal slowdown)",
           "NVML's clock event reason bits, in hex", "the GPU's temperature")},
};

std::span<const FindingSpec> own_findings() {
  return k_findings;
}

constexpr CheckInfo k_info{
    "gpu.clocks", "Clock slowdown",
    "No thermal slowdown, hardware slowdown or power brake holds the GPU's clocks down. The "
    "software power cap alone is normal under load and only noted.",
    CheckKind::passive};

// nvmlClocksEventReasons bits (nvml.h).
constexpr uint64_t k_sw_power_cap = 0x4;
constexpr uint64_t k_hw_slowdown = 0x8;
constexpr uint64_t k_sw_thermal = 0x20;
constexpr uint64_t k_hw_thermal = 0x40;
constexpr uint64_t k_hw_power_brake = 0x80;

std::string names_of(uint64_t reasons,
                     std::initializer_list<std::pair<uint64_t, const char*>> bits) {
  std::vector<std::string> names;
  for (const auto& [bit, name] : bits) {
    if ((reasons & bit) != 0) {
      names.emplace_back(name);
    }
  }
  return fmt::format("{}", fmt::join(names, " and "));
}

CheckResult judge(const CheckInfo& info, const GpuInfo& gpu, const SystemSnapshot&) {
  if (!gpu.clock_event_reasons) {
    return skip_result(info, "clock event reasons are not reported for this GPU", gpu.index);
  }
  const uint64_t reasons = *gpu.clock_event_reasons;
  const std::string hex = fmt::format("{:#x}", reasons);
  std::vector<Finding> findings;
  if ((reasons & (k_sw_thermal | k_hw_thermal)) != 0) {
    findings.push_back(make_finding(
        k_clocks_thermal_slowdown, gpu.index, gpu_label(gpu),
        names_of(reasons,
                 {{k_hw_thermal, "HW thermal slowdown"}, {k_sw_thermal, "SW thermal slowdown"}}),
        hex, gpu.temperature_c ? fmt::format("{} C", *gpu.temperature_c) : std::string("unknown")));
  }
  // HW slowdown accompanies HW thermal slowdown; report it alone only without a thermal cause.
  const bool hw_slowdown_alone = (reasons & k_hw_slowdown) != 0 && (reasons & k_hw_thermal) == 0;
  if ((reasons & k_hw_power_brake) != 0 || hw_slowdown_alone) {
    findings.push_back(make_finding(
        k_clocks_hw_slowdown, gpu.index, gpu_label(gpu),
        names_of(reasons, {{k_hw_power_brake, "HW power brake"}, {k_hw_slowdown, "HW slowdown"}}),
        hex));
  }
  if (findings.empty() && (reasons & k_sw_power_cap) != 0) {
    const std::string power =
        gpu.power_w && gpu.power_limit_w
            ? fmt::format("{:.0f} W of a {:.0f} W limit", *gpu.power_w, *gpu.power_limit_w)
            : std::string("power draw not reported");
    findings.push_back(make_finding(k_clocks_power_capped, gpu.index, gpu_label(gpu), power));
  }
  return make_result(info, fmt::format("clock event reasons {}", hex), std::move(findings),
                     gpu.index);
}

std::vector<CheckResult> run(const CheckContext& context) {
  return for_each_gpu(k_info, context.snapshot, &judge);
}
} // namespace

CheckDef gpu_clocks_check() {
  return {k_info, &run, &own_findings};
}

} // namespace gpucheck::checks
