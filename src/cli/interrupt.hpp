#pragma once
/// Ctrl-C, SIGTERM, SIGHUP and SIGQUIT during a run: the first one stops the GPU work cleanly (the
/// long level's works report what they did, the rest stop) and the report of what ran is still
/// written; the exit code is then 128 + the signal. A second one ends gpucheck at once (default
/// action).

#include <atomic>
#include <functional>
#include <thread>

namespace gpucheck::cli {

class InterruptWatch {
public:
  /// Installs the handlers; `on_signal` runs once, on a thread of its own, at the first signal.
  explicit InterruptWatch(std::function<void(int)> on_signal);
  InterruptWatch(const InterruptWatch&) = delete;
  InterruptWatch& operator=(const InterruptWatch&) = delete;
  /// Restores the default handlers and stops the thread.
  ~InterruptWatch();
  /// The signal that came (SIGINT, SIGTERM, SIGHUP, SIGQUIT), or 0.
  [[nodiscard]] int signal() const { return m_signal.load(); }

private:
  std::function<void(int)> m_on_signal;
  std::atomic<int> m_signal{0};
  int m_pipe[2] = {-1, -1};
  std::thread m_thread;
};

} // namespace gpucheck::cli
