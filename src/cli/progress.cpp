#include "cli/progress.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <cstdio>

namespace gpucheck::cli {

std::string progress_text(const engine::Scheduler::Progress& progress) {
  const double elapsed = std::min(progress.elapsed_s, progress.total_s);
  return fmt::format("gpucheck: long level: {} on {} GPU{}, {:.0f} s of {:.0f} s", progress.phase,
                     progress.gpus, progress.gpus == 1 ? "" : "s", std::floor(elapsed),
                     progress.total_s);
}

ProgressLine::ProgressLine(Source source, bool enabled) : m_source(std::move(source)) {
  if (!enabled) {
    return;
  }
  m_thread = std::thread([this] {
    while (!m_stop.load()) {
      if (const std::optional<engine::Scheduler::Progress> now = m_source(); now && now->gpus > 0) {
        std::fprintf(stderr, "\r\033[K%s", progress_text(*now).c_str());
        std::fflush(stderr);
        m_drawn = true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(250));
    }
  });
}

ProgressLine::~ProgressLine() {
  m_stop.store(true);
  if (m_thread.joinable()) {
    m_thread.join();
  }
  if (m_drawn) {
    std::fputs("\r\033[K", stderr);
    std::fflush(stderr);
  }
}

} // namespace gpucheck::cli
