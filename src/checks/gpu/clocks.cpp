#include <fmt/format.h>
#include <fmt/ranges.h>

#include "checks/checks.hpp"
#include "checks/rules/per_gpu.hpp"
#include "findings/catalog.hpp"

namespace gpucheck::checks {

namespace {
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
        codes::k_gpu_clocks_thermal_slowdown, gpu.index, gpu_label(gpu),
        names_of(reasons,
                 {{k_hw_thermal, "HW thermal slowdown"}, {k_sw_thermal, "SW thermal slowdown"}}),
        hex, gpu.temperature_c ? fmt::format("{} C", *gpu.temperature_c) : std::string("unknown")));
  }
  // HW slowdown accompanies HW thermal slowdown; report it alone only without a thermal cause.
  const bool hw_slowdown_alone = (reasons & k_hw_slowdown) != 0 && (reasons & k_hw_thermal) == 0;
  if ((reasons & k_hw_power_brake) != 0 || hw_slowdown_alone) {
    findings.push_back(make_finding(
        codes::k_gpu_clocks_hw_slowdown, gpu.index, gpu_label(gpu),
        names_of(reasons, {{k_hw_power_brake, "HW power brake"}, {k_hw_slowdown, "HW slowdown"}}),
        hex));
  }
  if (findings.empty() && (reasons & k_sw_power_cap) != 0) {
    const std::string power =
        gpu.power_w && gpu.power_limit_w
            ? fmt::format("{:.0f} W of a {:.0f} W limit", *gpu.power_w, *gpu.power_limit_w)
            : std::string("power draw not reported");
    findings.push_back(
        make_finding(codes::k_gpu_clocks_power_capped, gpu.index, gpu_label(gpu), power));
  }
  return make_result(info, fmt::format("clock event reasons {}", hex), std::move(findings),
                     gpu.index);
}

std::vector<CheckResult> run(const CheckContext& context) {
  return for_each_gpu(k_info, context.snapshot, &judge);
}
} // namespace

CheckDef gpu_clocks_check() {
  return {k_info, &run};
}

} // namespace gpucheck::checks
