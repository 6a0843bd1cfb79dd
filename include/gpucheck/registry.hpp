#pragma once
/// THE ordered list of checks (src/core/registry.cpp expands GPUCHECK_CHECKS, then the GPU checks
/// of their own folders join it through add_check()). docs/architecture.md, "Adding a check",
/// says where a new check goes.

#include <span>

#include "gpucheck/check.hpp"

namespace gpucheck {

/// Every check in report order. Its first call also adds the checks' own finding entries
/// (CheckDef::findings) to the catalogue, so it comes before the catalogue is read (main() calls
/// gpu_checks::install(), which calls it).
std::span<const CheckDef> all_checks();

/// Add a check of its own folder (src/gpu_checks/, registry.cpp there) at start-up: it follows
/// the per-GPU active checks (gpu.cudnn), in the order added; `first`: it comes before every
/// active check instead (the checks added so, in the order added).
void add_check(const CheckDef& check, bool first = false);

} // namespace gpucheck
