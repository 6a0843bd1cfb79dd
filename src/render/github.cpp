#include "render/github.hpp"

#include <fmt/format.h>

#include "gpucheck/plural.hpp"
#include "render/utf8.hpp"

namespace gpucheck::render {

namespace {

std::string_view command_for(Severity severity) {
  return severity == Severity::warn ? "warning" : "error";
}

/// "gpu.ecc_uncorrected (gpu.ecc, GPU 3)", unescaped.
std::string title(std::string_view code, const CheckResult& result, std::optional<int> gpu) {
  std::string text = fmt::format("{} ({}", code, result.check_id);
  if (gpu) {
    text += fmt::format(", GPU {}", *gpu);
  }
  return text + ")";
}

std::string line(std::string_view command, std::string_view title_text, std::string_view message) {
  return fmt::format("::{} title={}::{}\n", command, github_escape_property(title_text),
                     github_escape_data(message));
}

} // namespace

std::string github_escape_data(std::string_view text) {
  std::string out;
  for (const char c : visible_utf8(text)) {
    if (c == '%') {
      out += "%25";
    } else if (c == '\r') {
      out += "%0D";
    } else if (c == '\n') {
      out += "%0A";
    } else {
      out += c;
    }
  }
  return out;
}

std::string github_escape_property(std::string_view text) {
  std::string out;
  for (const char c : github_escape_data(text)) {
    if (c == ':') {
      out += "%3A";
    } else if (c == ',') {
      out += "%2C";
    } else {
      out += c;
    }
  }
  return out;
}

std::string render_github(const Report& report) {
  std::string out;
  for (const CheckResult& result : report.results) {
    bool annotated = false;
    for (const Finding& f : result.findings) {
      if (f.ignored || f.severity == Severity::info) {
        continue;
      }
      std::string message = f.message;
      if (!f.remedy.empty()) {
        message += "\nfix: " + f.remedy;
      }
      out += line(command_for(f.severity),
                  title(f.code, result, f.gpu_index ? f.gpu_index : result.gpu_index), message);
      annotated = true;
    }
    if (!annotated && (result.status == Status::fail || result.status == Status::error)) {
      out += line("error", title(to_string(result.status), result, result.gpu_index),
                  result.summary.empty() ? result.title : result.summary);
    }
  }
  const ReportSummary& sum = report.summary;
  out += line("notice", "gpucheck",
              fmt::format("Result: {} ({} passed, {}, {} failed, {}, {} skipped)",
                          to_string(sum.overall), sum.pass, plural(sum.warn, "warning"), sum.fail,
                          plural(sum.error, "error"), sum.skip));
  return out;
}

} // namespace gpucheck::render
