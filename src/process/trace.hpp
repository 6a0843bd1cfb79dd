#pragma once
/// GPUCHECK_TRACE=1: where the time of a run goes, on stderr. Each line is
/// "gpucheck trace +MS.m WHAT", milliseconds since the process started; children report their
/// stage timelines through the parent (docs/performance.md, "Tracing a run").

#include <chrono>
#include <string_view>

namespace gpucheck::process {

/// Whether GPUCHECK_TRACE is set to something other than "" or "0".
bool tracing();

/// Milliseconds from the first call of any trace function (main() calls trace_start()) to `at`.
double trace_ms(std::chrono::steady_clock::time_point at);

/// Mark the start of the process's clock.
void trace_start();

/// One trace line, when tracing.
void trace(std::string_view what);

} // namespace gpucheck::process
