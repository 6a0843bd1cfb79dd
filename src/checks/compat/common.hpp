#pragma once
/// What the compatibility-matrix checks share. Those that are one rule of src/compat/ are rows of
/// one table (compat_rule_checks.cpp: the check's info and its rule); compat.what_runs has its own
/// file. Their factories are declared in checks.hpp.

#include <vector>

#include "checks/checks.hpp"
#include "compat/rules.hpp"
#include "gpucheck/check.hpp"

namespace gpucheck::checks {

/// A rule's outcome as the check's one result: skipped when the rule had nothing to judge.
inline std::vector<CheckResult> compat_result(const CheckInfo& info, compat::RuleOutcome outcome) {
  if (outcome.skip_reason) {
    return {skip_result(info, std::move(*outcome.skip_reason))};
  }
  return {make_result(info, std::move(outcome.summary), std::move(outcome.findings))};
}

} // namespace gpucheck::checks
