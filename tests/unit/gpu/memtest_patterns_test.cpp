// The memory test's patterns on the host: what each state writes, that a round covers every
// classic pattern, and that the reference checker finds a flipped bit (or a word written to the
// wrong address) in every state of every pattern.

#include "gpu/memtest_patterns.hpp"

#include <gtest/gtest.h>

#include <set>
#include <vector>

namespace gpucheck::gpu::memtest {
namespace {

TEST(MemtestPatterns, ARoundRunsEveryClassicPattern) {
  const std::vector<Pattern> patterns = round(0x1234U);
  std::set<std::string> names;
  for (const Pattern& p : patterns) {
    names.insert(p.name);
    EXPECT_FALSE(p.states.empty()) << p.name;
  }
  EXPECT_EQ(names, (std::set<std::string>{"walking_ones", "walking_zeros", "moving_inversions",
                                          "random", "address", "modulo20"}));
}

TEST(MemtestPatterns, StateValues) {
  EXPECT_EQ(word_value({gpucheck_mt_constant, 0xA5A5A5A5U, 0}, 7, 0x1000), 0xA5A5A5A5U);
  // Address in address: the word's own address, or its complement.
  EXPECT_EQ(word_value({gpucheck_mt_address, 0, 0}, 3, 0x7F00DEADBEE0ULL), 0xDEADBEE0U);
  EXPECT_EQ(word_value({gpucheck_mt_address, 0, ~0U}, 3, 0x7F00DEADBEE0ULL), ~0xDEADBEE0U);
  // Modulo-20: the value at every 20th word from the offset, its complement elsewhere.
  const State modulo{gpucheck_mt_modulo, 3, 0x0F0F0F0FU};
  EXPECT_EQ(word_value(modulo, 3, 0), 0x0F0F0F0FU);
  EXPECT_EQ(word_value(modulo, 23, 0), 0x0F0F0F0FU);
  EXPECT_EQ(word_value(modulo, 4, 0), 0xF0F0F0F0U);
  // Random data: the pattern hash, and its exact complement.
  const State random{gpucheck_mt_random, 99, 0};
  const State inverse{gpucheck_mt_random, 99, ~0U};
  EXPECT_EQ(word_value(random, 12345, 0), ~word_value(inverse, 12345, 0));
  EXPECT_NE(word_value(random, 1, 0), word_value(random, 2, 0));
}

TEST(MemtestPatterns, WalkingOnesSetEachBitOnce) {
  for (const Pattern& p : round(1)) {
    if (p.name != "walking_ones" && p.name != "walking_zeros") {
      continue;
    }
    ASSERT_EQ(p.states.size(), 32U);
    uint32_t seen = 0;
    for (const State& s : p.states) {
      const uint32_t bit = p.name == "walking_ones" ? s.a : ~s.a;
      EXPECT_EQ(__builtin_popcount(bit), 1);
      seen |= bit;
    }
    EXPECT_EQ(seen, ~0U);
  }
}

TEST(MemtestPatterns, TheCheckerFindsAFlippedBitInEveryState) {
  constexpr uint64_t k_first = 1000;
  constexpr uint64_t k_address = 0x7F0000000000ULL;
  std::vector<uint32_t> words(4096);
  for (const Pattern& p : round(0xBEEFU)) {
    for (const State& s : p.states) {
      write_words(words, k_first, k_address, s);
      EXPECT_TRUE(check_words(words, k_first, k_address, s).empty()) << p.name;
      words[777] ^= 1U << 13;
      const std::vector<BadWord> bad = check_words(words, k_first, k_address, s);
      ASSERT_EQ(bad.size(), 1U) << p.name;
      EXPECT_EQ(bad[0].index, k_first + 777);
      EXPECT_EQ(bad[0].expected ^ bad[0].observed, 1U << 13);
    }
  }
}

TEST(MemtestPatterns, AddressAndRandomFindAMisplacedWrite) {
  // A word that landed one place off (an address-line fault) holds a neighbour's value: the
  // constant patterns cannot see it, the address and random ones do.
  constexpr uint64_t k_address = 0x100000ULL;
  std::vector<uint32_t> words(256);
  for (const State s : {State{gpucheck_mt_address, 0, 0}, State{gpucheck_mt_random, 5, 0}}) {
    write_words(words, 0, k_address, s);
    words[10] = words[11];
    EXPECT_EQ(check_words(words, 0, k_address, s).size(), 1U);
  }
  write_words(words, 0, k_address, State{gpucheck_mt_constant, 0x55555555U, 0});
  words[10] = words[11];
  EXPECT_TRUE(
      check_words(words, 0, k_address, State{gpucheck_mt_constant, 0x55555555U, 0}).empty());
}

} // namespace
} // namespace gpucheck::gpu::memtest
