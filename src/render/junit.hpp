#pragma once
/// JUnit XML renderer, for CI systems that show test results (Jenkins, GitLab, GitHub Actions
/// reporters). Valid against the JUnit schema Jenkins reads (tests/data/junit.xsd).

#include <string>
#include <string_view>

#include "gpucheck/model/report.hpp"

namespace gpucheck::render {

/// One <testsuites> holding one <testsuite name="gpucheck"> with one <testcase> per result:
/// classname = the check id, name = its subject ("system" or "GPU N"), time in seconds.
///   fail  -> <failure message="CODE: cause" type="CODE"> with every finding, cause and remedy
///   error -> <error message=... type=...> likewise
///   skip  -> <skipped message="the reason"/>
///   warn  -> a passing testcase whose <system-out> starts with "WARN" and lists the findings
///   pass  -> a passing testcase whose <system-out> has the summary
/// <system-out> also holds the metrics and, for pass and warn, the findings. The suite's
/// tests/failures/errors/skipped count the results by status. Pure and deterministic.
std::string render_junit(const Report& report);

/// Text made safe for XML character data and attribute values: & < > " ' as entities, tab,
/// newline and carriage return as character references in attributes, and characters XML 1.0
/// does not allow (other control characters, e.g. from an ANSI escape) replaced by '?'.
std::string xml_escape(std::string_view text, bool attribute);

} // namespace gpucheck::render
