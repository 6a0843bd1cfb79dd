#pragma once
/// The memory test's patterns as data (src/gpu/memtest.cpp runs them on the GPU): each
/// pattern is a list of states, each state one value per word (gpucheck_memtest_word() in
/// kernels/gpucheck_values.h, shared with the kernels). A host reference checker over a word
/// array lets the tests prove the patterns find a flipped bit without a GPU.

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "kernels/gpucheck_values.h"

namespace gpucheck::gpu::memtest {

struct State {
  uint32_t kind = gpucheck_mt_constant; ///< GpucheckMemtestKind
  uint32_t a = 0;
  uint32_t b = 0;
};

struct Pattern {
  std::string name; ///< walking_ones, walking_zeros, moving_inversions, random, address, modulo20
  std::vector<State> states;
};

/// One round of every pattern, in the order they run: the ones that cover the most kinds of
/// fault in the fewest passes first (a short --duration still runs them), `seed` for the random
/// data and the random moving inversion.
std::vector<Pattern> round(uint32_t seed);

/// The value of word `index` (at `address`) in `state`.
uint32_t word_value(const State& state, uint64_t index, uint64_t address);

/// A bad word the host checker found.
struct BadWord {
  uint64_t index = 0;
  uint32_t expected = 0;
  uint32_t observed = 0;
};

/// Fill `words` (word 0 is word `first` of the tested range, at `address`) with `state`.
void write_words(std::span<uint32_t> words, uint64_t first, uint64_t address, const State& state);
/// The words of `words` that do not hold `state` (the host twin of gpucheck_memtest_check).
std::vector<BadWord> check_words(std::span<const uint32_t> words, uint64_t first, uint64_t address,
                                 const State& state);

} // namespace gpucheck::gpu::memtest
