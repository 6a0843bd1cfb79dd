#pragma once
/// Runs the selected checks over a snapshot; an escaped exception becomes an `error` result for
/// that check alone.

#include <span>
#include <string>
#include <vector>

#include "gpucheck/check.hpp"

namespace gpucheck {

struct Selection {
  std::vector<std::string> only; ///< id prefixes; empty = all
  std::vector<std::string> skip; ///< id prefixes
};

/// Whether a check id is selected: it matches an `only` prefix (or `only` is empty) and no
/// `skip` prefix. A prefix matches at a dot boundary ("gpu" matches "gpu.ecc", not "gpux").
bool is_selected(std::string_view id, const Selection& selection);

std::vector<CheckResult> run_checks(std::span<const CheckDef> checks, const CheckContext& context,
                                    const Selection& selection);

} // namespace gpucheck
