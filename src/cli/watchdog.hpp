#pragma once
/// The run's watchdog: whatever its children, the turns between runs or the driver do, a run
/// writes its report and exits within a bound it knows from the start (run_time_bound(): the
/// probes' limits, the turn wait and the GPU work's limit; docs/architecture.md, "Nothing waits
/// forever"). Past the bound it stops what still runs, so that the report is written with what
/// finished; if the run has still not ended a grace later (a bug in gpucheck itself), it says so
/// on stderr and exits with the internal-error code.

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

namespace gpucheck::cli {

/// The bound for a run: four times the probe children's limit (they run side by side, a few in
/// sequence), the GPU engine's bound (turn wait and work limit; zero without GPU work), and 30 s
/// for everything gpucheck does itself.
std::chrono::milliseconds run_time_bound(std::chrono::milliseconds probe_timeout,
                                         std::chrono::milliseconds engine_bound);

class Watchdog {
public:
  /// `bound` is asked again every quarter second (the engine's bound is known once it knows its
  /// GPUs); `on_expiry` runs once, on the watchdog's thread, when the bound has passed;
  /// `grace` later, with the run still not over, `on_stuck` runs (it should end the process).
  Watchdog(std::function<std::chrono::milliseconds()> bound, std::function<void()> on_expiry,
           std::chrono::milliseconds grace, std::function<void()> on_stuck);
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;
  /// The run is over: the watchdog stops.
  ~Watchdog();

private:
  std::mutex m_lock;
  std::condition_variable m_changed;
  bool m_over = false; ///< under m_lock
  std::thread m_thread;
};

} // namespace gpucheck::cli
