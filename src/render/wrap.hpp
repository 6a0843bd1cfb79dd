#pragma once
/// Word wrapping for the text renderer: hanging indents, ANSI-aware widths.

#include <cstddef>
#include <string>
#include <string_view>

namespace gpucheck::render {

/// Columns `text` takes on a terminal: UTF-8 code points, with ANSI SGR sequences
/// ("\x1b[...m") counting zero.
size_t visible_width(std::string_view text);

/// Greedy word wrap to `width` columns. The first line starts with `first_prefix`, every later
/// line with `rest_prefix` (a hanging indent). Spaces between words are kept as written within a
/// line and dropped at a break; '\n' in `text` forces a break. A word wider than the room left
/// stays whole on its own line (a long path is never split). Every line ends with '\n'; empty
/// `text` gives `first_prefix` alone on a line, with trailing spaces removed.
std::string wrap(std::string_view text, size_t width, std::string_view first_prefix,
                 std::string_view rest_prefix);

} // namespace gpucheck::render
