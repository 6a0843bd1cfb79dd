#pragma once
/// Root causes: one fault often explains several results (no driver explains every skipped GPU
/// check; a kernel-module/library mismatch explains NVML's and cuInit's failures; a
/// CUDA_VISIBLE_DEVICES that hides every GPU explains "no device"). The report leads with them,
/// each with the results that are its consequences, so a person fixes the one thing first.

#include <vector>

#include "gpucheck/model/report.hpp"

namespace gpucheck {

/// The root causes among `results`, most fundamental first: each is a warn-or-worse finding of
/// a known cause code that explains at least one other result, and is not itself explained by
/// an earlier cause. Pure; ignored findings are not causes.
std::vector<RootCause> find_root_causes(const std::vector<CheckResult>& results);

} // namespace gpucheck
