#include "render/terminal.hpp"

#include <gtest/gtest.h>

namespace gpucheck::render {
namespace {

using Env = std::optional<std::string>;
const Env k_unset = std::nullopt;

TEST(DecideColor, ExplicitChoiceWinsOverEverything) {
  EXPECT_TRUE(decide_color(ColorChoice::always, false, Env("1"), k_unset, Env("dumb")));
  EXPECT_FALSE(decide_color(ColorChoice::never, true, k_unset, Env("1"), Env("xterm")));
}

TEST(DecideColor, AutomaticFollowsTheTerminal) {
  EXPECT_TRUE(decide_color(ColorChoice::automatic, true, k_unset, k_unset, Env("xterm-256color")));
  EXPECT_TRUE(decide_color(ColorChoice::automatic, true, k_unset, k_unset, k_unset));
  EXPECT_FALSE(decide_color(ColorChoice::automatic, false, k_unset, k_unset, Env("xterm")));
  EXPECT_FALSE(decide_color(ColorChoice::automatic, true, k_unset, k_unset, Env("dumb")));
}

TEST(DecideColor, NoColorDisablesWhateverItsValue) {
  EXPECT_FALSE(decide_color(ColorChoice::automatic, true, Env(""), k_unset, Env("xterm")));
  EXPECT_FALSE(decide_color(ColorChoice::automatic, true, Env("0"), k_unset, Env("xterm")));
  // NO_COLOR outranks CLICOLOR_FORCE.
  EXPECT_FALSE(decide_color(ColorChoice::automatic, false, Env("1"), Env("1"), k_unset));
}

TEST(DecideColor, ClicolorForceEnablesWithoutATerminal) {
  EXPECT_TRUE(decide_color(ColorChoice::automatic, false, k_unset, Env("1"), k_unset));
  EXPECT_TRUE(decide_color(ColorChoice::automatic, false, k_unset, Env("yes"), Env("dumb")));
  EXPECT_FALSE(decide_color(ColorChoice::automatic, false, k_unset, Env("0"), k_unset));
  EXPECT_FALSE(decide_color(ColorChoice::automatic, false, k_unset, Env(""), k_unset));
}

} // namespace
} // namespace gpucheck::render

namespace gpucheck::render {
namespace {

TEST(TerminalWidth, TheTerminalThenColumnsThen80) {
  EXPECT_EQ(decide_width(132, std::string("100")), 132);
  EXPECT_EQ(decide_width(std::nullopt, std::string("100")), 100);
  EXPECT_EQ(decide_width(std::nullopt, std::nullopt), 80);
  for (const char* bad : {"", "wide", "-5", "0", "12x", "99999999999999999999"}) {
    EXPECT_EQ(decide_width(std::nullopt, std::string(bad)), 80) << bad;
  }
  EXPECT_EQ(decide_width(0, std::nullopt), 80);
}

} // namespace
} // namespace gpucheck::render
