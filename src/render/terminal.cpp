#include "render/terminal.hpp"

#include <algorithm>
#include <charconv>

namespace gpucheck::render {

bool decide_color(ColorChoice choice, bool stdout_is_tty,
                  const std::optional<std::string>& no_color,
                  const std::optional<std::string>& clicolor_force,
                  const std::optional<std::string>& term) {
  if (choice == ColorChoice::always) {
    return true;
  }
  if (choice == ColorChoice::never) {
    return false;
  }
  if (no_color.has_value()) {
    return false; // https://no-color.org: any value, even empty, disables colour
  }
  if (clicolor_force && !clicolor_force->empty() && *clicolor_force != "0") {
    return true;
  }
  return stdout_is_tty && !(term && *term == "dumb");
}

int decide_width(std::optional<int> tty_columns, const std::optional<std::string>& columns) {
  constexpr int k_default_width = 80;
  constexpr int k_max_width = 10000;
  if (tty_columns && *tty_columns > 0) {
    return std::min(*tty_columns, k_max_width);
  }
  if (columns) {
    int value = 0;
    const char* begin = columns->data();
    const char* end = begin + columns->size();
    const auto [ptr, ec] = std::from_chars(begin, end, value);
    if (ec == std::errc() && ptr == end && value > 0) {
      return std::min(value, k_max_width);
    }
  }
  return k_default_width;
}

} // namespace gpucheck::render
