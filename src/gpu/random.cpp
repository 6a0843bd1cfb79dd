#include "gpu/random.hpp"

#include <chrono>
#include <random>

#include "kernels/gpucheck_values.h"

namespace gpucheck::gpu {

uint64_t SplitMix64::next() {
  uint64_t z = (m_state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

float SplitMix64::uniform(float lo, float hi) {
  const double unit = static_cast<double>(next() >> 11) * 0x1.0p-53;
  return static_cast<float>(lo + (hi - lo) * unit);
}

uint64_t fresh_seed() {
  std::random_device device;
  return (static_cast<uint64_t>(device()) << 32) ^ device() ^
         static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
}

uint32_t pattern_word(uint64_t index, uint32_t seed) {
  return gpucheck_pattern_word(index, seed);
}

} // namespace gpucheck::gpu
