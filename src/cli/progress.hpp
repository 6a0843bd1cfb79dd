#pragma once
/// The long level's progress line on stderr (phase, GPUs, elapsed of total), redrawn in place
/// while stderr is a terminal; nothing otherwise.

#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <thread>

#include "engine/scheduler.hpp"

namespace gpucheck::cli {

/// "gpucheck: long level: burn on 2 GPUs, 12 s of 60 s".
std::string progress_text(const engine::Scheduler::Progress& progress);

class ProgressLine {
public:
  using Source = std::function<std::optional<engine::Scheduler::Progress>()>;
  /// Starts redrawing every quarter second when `enabled`.
  ProgressLine(Source source, bool enabled);
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;
  /// Stops and clears the line.
  ~ProgressLine();

private:
  Source m_source;
  std::atomic<bool> m_stop{false};
  std::thread m_thread;
  bool m_drawn = false;
};

} // namespace gpucheck::cli
