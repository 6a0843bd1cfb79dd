#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "checks/checks.hpp"
#include "findings/catalog.hpp"
#include "gpucheck/model/text.hpp"

namespace gpucheck::checks {

namespace {
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
          make_finding(codes::k_env_driver_capabilities_no_compute, std::nullopt, *capabilities));
    }
  } else {
    findings.push_back(make_finding(codes::k_env_driver_capabilities_unset, std::nullopt, kind));
  }
  return {make_result(k_info, fmt::format("running in a {} container", kind), std::move(findings))};
}
} // namespace

CheckDef env_container_check() {
  return {k_info, &run};
}

} // namespace gpucheck::checks
