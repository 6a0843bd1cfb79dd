#include "cli/clock.hpp"

#include <cstdlib>

#include "gpucheck/model/utc_time.hpp"

namespace gpucheck::cli {

std::chrono::sys_seconds report_now() {
  if (const char* epoch = std::getenv("SOURCE_DATE_EPOCH")) {
    char* end = nullptr;
    const long long value = std::strtoll(epoch, &end, 10);
    if (end != epoch && *end == '\0') {
      return std::chrono::sys_seconds(std::chrono::seconds(value));
    }
  }
  return std::chrono::time_point_cast<std::chrono::seconds>(std::chrono::system_clock::now());
}

std::string report_timestamp() {
  return format_utc_time(report_now());
}

} // namespace gpucheck::cli
