// visible_text(): text from outside shown on a terminal can never move its cursor, retitle it,
// open a link or write its clipboard; printable text, newlines, tabs and UTF-8 stay as they are.
#include <gtest/gtest.h>

#include <string>

#include "gpucheck/model/text.hpp"

namespace gpucheck {
namespace {

TEST(VisibleText, ControlCharactersBecomeEscapes) {
  // A window title (OSC 0), a clear screen, a cursor move over the line before, an OSC 8 link
  // and an OSC 52 clipboard write.
  EXPECT_EQ(visible_text("\x1b]0;TITLE\x07\x1b[2J"), "\\x1b]0;TITLE\\x07\\x1b[2J");
  EXPECT_EQ(visible_text("H100\r\x1b[1A\x1b[2K"), "H100\\x0d\\x1b[1A\\x1b[2K");
  EXPECT_EQ(visible_text("\x1b]52;c;cm0gLXJm\x1b\\"), "\\x1b]52;c;cm0gLXJm\\x1b\\");
  EXPECT_EQ(visible_text(std::string("a\0b\x7f", 4)), "a\\x00b\\x7f");
  // C1 controls as UTF-8 (U+009B is a CSI on some terminals), and bytes that are not UTF-8.
  EXPECT_EQ(visible_text("\xc2\x9b"
                         "31m"),
            "\\u009b31m");
  EXPECT_EQ(visible_text("\x9b"
                         "31m"),
            "\\x9b31m");
  EXPECT_EQ(visible_text("\xed\xa0\x80"), "\\xed\\xa0\\x80"); // a surrogate
  EXPECT_EQ(visible_text("\xc0\xaf"), "\\xc0\\xaf");          // overlong
  // Bytes 0xf5-0xff lead no sequence (found by fuzz_render: 0xfe 0x80 0xaf was passed raw).
  EXPECT_EQ(visible_text("\xfe\x80\xaf"), "\\xfe\\x80\\xaf");
  EXPECT_EQ(visible_text("\xf5\x80\x80\x80"), "\\xf5\\x80\\x80\\x80");
  EXPECT_EQ(visible_text("\xff"), "\\xff");
}

TEST(VisibleText, PrintableTextNewlinesTabsAndUtf8AreKept) {
  for (const std::string text :
       {"NVIDIA H200", "line one\nline two\tcolumn", "Grüße, 温度 85 °C, 🚀", ""}) {
    EXPECT_EQ(visible_text(text), text);
  }
}

} // namespace
} // namespace gpucheck
