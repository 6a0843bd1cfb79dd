#pragma once
/// Host-side helpers for checking a child's results: loops split across threads, mismatches
/// counted on them, and the median of a sample.
#include <cstdint>
#include <functional>
#include <mutex>
#include <vector>

namespace gpucheck::gpu {

/// Median of a non-empty sample.
double median(std::vector<double> values);

/// Run body(lo, hi) over [0, n) split across up to 8 host threads (fewer on small hosts); on one
/// thread when n is below `min_parallel` (cheap items are not worth a thread).
void parallel_for(uint64_t n, const std::function<void(uint64_t, uint64_t)>& body,
                  uint64_t min_parallel = 1U << 16);

/// Elements i in [0, n) for which bad(i) holds, counted on several host threads.
struct Mismatches {
  uint64_t count = 0;
  uint64_t first = 0; ///< the lowest bad index, when count > 0
};
/// Merge one thread's count into `total` (under a lock).
void add_mismatches(Mismatches& total, const Mismatches& mine, std::mutex& lock);

/// `bad` is a template parameter, not a std::function: it is called once per element (16 Mi
/// times for the ReLU check) and must inline into the loop.
template <typename Bad> Mismatches parallel_mismatches(uint64_t n, const Bad& bad) {
  std::mutex lock;
  Mismatches total;
  total.first = UINT64_MAX;
  parallel_for(n, [&](uint64_t lo, uint64_t hi) {
    Mismatches mine;
    mine.first = UINT64_MAX;
    for (uint64_t i = lo; i < hi; ++i) {
      if (bad(i) && mine.count++ == 0) {
        mine.first = i;
      }
    }
    add_mismatches(total, mine, lock);
  });
  if (total.count == 0) {
    total.first = 0;
  }
  return total;
}

} // namespace gpucheck::gpu
