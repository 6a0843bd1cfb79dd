#include "render/wrap.hpp"
#include "support/text_and_processes.hpp"

#include <gtest/gtest.h>

#include <sstream>

namespace gpucheck::render {
namespace {

using testing::lines_of;

TEST(VisibleWidth, CountsCodePointsAndSkipsAnsiSequences) {
  EXPECT_EQ(visible_width("abc"), 3u);
  EXPECT_EQ(visible_width("\x1b[31mFAIL\x1b[0m"), 4u);
  EXPECT_EQ(visible_width("\x1b[1;33mx"), 1u);
  EXPECT_EQ(visible_width("90\xc2\xb0"
                          "C"),
            4u); // "90°C": the degree sign is two bytes, one column
  EXPECT_EQ(visible_width(""), 0u);
}

TEST(Wrap, HangingIndentDoesNotRepeatTheBullet) {
  const std::string out = wrap("alpha beta gamma delta epsilon zeta eta theta", 20, "  - ", "    ");
  EXPECT_EQ(out, "  - alpha beta gamma\n"
                 "    delta epsilon\n"
                 "    zeta eta theta\n");
}

TEST(Wrap, NoLineIsWiderThanTheWidthUnlessOneWordIs) {
  const std::string text = "the loaded kernel module is 570.158.01 but the user-space libraries "
                           "are 570.172.08 /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.570.172.08 "
                           "so reboot";
  for (size_t width : {30u, 41u, 80u}) {
    for (const std::string& line : lines_of(wrap(text, width, "fix: ", "     "))) {
      const bool single_word = line.find(' ', line.find_first_not_of(' ')) == std::string::npos;
      EXPECT_TRUE(line.size() <= width || single_word) << width << ": " << line;
    }
  }
}

TEST(Wrap, LongWordStaysWholeOnItsOwnLine) {
  const std::string path = "/usr/local/lib/python3.12/dist-packages/nvidia/cudnn/lib/libcudnn.so.9";
  EXPECT_EQ(wrap("copy at " + path + " end", 30, "", "  "), "copy at\n  " + path + "\n  end\n");
}

TEST(Wrap, ColourDoesNotChangeWhereLinesBreak) {
  const std::string plain = wrap("FAIL gpu.ecc three errors on this GPU today", 16, "", "  ");
  const std::string coloured =
      wrap("\x1b[31mFAIL\x1b[0m gpu.ecc three errors on this GPU today", 16, "", "  ");
  EXPECT_EQ(lines_of(plain).size(), lines_of(coloured).size());
  EXPECT_EQ(coloured.substr(coloured.find('\n')), plain.substr(plain.find('\n')));
}

TEST(Wrap, KeepsSpacingWithinALineAndDropsItAtABreak) {
  EXPECT_EQ(wrap("PASS  gpu.ecc  ok", 80, "", "      "), "PASS  gpu.ecc  ok\n");
  EXPECT_EQ(wrap("aaaa    bbbb", 6, "", ""), "aaaa\nbbbb\n");
}

TEST(Wrap, NewlineForcesABreakAndEmptyTextGivesThePrefixLine) {
  EXPECT_EQ(wrap("one\ntwo", 80, "> ", "  "), "> one\n  two\n");
  EXPECT_EQ(wrap("", 80, "Gap       ", "          "), "Gap\n");
  EXPECT_EQ(wrap("trailing\n", 80, "", ""), "trailing\n");
}

} // namespace
} // namespace gpucheck::render
