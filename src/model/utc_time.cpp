#include "gpucheck/model/utc_time.hpp"

#include <ctime>

namespace gpucheck {

std::optional<std::chrono::sys_seconds> parse_utc_time(std::string_view text) {
  std::tm tm{};
  const std::string copy(text);
  const char* end = ::strptime(copy.c_str(), "%Y-%m-%dT%H:%M:%SZ", &tm);
  if (end == nullptr || *end != '\0') {
    return std::nullopt;
  }
  return std::chrono::sys_seconds(std::chrono::seconds(::timegm(&tm)));
}

std::string format_utc_time(std::chrono::sys_seconds time) {
  const std::time_t seconds = static_cast<std::time_t>(time.time_since_epoch().count());
  std::tm tm{};
  ::gmtime_r(&seconds, &tm);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buffer;
}

} // namespace gpucheck
