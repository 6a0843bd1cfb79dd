#pragma once
/// Markdown renderer: a report to paste into a GitHub or GitLab issue or a support ticket
/// (GitHub Flavored Markdown: tables and a <details> section).

#include <string>
#include <string_view>

#include "gpucheck/model/report.hpp"

namespace gpucheck::render {

/// The report as Markdown: a heading with the verdict and the counts; a summary table with one
/// row per result (check, subject, status, summary); a section per failing, erroring or warning
/// result with each finding's code, cause and remedy; then the inventory (host, driver, GPUs,
/// libraries, toolkit, environment, probe gaps) inside a collapsible <details> element.
/// Pure and deterministic. It does not redact: pass a redacted report (render/redact.hpp).
std::string render_markdown(const Report& report);

/// Text made safe for Markdown inline content, a table cell included: ASCII punctuation that
/// Markdown or HTML would interpret is backslash-escaped (an underscore only where it could
/// start or end emphasis, not inside a word), '&' becomes "&amp;", line breaks become spaces,
/// so the text shows exactly as given.
std::string markdown_escape(std::string_view text);

/// Text as a code span (`text`), with a longer fence when the text holds backticks; in a table
/// cell (in_table) pipes are escaped too, as GFM requires even inside code spans. Empty text
/// gives an empty string.
std::string markdown_code(std::string_view text, bool in_table = false);

} // namespace gpucheck::render
