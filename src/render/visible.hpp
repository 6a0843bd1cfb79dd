#pragma once
/// Outside text made harmless for a terminal: the text, Markdown and reason renderers (and the
/// bundle's report.txt and report.md) show a report whose every string passed through
/// visible_text() (gpucheck/model/text.hpp). JSON, JUnit, Prometheus and GitHub annotations
/// escape in their own syntax and get the report as it is.

#include "gpucheck/model/report.hpp"

namespace gpucheck::render {

/// `report` with every string, and every key of its maps (environment variables' names), shown
/// through visible_text(): control characters and bytes that are not UTF-8 become escapes.
Report visible_report(const Report& report);

} // namespace gpucheck::render
