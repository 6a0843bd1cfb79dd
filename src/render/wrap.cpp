#include "render/wrap.hpp"

#include <algorithm>
#include <vector>

namespace gpucheck::render {

namespace {

void trim_right(std::string& line) {
  while (!line.empty() && line.back() == ' ') {
    line.pop_back();
  }
}

struct Word {
  size_t gap = 0; ///< spaces before the word in the text, kept when it stays on the same line
  std::string_view text;
};

std::vector<Word> split_words(std::string_view paragraph) {
  std::vector<Word> words;
  size_t pos = 0;
  while (pos < paragraph.size()) {
    const size_t start = paragraph.find_first_not_of(' ', pos);
    if (start == std::string_view::npos) {
      break;
    }
    size_t end = paragraph.find(' ', start);
    if (end == std::string_view::npos) {
      end = paragraph.size();
    }
    words.push_back({start - pos, paragraph.substr(start, end - start)});
    pos = end;
  }
  return words;
}

} // namespace

size_t visible_width(std::string_view text) {
  size_t width = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == 0x1b && i + 1 < text.size() && text[i + 1] == '[') {
      // Skip the whole control sequence up to its final byte (0x40..0x7e).
      i += 2;
      while (i < text.size() && !(static_cast<unsigned char>(text[i]) >= 0x40 &&
                                  static_cast<unsigned char>(text[i]) <= 0x7e)) {
        ++i;
      }
      continue;
    }
    if ((c & 0xC0) != 0x80) { // count lead bytes only: one per code point
      ++width;
    }
  }
  return width;
}

std::string wrap(std::string_view text, size_t width, std::string_view first_prefix,
                 std::string_view rest_prefix) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) {
    text.remove_suffix(1);
  }
  std::string out;
  std::string line(first_prefix);
  size_t line_width = visible_width(first_prefix);
  bool line_has_word = false;
  const size_t rest_width = visible_width(rest_prefix);

  const auto flush = [&] {
    trim_right(line);
    out += line;
    out += '\n';
    line = std::string(rest_prefix);
    line_width = rest_width;
    line_has_word = false;
  };

  size_t pos = 0;
  bool first_paragraph = true;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) {
      end = text.size();
    }
    if (!first_paragraph) {
      flush();
    }
    first_paragraph = false;
    for (const Word& word : split_words(text.substr(pos, end - pos))) {
      const size_t word_width = visible_width(word.text);
      const size_t gap = std::max<size_t>(word.gap, 1);
      if (line_has_word && line_width + gap + word_width > width) {
        flush();
      }
      if (line_has_word) {
        line.append(gap, ' ');
        line_width += gap;
      }
      line += word.text;
      line_width += word_width;
      line_has_word = true;
    }
    pos = end + 1;
  }
  flush();
  return out;
}

} // namespace gpucheck::render
