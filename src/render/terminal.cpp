#include "render/terminal.hpp"

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

} // namespace gpucheck::render
