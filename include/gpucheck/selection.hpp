#pragma once
/// Which checks a run selects (`--only`, `--skip`): the runner and the GPU engine both ask.

#include <string>
#include <string_view>
#include <vector>

namespace gpucheck {

struct Selection {
  std::vector<std::string> only; ///< id prefixes; empty = all
  std::vector<std::string> skip; ///< id prefixes
};

/// Whether a check id is selected: it matches an `only` prefix (or `only` is empty) and no
/// `skip` prefix. A prefix matches at a dot boundary ("gpu" matches "gpu.ecc", not "gpux").
bool is_selected(std::string_view id, const Selection& selection);

} // namespace gpucheck
