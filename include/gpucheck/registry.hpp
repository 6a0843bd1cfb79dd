#pragma once
/// THE ordered list of checks (src/core/registry.cpp expands GPUCHECK_CHECKS). Adding a check:
/// its file in src/checks/, one line in GPUCHECK_CHECKS (src/checks/checks.hpp), its findings in
/// the catalogue (src/findings/), its test, and docs/checks.md.

#include <span>

#include "gpucheck/check.hpp"

namespace gpucheck {

std::span<const CheckDef> all_checks();

} // namespace gpucheck
