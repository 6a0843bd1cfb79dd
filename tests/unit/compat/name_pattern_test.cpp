// The linear-time pattern matcher that replaced std::regex for outside text:
// it agrees with std::regex on the matrix's own patterns, refuses what it does not support, and
// stays fast and stack-safe on hostile patterns and huge names.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <random>
#include <regex>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "compat/name_pattern.hpp"

namespace gpucheck::testing {
namespace {

using compat::NamePattern;

bool search(std::string_view pattern, std::string_view text, bool ignore_case = true) {
  Expected<NamePattern> compiled = NamePattern::compile(pattern, ignore_case);
  EXPECT_TRUE(compiled) << pattern << ": " << (compiled ? "" : compiled.error().message);
  return compiled && compiled->search(text);
}

TEST(NamePattern, MatchesLikeRegexSearch) {
  EXPECT_TRUE(search("\\bG?H(100|200)\\b", "NVIDIA H100 80GB HBM3"));
  EXPECT_TRUE(search("\\bG?H(100|200)\\b", "NVIDIA GH200 480GB"));
  EXPECT_FALSE(search("\\bG?H(100|200)\\b", "NVIDIA H1000"));
  EXPECT_TRUE(search("GeForce RTX 40[5-9]0", "NVIDIA geforce rtx 4090"));
  EXPECT_FALSE(search("GeForce RTX 40[5-9]0", "NVIDIA GeForce RTX 4040", false));
  EXPECT_TRUE(search("GTX TITAN$", "NVIDIA GeForce GTX TITAN"));
  EXPECT_FALSE(search("GTX TITAN$", "NVIDIA GeForce GTX TITAN X"));
  EXPECT_TRUE(search("TITAN X \\(Pascal\\)", "NVIDIA TITAN X (Pascal)"));
  EXPECT_TRUE(search("^[0-9]{3}(\\.[0-9]{1,3}){0,2}$", "535.104.05", false));
  EXPECT_FALSE(search("^[0-9]{3}(\\.[0-9]{1,3}){0,2}$", "535.104.05.1", false));
  EXPECT_FALSE(search("^0x[0-9a-fA-F]{4}$", "0x233", false));
  EXPECT_TRUE(search("^https://[^ ]+$", "https://docs.nvidia.com/x", false));
  EXPECT_FALSE(search("^https://[^ ]+$", "https://a b", false));
  EXPECT_TRUE(search("a|", "zzz")); // an empty branch matches anywhere
  EXPECT_TRUE(search("(?:ab)+c", "xxababc"));
  EXPECT_TRUE(search("x\\d\\w\\s.", "x1a b"));
}

// The matrix's own patterns give the answers std::regex gave, on the names in the matrix and on
// random near-misses.
TEST(NamePattern, AgreesWithStdRegexOnTheMatrixPatterns) {
  std::ifstream in(GPUCHECK_SOURCE_DIR "/data/compat/matrix.json");
  std::stringstream text;
  text << in.rdbuf();
  const nlohmann::json matrix = nlohmann::json::parse(text.str());
  std::vector<std::string> names = {"NVIDIA H100 80GB HBM3",
                                    "Tesla V100-SXM2-16GB",
                                    "NVIDIA A100-SXM4-40GB",
                                    "NVIDIA GeForce RTX 3090",
                                    "Quadro RTX 8000",
                                    "NVIDIA L40S",
                                    "Tesla K80",
                                    "Orin (nvgpu)",
                                    "NVIDIA RTX PRO 6000 Blackwell Server Edition"};
  std::mt19937 rng(std::random_device{}());
  const std::string alphabet = "ABGHKLMPTVX0123456789 -()";
  for (int i = 0; i < 300; ++i) {
    std::string name = "NVIDIA ";
    for (int j = 0; j < 8; ++j) {
      name += alphabet[rng() % alphabet.size()];
    }
    names.push_back(name);
  }
  size_t patterns = 0;
  for (const nlohmann::json& gpu : matrix["gpus"]) {
    const std::string pattern = gpu["pattern"].get<std::string>();
    ++patterns;
    const std::regex reference(pattern, std::regex::ECMAScript | std::regex::icase);
    const Expected<NamePattern> ours = NamePattern::compile(pattern, true);
    ASSERT_TRUE(ours) << pattern << ": " << ours.error().message;
    for (const std::string& name : names) {
      EXPECT_EQ(ours->search(name), std::regex_search(name, reference)) << pattern << " / " << name;
    }
  }
  EXPECT_GT(patterns, 30u);
}

TEST(NamePattern, RefusesWhatItDoesNotSupportAndWhatIsTooBig) {
  for (const std::string pattern :
       {"(a", "a)", "[ab", "*a", "a{2,1}", "a{99}", "(?=a)", "(?!a)", "\\1", "a\\", "[z-a]"}) {
    EXPECT_FALSE(NamePattern::compile(pattern, true)) << pattern;
  }
  EXPECT_FALSE(NamePattern::compile(std::string(2000, 'a'), true)); // too long
  EXPECT_FALSE(NamePattern::compile(std::string(40, '(') + "a" + std::string(40, ')'), true));
  EXPECT_FALSE(NamePattern::compile("((((a{32}){32}){32}){32})", true)); // too many steps
}

// What took std::regex 12 s, or overflowed its stack, answers at once here.
TEST(NamePattern, HostilePatternsAndHugeNamesAreFast) {
  const auto started = std::chrono::steady_clock::now();
  EXPECT_FALSE(search("(a|aa)*c", std::string(30, 'a')));
  EXPECT_FALSE(search("(a|aa)*c", std::string(100000, 'a')));
  EXPECT_TRUE(search("(a|aa)*c", std::string(1000, 'a') + "c"));
  EXPECT_FALSE(search("(a*)*b", std::string(4000, 'a')));
  EXPECT_FALSE(search("\\bH100\\b", std::string(300 * 1024, 'H')));
  const std::string nested = std::string(30, '(') + "a|b" + std::string(30, ')') + "*c";
  EXPECT_FALSE(search(nested, std::string(4000, 'a')));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  EXPECT_LT(seconds, 2.0);
}

TEST(NamePattern, OnlyTheFirstBytesOfAHugeTextAreRead) {
  const std::string far = std::string(NamePattern::k_max_text_bytes, ' ') + "H100";
  EXPECT_FALSE(search("H100", far));
  EXPECT_TRUE(search("H100", far.substr(far.size() - 100)));
}

} // namespace
} // namespace gpucheck::testing
