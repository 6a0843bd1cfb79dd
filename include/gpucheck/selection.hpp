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
/// `skip` prefix.
bool is_selected(std::string_view id, const Selection& selection);

/// Whether one --only/--skip pattern matches a check id: whole components ("gpu" matches
/// "gpu.ecc", not "gpux"), or the first words of its last one ("gpu.pcie" matches
/// "gpu.pcie_link", "gpu.p" matches nothing of "gpu.p2p").
bool pattern_matches(std::string_view id, std::string_view pattern);

/// The selection as is_selected() reads it, given every check id: a pattern that is an id or
/// whole components of one stays as it is ("gpu.compute" selects gpu.compute, not
/// gpu.compute_mode); one that names the first words of ids is replaced by those ids
/// ("gpu.pcie": gpu.pcie_link); one that matches nothing stays, for the caller to refuse.
Selection resolve_selection(const Selection& given, const std::vector<std::string>& ids);

} // namespace gpucheck
