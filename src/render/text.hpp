#pragma once
/// Human text renderer: readable at 80 columns, colour only when asked for.

#include <string>

#include "gpucheck/model/report.hpp"

namespace gpucheck::render {

struct TextStyle {
  bool color = false;   ///< ANSI colours
  int width = 80;       ///< wrap column
  bool verbose = false; ///< also list passing checks' details and the full inventory
};

std::string render_text(const Report& report, const TextStyle& style);

} // namespace gpucheck::render
