#pragma once
/// GitHub Actions workflow commands (::error, ::warning, ::notice): each problem becomes an
/// annotation on the run's summary page (docs/ci.md, "GitHub Actions").

#include <string>
#include <string_view>

#include "gpucheck/model/report.hpp"

namespace gpucheck::render {

/// One line per finding of severity warn (::warning), fail or error (::error) that --ignore did
/// not name, titled with its code, check and GPU, its message and remedy as the text; one
/// ::error line for a failing or erroring result that has no such finding (its summary); then
/// one ::notice line with the verdict and the counts. Info findings, passes and skips write
/// nothing else. Pure and deterministic.
std::string render_github(const Report& report);

/// Text for a workflow command's message: %, CR and LF as %25, %0D, %0A; bytes that are not
/// UTF-8 as the visible text "\xNN".
std::string github_escape_data(std::string_view text);

/// Text for a workflow command's property (title=...): as github_escape_data, and ':' and ','
/// as %3A and %2C.
std::string github_escape_property(std::string_view text);

} // namespace gpucheck::render
