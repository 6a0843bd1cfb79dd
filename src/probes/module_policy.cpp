#include "probes/module_policy.hpp"

#include <sstream>

namespace gpucheck::probes {

std::optional<bool> parse_secure_boot_efivar(std::string_view bytes) {
  if (bytes.size() < 5) {
    return std::nullopt;
  }
  const auto value = static_cast<unsigned char>(bytes[4]);
  if (value > 1) {
    return std::nullopt;
  }
  return value == 1;
}

std::string parse_lockdown(std::string_view text) {
  const size_t open = text.find('[');
  const size_t close = text.find(']', open == std::string_view::npos ? 0 : open);
  if (open == std::string_view::npos || close == std::string_view::npos) {
    return {};
  }
  return std::string(text.substr(open + 1, close - open - 1));
}

std::vector<std::string> parse_modprobe_blacklist(std::string_view text) {
  std::vector<std::string> out;
  std::istringstream lines{std::string(text)};
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string command, module, program;
    if (!(words >> command >> module) || command.starts_with('#') ||
        !module.starts_with("nvidia")) {
      continue;
    }
    bool blocks = command == "blacklist";
    if (command == "install" && (words >> program)) {
      blocks = program == "/bin/false" || program == "/bin/true" || program == "/usr/bin/false" ||
               program == "/usr/bin/true";
    }
    if (blocks) {
      const size_t first = line.find_first_not_of(" \t");
      const size_t last = line.find_last_not_of(" \t\r");
      out.push_back(line.substr(first, last - first + 1));
    }
  }
  return out;
}

} // namespace gpucheck::probes
