#pragma once
/// Runs the selected checks over a snapshot; an escaped exception becomes an `error` result for
/// that check alone.

#include <span>
#include <string>
#include <vector>

#include "gpucheck/check.hpp"
#include "gpucheck/selection.hpp"

namespace gpucheck {

std::vector<CheckResult> run_checks(std::span<const CheckDef> checks, const CheckContext& context,
                                    const Selection& selection);

} // namespace gpucheck
