#include "cli/watchdog.hpp"

#include <utility>

namespace gpucheck::cli {

std::chrono::milliseconds run_time_bound(std::chrono::milliseconds probe_timeout,
                                         std::chrono::milliseconds engine_bound) {
  return 4 * probe_timeout + engine_bound + std::chrono::milliseconds(30000);
}

Watchdog::Watchdog(std::function<std::chrono::milliseconds()> bound,
                   std::function<void()> on_expiry, std::chrono::milliseconds grace,
                   std::function<void()> on_stuck) {
  const auto started = std::chrono::steady_clock::now();
  m_thread = std::thread([this, started, bound = std::move(bound), on_expiry = std::move(on_expiry),
                          grace, on_stuck = std::move(on_stuck)] {
    std::unique_lock<std::mutex> guard(m_lock);
    while (!m_over && std::chrono::steady_clock::now() < started + bound()) {
      m_changed.wait_for(guard, std::chrono::milliseconds(250));
    }
    if (m_over) {
      return;
    }
    guard.unlock();
    on_expiry();
    guard.lock();
    if (!m_changed.wait_for(guard, grace, [this] { return m_over; })) {
      on_stuck();
    }
  });
}

Watchdog::~Watchdog() {
  {
    const std::lock_guard<std::mutex> guard(m_lock);
    m_over = true;
  }
  m_changed.notify_all();
  if (m_thread.joinable()) {
    m_thread.join();
  }
}

} // namespace gpucheck::cli
