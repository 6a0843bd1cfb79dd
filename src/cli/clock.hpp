#pragma once
/// The report clock: now, or SOURCE_DATE_EPOCH when set (reproducible output for tests).

#include <chrono>
#include <string>

namespace gpucheck::cli {

/// Now, or SOURCE_DATE_EPOCH (seconds since 1970) when it is set to a number.
std::chrono::sys_seconds report_now();

/// report_now() as ISO 8601 UTC, e.g. "2026-11-21T10:00:00Z".
std::string report_timestamp();

} // namespace gpucheck::cli
