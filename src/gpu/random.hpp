#pragma once
/// Host-side random numbers for the children's inputs, and the copy pattern's hash.
#include <cstdint>

namespace gpucheck::gpu {

/// SplitMix64: fast deterministic host-side random numbers for test inputs.
class SplitMix64 {
public:
  explicit SplitMix64(uint64_t seed) : m_state(seed) {}
  uint64_t next();
  /// Uniform in [lo, hi).
  float uniform(float lo, float hi);

private:
  uint64_t m_state;
};

/// A seed that differs run to run (fresh inputs every time).
uint64_t fresh_seed();

/// The copy pattern word for (index, seed): the same hash as the gpucheck_*_pattern kernels.
uint32_t pattern_word(uint64_t index, uint32_t seed);

} // namespace gpucheck::gpu
