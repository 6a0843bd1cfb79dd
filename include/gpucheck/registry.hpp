#pragma once
/// THE ordered list of checks. Adding a check: its file in src/checks/, one line in
/// src/core/registry.cpp, its findings in the catalogue, its test, and docs/checks.md.

#include <span>

#include "gpucheck/check.hpp"

namespace gpucheck {

std::span<const CheckDef> all_checks();

} // namespace gpucheck
