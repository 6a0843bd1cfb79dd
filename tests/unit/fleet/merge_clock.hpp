#pragma once
// The merge clock of the fleet tests: 14:30 on the day the golden reports were made (at 12:00).

#include <chrono>

#include "gpucheck/model/utc_time.hpp"

namespace gpucheck::fleet {

/// "Now" for the merges of the fleet tests, which judge the golden reports' age against it.
inline const std::chrono::sys_seconds k_now = parse_utc_time("2026-11-21T14:30:00Z").value();

} // namespace gpucheck::fleet
