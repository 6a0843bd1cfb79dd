// Any bytes in, a valid report out: bytes that are not UTF-8 become visible "\xNN" text in JSON.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <random>
#include <string>
#include <vector>

#include "render/json.hpp"
#include "render/utf8.hpp"

namespace gpucheck::testing {
namespace {

using render::is_valid_utf8;
using render::visible_utf8;

TEST(Utf8, ValidTextIsKeptAsItIs) {
  for (const std::string& text :
       std::vector<std::string>{"", "plain", "caf\xc3\xa9", "\xe2\x82\xac 5", "\xf0\x9f\x98\x80",
                                "\xef\xbf\xbd", std::string("nul\0byte", 8)}) {
    EXPECT_TRUE(is_valid_utf8(text)) << text;
    EXPECT_EQ(visible_utf8(text), text);
  }
}

TEST(Utf8, InvalidBytesBecomeVisibleHex) {
  EXPECT_EQ(visible_utf8("0\xff"), "0\\xff");
  EXPECT_EQ(visible_utf8("\xc3"), "\\xc3");                            // truncated sequence
  EXPECT_EQ(visible_utf8("\xc0\xaf"), "\\xc0\\xaf");                   // overlong '/'
  EXPECT_EQ(visible_utf8("\xed\xa0\x80"), "\\xed\\xa0\\x80");          // a surrogate
  EXPECT_EQ(visible_utf8("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80"); // above U+10FFFF
  EXPECT_EQ(visible_utf8("a\x80"
                         "caf\xc3\xa9"),
            "a\\x80caf\xc3\xa9");
}

TEST(Utf8, RandomBytesAlwaysGiveValidUtf8) {
  std::mt19937 rng(std::random_device{}());
  for (int round = 0; round < 200; ++round) {
    std::string text(static_cast<size_t>(rng() % 64), '\0');
    for (char& c : text) {
      c = static_cast<char>(rng() & 0xff);
    }
    const std::string shown = visible_utf8(text);
    EXPECT_TRUE(is_valid_utf8(shown));
    EXPECT_NO_THROW((void)nlohmann::json(shown).dump());
  }
}

TEST(Utf8, JsonDumpOfBadStringsAndKeysNeverThrowsAndStaysVisible) {
  nlohmann::json doc = {{"variables", {{"CUDA_VISIBLE_DEVICES", "0\xff"}, {"K\xfe", "v"}}},
                        {"list", {"ok", "\xc3"}}};
  EXPECT_THROW((void)doc.dump(), nlohmann::json::type_error); // what nlohmann does by itself
  const std::string text = render::dump_valid_json(doc);
  const nlohmann::json back = nlohmann::json::parse(text);
  EXPECT_EQ(back["variables"]["CUDA_VISIBLE_DEVICES"], "0\\xff");
  EXPECT_EQ(back["variables"]["K\\xfe"], "v");
  EXPECT_EQ(back["list"][1], "\\xc3");
}

} // namespace
} // namespace gpucheck::testing
