#pragma once
/// The reports' time stamps: ISO 8601 UTC to the second, "2026-11-21T12:00:00Z".

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace gpucheck {

/// The time "2026-11-21T12:00:00Z" names; nullopt for anything else (another shape, a zone
/// other than Z, trailing bytes, a field out of range).
std::optional<std::chrono::sys_seconds> parse_utc_time(std::string_view text);

/// "2026-11-21T12:00:00Z".
std::string format_utc_time(std::chrono::sys_seconds time);

} // namespace gpucheck
