#include "probes/nvidia_version.hpp"

#include <cctype>
#include <sstream>

namespace gpucheck::probes {

bool looks_like_driver_version(std::string_view word) {
  const size_t dot = word.find('.');
  if (dot == std::string_view::npos || dot < 3 || word.back() == '.') {
    return false;
  }
  for (char c : word) {
    if (c != '.' && std::isdigit(static_cast<unsigned char>(c)) == 0) {
      return false;
    }
  }
  return true;
}

std::optional<NvrmVersion> parse_nvrm_version(std::string_view text) {
  std::istringstream lines{std::string(text)};
  std::string line;
  while (std::getline(lines, line)) {
    const size_t tag = line.find("NVRM version:");
    if (tag == std::string::npos) {
      continue;
    }
    const std::string rest = line.substr(tag + 13);
    NvrmVersion out;
    out.flavor = rest.find("Open Kernel Module") != std::string::npos ? "open" : "proprietary";
    std::istringstream words(rest);
    std::string word;
    while (words >> word) {
      if (looks_like_driver_version(word)) {
        out.version = word;
        return out;
      }
    }
  }
  return std::nullopt;
}

} // namespace gpucheck::probes
