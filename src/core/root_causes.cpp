#include "core/root_causes.hpp"

#include <algorithm>
#include <set>
#include <span>
#include <string_view>

#include "findings/codes.hpp"

namespace gpucheck {

namespace {

/// A fault and what it explains. A result is its consequence when one of its warn-or-worse
/// findings has a code in `codes` (an entry ending in '.' is a prefix), when it is skipped and
/// its check id starts with one of `skipped_areas`, or, for a per-GPU cause, when it is about
/// the same GPU.
struct CauseRule {
  std::span<const std::string_view> causes;
  std::span<const std::string_view> codes;
  std::span<const std::string_view> skipped_areas;
  bool same_gpu = false;
};

// What the missing driver stack leaves undone: every check that needs a driver.
constexpr std::string_view k_driver_areas[] = {
    "driver.kernel_module", "driver.nvml", "driver.version_match", "cuda.", "gpu.", "compat.",
    "env.device_nodes"};
constexpr std::string_view k_gpu_areas[] = {"gpu."};
constexpr std::string_view k_mismatch_areas[] = {"gpu.", "driver.nvml", "cuda."};
constexpr std::string_view k_none[] = {""};

constexpr std::string_view k_container_causes[] = {codes::k_env_nvidia_visible_devices_none};
constexpr std::string_view k_container_codes[] = {
    "driver.missing", "driver.module_not_loaded", "nvml.",
    "cuda.",          "env.device_node_missing",  "gate."};
constexpr std::string_view k_wsl_causes[] = {codes::k_env_wsl_linux_driver_library,
                                             codes::k_env_wsl_linux_driver_package,
                                             codes::k_env_wsl_file_missing};
constexpr std::string_view k_wsl_codes[] = {"nvml.", "cuda.", "driver.version_mismatch",
                                            "lib.cudnn_sublibrary_failed", "gate."};
constexpr std::string_view k_nouveau_causes[] = {codes::k_env_nouveau_bound};
constexpr std::string_view k_nouveau_codes[] = {"driver.module_not_loaded",
                                                "driver.gpu_unbound",
                                                "nvml.",
                                                "cuda.",
                                                "env.device_node_missing",
                                                "gate."};
constexpr std::string_view k_no_driver_causes[] = {codes::k_driver_missing,
                                                   codes::k_driver_module_not_loaded};
constexpr std::string_view k_no_driver_codes[] = {"nvml.", "cuda.", "env.device_node_missing",
                                                  "gate."};
constexpr std::string_view k_mismatch_causes[] = {codes::k_driver_version_mismatch};
constexpr std::string_view k_mismatch_codes[] = {"nvml.", "cuda.system_driver_mismatch",
                                                 "cuda.init_failed", "cuda.unknown_error", "gate."};
constexpr std::string_view k_hidden_causes[] = {codes::k_env_visible_devices_hides_all,
                                                codes::k_env_visible_devices_no_match};
constexpr std::string_view k_hidden_codes[] = {"cuda.no_device", "cuda.no_visible_device", "gate."};
constexpr std::string_view k_node_causes[] = {codes::k_env_device_node_missing,
                                              codes::k_env_device_node_no_access};
constexpr std::string_view k_node_codes[] = {"cuda.unknown_error", "cuda.init_failed",
                                             "cuda.no_device",     "nvml.no_permission",
                                             "nvml.unknown_error", "gate."};
constexpr std::string_view k_lost_causes[] = {codes::k_gpu_lost, codes::k_gpu_reset_required};
constexpr std::string_view k_lost_codes[] = {"log.xid_fatal", "log.fallen_off_bus",
                                             "log.pcie_aer_fatal", "gate."};

/// Most fundamental first: a container without GPUs explains a "missing" driver, a Linux
/// driver inside WSL explains NVML's and CUDA's failures, and so on.
const CauseRule k_rules[] = {
    {k_container_causes, k_container_codes, k_driver_areas, false},
    {k_wsl_causes, k_wsl_codes, k_none, false},
    {k_nouveau_causes, k_nouveau_codes, k_driver_areas, false},
    {k_no_driver_causes, k_no_driver_codes, k_driver_areas, false},
    {k_mismatch_causes, k_mismatch_codes, k_mismatch_areas, false},
    {k_hidden_causes, k_hidden_codes, k_gpu_areas, false},
    {k_node_causes, k_node_codes, k_gpu_areas, false},
    {k_lost_causes, k_lost_codes, k_none, true},
};

bool code_matches(std::string_view code, std::span<const std::string_view> codes) {
  return std::any_of(codes.begin(), codes.end(), [&](std::string_view entry) {
    return !entry.empty() && (entry.ends_with('.') ? code.starts_with(entry) : code == entry);
  });
}

bool counts(const Finding& finding) {
  return !finding.ignored && finding.severity != Severity::info;
}

bool explains(const CauseRule& rule, const RootCause& cause, const CheckResult& result) {
  if (result.check_id == cause.check_id && result.gpu_index == cause.gpu_index) {
    return false;
  }
  if (rule.same_gpu) {
    if (cause.gpu_index && result.gpu_index == cause.gpu_index &&
        (result.status == Status::skip || result.status == Status::fail ||
         result.status == Status::warn || result.status == Status::error)) {
      return true;
    }
  }
  for (const Finding& finding : result.findings) {
    if (counts(finding) && code_matches(finding.code, rule.codes) &&
        (!rule.same_gpu || !finding.gpu_index || finding.gpu_index == cause.gpu_index)) {
      return true;
    }
  }
  // A check skipped because no GPU work was asked for (--quick, a replayed snapshot) is not
  // a consequence of the fault.
  if (result.status == Status::skip && !result.summary.starts_with("--quick") &&
      result.summary.find("replaying a snapshot") == std::string::npos) {
    return std::any_of(
        rule.skipped_areas.begin(), rule.skipped_areas.end(), [&](std::string_view area) {
          return !area.empty() && std::string_view(result.check_id).starts_with(area);
        });
  }
  return false;
}

} // namespace

std::vector<RootCause> find_root_causes(const std::vector<CheckResult>& results) {
  std::vector<RootCause> causes;
  std::set<size_t> explained; // indexes of results already explained by an earlier cause
  for (const CauseRule& rule : k_rules) {
    for (size_t i = 0; i < results.size(); ++i) {
      const CheckResult& holder = results[i];
      if (explained.contains(i)) {
        continue;
      }
      for (const Finding& finding : holder.findings) {
        if (!counts(finding) || !code_matches(finding.code, rule.causes)) {
          continue;
        }
        RootCause cause{finding.code,    holder.check_id, holder.gpu_index,
                        finding.message, finding.remedy,  {}};
        if (rule.same_gpu) {
          cause.gpu_index = finding.gpu_index ? finding.gpu_index : holder.gpu_index;
        }
        std::vector<size_t> consequences;
        for (size_t j = 0; j < results.size(); ++j) {
          if (j != i && explains(rule, cause, results[j])) {
            consequences.push_back(j);
            cause.explains.push_back({results[j].check_id, results[j].gpu_index});
          }
        }
        if (consequences.empty()) {
          continue;
        }
        explained.insert(consequences.begin(), consequences.end());
        causes.push_back(std::move(cause));
      }
    }
  }
  return causes;
}

} // namespace gpucheck
