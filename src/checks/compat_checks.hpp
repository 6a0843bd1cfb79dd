#pragma once
/// The compatibility-matrix checks: one factory per check. Those that are one rule of
/// src/compat/ are rows of one table (compat_rule_checks.cpp: the check's info and its rule);
/// compat.what_runs has its own file.

#include <vector>

#include "compat/rules.hpp"
#include "gpucheck/check.hpp"

namespace gpucheck::checks {

CheckDef compat_driver_runtime_check();
CheckDef compat_driver_cudnn_check();
CheckDef compat_gpu_driver_check();
CheckDef compat_gpu_arch_check();
CheckDef compat_gpu_cudnn_check();
CheckDef compat_toolkit_driver_check();
CheckDef compat_forward_compat_check();
CheckDef compat_what_runs_check();

/// A rule's outcome as the check's one result: skipped when the rule had nothing to judge.
inline std::vector<CheckResult> compat_result(const CheckInfo& info, compat::RuleOutcome outcome) {
  if (outcome.skip_reason) {
    return {skip_result(info, std::move(*outcome.skip_reason))};
  }
  return {make_result(info, std::move(outcome.summary), std::move(outcome.findings))};
}

} // namespace gpucheck::checks
