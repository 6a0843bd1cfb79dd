#include "gpu/memtest_patterns.hpp"

namespace gpucheck::gpu::memtest {

namespace {
State constant(uint32_t value) {
  return {gpucheck_mt_constant, value, 0};
}
} // namespace

std::vector<Pattern> round(uint32_t seed) {
  std::vector<Pattern> out;
  // Moving inversions (all zeros, all ones, back): every bit both ways.
  out.push_back({"moving_inversions", {constant(0U), constant(~0U), constant(0U)}});
  // Random data and its complement: data-dependent faults, and a dropped or misplaced write.
  out.push_back({"random", {{gpucheck_mt_random, seed, 0U}, {gpucheck_mt_random, seed, ~0U}}});
  // Each word holds its own address, then its complement: address-line faults (aliasing).
  out.push_back({"address", {{gpucheck_mt_address, 0U, 0U}, {gpucheck_mt_address, 0U, ~0U}}});
  // Walking ones, walking zeros: one bit set (cleared) at each of 32 places.
  Pattern ones{"walking_ones", {}};
  Pattern zeros{"walking_zeros", {}};
  for (uint32_t bit = 0; bit < 32; ++bit) {
    ones.states.push_back(constant(1U << bit));
    zeros.states.push_back(constant(~(1U << bit)));
  }
  out.push_back(std::move(ones));
  out.push_back(std::move(zeros));
  // Modulo-20: a value at every 20th word, its complement between, for each of 20 offsets
  // (faults that depend on neighbouring words' values).
  Pattern modulo{"modulo20", {}};
  for (uint32_t offset = 0; offset < 20; ++offset) {
    modulo.states.push_back({gpucheck_mt_modulo, offset, seed | 1U});
  }
  out.push_back(std::move(modulo));
  // Moving inversions of a random value.
  out.push_back({"moving_inversions", {constant(seed), constant(~seed), constant(seed)}});
  return out;
}

uint32_t word_value(const State& state, uint64_t index, uint64_t address) {
  return gpucheck_memtest_word(state.kind, index, address, state.a, state.b);
}

void write_words(std::span<uint32_t> words, uint64_t first, uint64_t address, const State& state) {
  for (uint64_t i = 0; i < words.size(); ++i) {
    words[i] = word_value(state, first + i, address + 4 * i);
  }
}

std::vector<BadWord> check_words(std::span<const uint32_t> words, uint64_t first, uint64_t address,
                                 const State& state) {
  std::vector<BadWord> bad;
  for (uint64_t i = 0; i < words.size(); ++i) {
    const uint32_t want = word_value(state, first + i, address + 4 * i);
    if (words[i] != want) {
      bad.push_back({first + i, want, words[i]});
    }
  }
  return bad;
}

} // namespace gpucheck::gpu::memtest
