#include "cli/options.hpp"

#include <sstream>

namespace gpucheck::cli {

std::vector<std::string> split_commas(const std::vector<std::string>& items) {
  std::vector<std::string> out;
  for (const std::string& item : items) {
    std::stringstream ss(item);
    std::string part;
    while (std::getline(ss, part, ',')) {
      if (!part.empty()) {
        out.push_back(part);
      }
    }
  }
  return out;
}

} // namespace gpucheck::cli
