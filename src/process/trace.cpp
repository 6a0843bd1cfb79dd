#include "process/trace.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace gpucheck::process {

namespace {
std::chrono::steady_clock::time_point origin() {
  static const std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  return start;
}
} // namespace

bool tracing() {
  static const bool on = [] {
    const char* value = std::getenv("GPUCHECK_TRACE");
    return value != nullptr && *value != '\0' && std::string_view(value) != "0";
  }();
  return on;
}

double trace_ms(std::chrono::steady_clock::time_point at) {
  return std::chrono::duration<double, std::milli>(at - origin()).count();
}

void trace_start() {
  (void)origin();
}

void trace(std::string_view what) {
  if (!tracing()) {
    return;
  }
  const std::string line =
      fmt::format("gpucheck trace +{:.1f} {}\n", trace_ms(std::chrono::steady_clock::now()), what);
  std::fputs(line.c_str(), stderr);
}

} // namespace gpucheck::process
