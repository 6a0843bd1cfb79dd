#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <span>

#include "checks/checks.hpp"
#include "findings/catalog.hpp"
#include "gpucheck/model/text.hpp"

namespace gpucheck::checks {

namespace {
// Its findings, spelt here (CheckDef::findings adds them to the catalogue).
constexpr FindingCode k_env_driver_capabilities_no_compute{"env.driver_capabilities_no_compute"};
constexpr FindingCode k_env_driver_capabilities_unset{"env.driver_capabilities_unset"};

constexpr FindingSpec k_findings[] = {
    {k_env_driver_capabilities_no_compute, Severity::warn, "Container lacks the compute capability",
     "The NVIDIA container runtime injects only the libraries for the capabilities requested; "
     "without compute there is no libcuda in the container.",
     "NVIDIA_DRIVER_CAPABILITIES={0} does not include compute, so the container runtime does "
     "not inject libcuda",
     "start the container with NVIDIA_DRIVER_CAPABILITIES=compute,utility (or all)",
     where("the value of NVIDIA_DRIVER_CAPABILITIES")},
    {k_env_driver_capabilities_unset, Severity::info, "Container capabilities not set",
     "NVIDIA_DRIVER_CAPABILITIES is unset; the container runtime then applies its default, which "
     "some set-ups make utility only.",
     "NVIDIA_DRIVER_CAPABILITIES is not set in this {0} container",
     "if CUDA libraries are missing, start the container with "
     "NVIDIA_DRIVER_CAPABILITIES=compute,utility",
     where(k_where_container)},
};

std::span<const FindingSpec> own_findings() {
  return k_findings;
}

constexpr CheckInfo k_info{
    "env.container", "Container GPU settings",
    "Inside a container, NVIDIA_VISIBLE_DEVICES gives it GPUs and NVIDIA_DRIVER_CAPABILITIES "
    "includes compute.",
    CheckKind::passive};

bool has_compute(std::string_view capabilities) {
  std::size_t start = 0;
  while (start <= capabilities.size()) {
    std::size_t comma = capabilities.find(',', start);
    if (comma == std::string_view::npos) {
      comma = capabilities.size();
    }
    std::string token = lower(capabilities.substr(start, comma - start));
    token.erase(std::remove_if(token.begin(), token.end(),
                               [](unsigned char c) { return std::isspace(c) != 0; }),
                token.end());
    if (token == "compute" || token == "all") {
      return true;
    }
    start = comma + 1;
  }
  return false;
}

std::vector<CheckResult> run(const CheckContext& context) {
  const SystemSnapshot& s = context.snapshot;
  const std::string& kind = s.environment.container.kind;
  if (kind == "none") {
    return {skip_result(k_info, "not running in a container")};
  }
  std::vector<Finding> findings;
  if (auto visible = s.env("NVIDIA_VISIBLE_DEVICES")) {
    const std::string word = lower(*visible);
    if (word == "void" || word == "none") {
      findings.push_back(
          make_finding(codes::k_env_nvidia_visible_devices_none, std::nullopt, *visible, kind));
    }
  }
  if (auto capabilities = s.env("NVIDIA_DRIVER_CAPABILITIES")) {
    if (!has_compute(*capabilities)) {
      findings.push_back(
          make_finding(k_env_driver_capabilities_no_compute, std::nullopt, *capabilities));
    }
  } else {
    findings.push_back(make_finding(k_env_driver_capabilities_unset, std::nullopt, kind));
  }
  return {make_result(k_info, fmt::format("running in a {} container", kind), std::move(findings))};
}
} // namespace

CheckDef env_container_check() {
  return {k_info, &run, &own_findings};
}

} // namespace gpucheck::checks
