#include "gpu/host_checks.hpp"

#include <algorithm>
#include <thread>

namespace gpucheck::gpu {

void parallel_for(uint64_t n, const std::function<void(uint64_t, uint64_t)>& body,
                  uint64_t min_parallel) {
  constexpr uint64_t k_max_threads = 8;
  const uint64_t threads =
      std::clamp<uint64_t>(std::thread::hardware_concurrency(), 1, k_max_threads);
  if (threads == 1 || n < min_parallel) {
    body(0, n);
    return;
  }
  std::vector<std::thread> workers;
  const uint64_t step = (n + threads - 1) / threads;
  for (uint64_t lo = 0; lo < n; lo += step) {
    workers.emplace_back(body, lo, std::min(n, lo + step));
  }
  for (std::thread& worker : workers) {
    worker.join();
  }
}

void add_mismatches(Mismatches& total, const Mismatches& mine, std::mutex& lock) {
  if (mine.count != 0) {
    const std::lock_guard<std::mutex> guard(lock);
    total.count += mine.count;
    total.first = std::min(total.first, mine.first);
  }
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

} // namespace gpucheck::gpu
