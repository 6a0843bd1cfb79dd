#include "engine/turns.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

namespace gpucheck::engine {

namespace {
using Clock = std::chrono::steady_clock;
}

std::vector<size_t> turn_order(const std::vector<std::string>& names) {
  std::vector<size_t> order;
  for (size_t g = 0; g < names.size(); ++g) {
    const bool first_of_name =
        !names[g].empty() && std::find(names.begin(), names.begin() + static_cast<long>(g),
                                       names[g]) == names.begin() + static_cast<long>(g);
    if (first_of_name) {
      order.push_back(g);
    }
  }
  std::sort(order.begin(), order.end(),
            [&names](size_t a, size_t b) { return names[a] < names[b]; });
  return order;
}

void Turns::take(const std::vector<std::string>& names, std::chrono::milliseconds limit,
                 const std::atomic<bool>* stop,
                 const std::function<void(const TurnWait&)>& on_wait) {
  const size_t count = names.size();
  m_lock_of.resize(count);
  std::iota(m_lock_of.begin(), m_lock_of.end(), size_t{0});
  for (size_t g = 0; g < count; ++g) {
    const auto first = std::find(names.begin(), names.end(), names[g]);
    m_lock_of[g] = static_cast<size_t>(first - names.begin());
  }
  m_locks.resize(count);
  m_released.assign(count, false);
  m_outcomes.assign(count, TurnOutcome{});
  const auto asked = Clock::now();
  const auto until = asked + limit;
  bool waiting_over = false; // past the limit, or stopped: the rest are tried once
  for (const size_t g : turn_order(names)) {
    TurnOutcome& outcome = m_outcomes[g];
    outcome.needed = true;
    GpuLock lock = GpuLock::try_acquire(names[g]);
    if (!lock.held() && lock.busy()) {
      outcome.other_pid = GpuLock::holder(names[g]);
      waiting_over = waiting_over || Clock::now() >= until || (stop != nullptr && stop->load());
      if (!waiting_over) {
        if (on_wait) {
          on_wait(TurnWait{
              g, outcome.other_pid,
              std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now())});
        }
        const auto began = Clock::now();
        lock = GpuLock::acquire(
            names[g], std::chrono::duration_cast<std::chrono::milliseconds>(until - began), stop);
        outcome.waited =
            std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - began);
        waiting_over = !lock.held() && lock.busy();
        if (waiting_over && !outcome.other_pid) {
          outcome.other_pid = GpuLock::holder(names[g]); // a later holder, still known
        }
      }
    }
    // A socket error (no abstract namespace here) is no other run: the GPU is tested.
    outcome.held = lock.held() || !lock.busy();
    m_locks[g] = std::move(lock);
  }
  for (size_t g = 0; g < count; ++g) {
    if (m_lock_of[g] != g) {
      m_outcomes[g] = m_outcomes[m_lock_of[g]];
    }
  }
}

bool Turns::held(size_t gpu) const {
  if (gpu >= m_outcomes.size()) {
    return false;
  }
  const TurnOutcome& outcome = m_outcomes[gpu];
  return !outcome.needed || (outcome.held && !m_released[gpu]);
}

void Turns::release(size_t gpu) {
  if (gpu >= m_released.size() || m_released[gpu]) {
    return;
  }
  m_released[gpu] = true;
  const size_t lock = m_lock_of[gpu];
  for (size_t g = 0; g < m_released.size(); ++g) {
    if (m_lock_of[g] == lock && !m_released[g]) {
      return; // another GPU of the same name still tests under it
    }
  }
  m_locks[lock].release();
}

std::string wait_text(std::chrono::milliseconds wait) {
  const double seconds = std::chrono::duration<double>(wait).count();
  return wait.count() % 1000 == 0 || seconds >= 10 ? fmt::format("{:.0f} s", seconds)
                                                   : fmt::format("{:.1f} s", seconds);
}

std::chrono::milliseconds default_turn_wait(size_t gpus) {
  // Long enough for several whole standard runs on this many GPUs to go first (their times:
  // docs/performance.md, "Overlapping runs").
  return std::chrono::milliseconds(30000 + 15000 * static_cast<int64_t>(std::max<size_t>(gpus, 1)));
}

} // namespace gpucheck::engine
