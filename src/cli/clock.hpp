#pragma once
/// The report clock: now, or SOURCE_DATE_EPOCH when set (reproducible output for tests).

#include <string>

namespace gpucheck::cli {

/// ISO 8601 UTC, e.g. "2026-11-21T10:00:00Z".
std::string report_timestamp();

} // namespace gpucheck::cli
