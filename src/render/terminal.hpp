#pragma once
/// Terminal facts for renderers: whether to colour (NO_COLOR, CLICOLOR_FORCE, TTY) and the width.

#include <optional>
#include <string>

namespace gpucheck::render {

enum class ColorChoice { automatic, always, never };

/// The colour decision: --color=always/never wins; else NO_COLOR (any value) disables,
/// CLICOLOR_FORCE (non-empty, not "0") enables, else colour iff stdout is a TTY and TERM != dumb.
bool decide_color(ColorChoice choice, bool stdout_is_tty,
                  const std::optional<std::string>& no_color,
                  const std::optional<std::string>& clicolor_force,
                  const std::optional<std::string>& term);

/// The text width for stdout: the terminal's own (`tty_columns`, from TIOCGWINSZ), else $COLUMNS
/// when it is a number, else 80.
int decide_width(std::optional<int> tty_columns, const std::optional<std::string>& columns);

} // namespace gpucheck::render
