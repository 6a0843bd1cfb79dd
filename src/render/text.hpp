#pragma once
/// Human text renderer: readable at 80 columns, colour only when asked for.

#include <string>

#include "gpucheck/model/report.hpp"

namespace gpucheck::render {

struct TextStyle {
  bool color = false;   ///< ANSI colours (decided by decide_color in render/terminal.hpp)
  int width = 80;       ///< wrap column; values below 40 are taken as 80
  bool verbose = false; ///< list every fact and every result in full
};

/// The report as text: a header of host, driver, GPU and library facts; then failing, erroring
/// and warning results with their findings and remedies; then one line per passing result and
/// per skipped result (with its reason); then a summary line with the counts and the verdict.
/// Pure and deterministic: the same report and style give the same bytes. Colour changes only
/// ANSI sequences, never the layout.
std::string render_text(const Report& report, const TextStyle& style);

} // namespace gpucheck::render
