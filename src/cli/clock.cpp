#include "cli/clock.hpp"

#include <cstdlib>
#include <ctime>
#include <string>

namespace gpucheck::cli {

std::string report_timestamp() {
  std::time_t now = std::time(nullptr);
  if (const char* epoch = std::getenv("SOURCE_DATE_EPOCH")) {
    char* end = nullptr;
    const long long value = std::strtoll(epoch, &end, 10);
    if (end != epoch && *end == '\0') {
      now = static_cast<std::time_t>(value);
    }
  }
  std::tm tm{};
  ::gmtime_r(&now, &tm);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buffer;
}

} // namespace gpucheck::cli
