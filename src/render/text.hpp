#pragma once
/// Human text renderer: wrapped at the terminal's width (80 in files), colour only when asked for.

#include <string>

#include "gpucheck/model/report.hpp"

namespace gpucheck::render {

struct TextStyle {
  bool color = false;   ///< ANSI colours (decided by decide_color in render/terminal.hpp)
  int width = 80;       ///< wrap column; values below 40 are taken as 80
  bool verbose = false; ///< list every fact and every result in full
  bool quiet = false;   ///< only the root causes, the problems and the summary line (-q)
};

/// The report as text: a header of host, driver, GPU and library facts; then failing, erroring
/// and warning results with their findings and remedies; then one line per passing check
/// (per-GPU results joined) and one line counting the skipped results (verbose:
/// every result in full, each skip with its reason); then a summary line with the counts and the
/// verdict. Quiet: no header and no passing or skipped results.
/// Pure and deterministic: the same report and style give the same bytes. Colour changes only
/// ANSI sequences, never the layout.
std::string render_text(const Report& report, const TextStyle& style);

} // namespace gpucheck::render
