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

Expected<Level> resolve_level(const RunOptions& options) {
  Level level = options.quick ? Level::quick : Level::standard;
  if (options.level_name) {
    const std::optional<Level> named = level_named(*options.level_name);
    if (!named) {
      return Error{"--level: expected quick, standard or long, got '" + *options.level_name + "'"};
    }
    if (options.quick && *named != Level::quick) {
      return Error{"--quick is --level quick: it cannot be used with --level " +
                   *options.level_name};
    }
    level = *named;
  }
  if (level != Level::long_ && options.duration_s) {
    return Error{"--duration sets the long level's timed parts: use it with --level long"};
  }
  if (level != Level::long_ && options.force) {
    return Error{"--force lets the long level run on GPUs that other processes use: use it with "
                 "--level long"};
  }
  return level;
}

} // namespace gpucheck::cli
