// Every renderer of outside text (docs/fuzzing.md, issue 34): any bytes planted where the
// machine, its environment or a finding writes text into a report (host name, GPU name and
// serial, driver version, a variable, a finding's message) leave each output format in its own
// syntax. Text, Markdown and the drain reason carry no control character but newline and tab
// (visible_text), JSON is valid, every Prometheus line is a comment or one sample with escaped
// labels, every GitHub line is one workflow command, JUnit holds no character XML forbids.
#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "cli/outputs.hpp"
#include "fuzz_support.hpp"
#include "render/utf8.hpp"

namespace {
using gpucheck::cli::ReportFormat;

[[noreturn]] void fail(ReportFormat format, const std::string& why, std::string_view output) {
  std::fprintf(stderr, "fuzz: %s output: %s\n%.*s\n",
               std::string(gpucheck::cli::to_string(format)).c_str(), why.c_str(),
               static_cast<int>(std::min<size_t>(output.size(), 2000)), output.data());
  std::abort();
}

/// No C0 control character but newline and tab, no DEL, no C1 (U+0080-U+009F), valid UTF-8.
void expect_visible(ReportFormat format, std::string_view out) {
  if (!gpucheck::render::is_valid_utf8(out)) {
    fail(format, "not valid UTF-8", out);
  }
  for (size_t i = 0; i < out.size(); ++i) {
    const auto c = static_cast<unsigned char>(out[i]);
    if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7F) {
      fail(format, "a control character reached it", out);
    }
    if (c == 0xC2 && i + 1 < out.size() && static_cast<unsigned char>(out[i + 1]) >= 0x80 &&
        static_cast<unsigned char>(out[i + 1]) <= 0x9F) {
      fail(format, "a C1 control character reached it", out);
    }
  }
}

bool name_char(char c, bool first) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
         (!first && c >= '0' && c <= '9');
}

/// One line of the Prometheus text format: "# ...", or NAME[{L="V",...}] VALUE.
bool prometheus_line(std::string_view line) {
  if (line.empty() || line.starts_with('#')) {
    return true;
  }
  size_t i = 0;
  if (!name_char(line[0], true)) {
    return false;
  }
  while (i < line.size() && name_char(line[i], i == 0)) {
    ++i;
  }
  if (i < line.size() && line[i] == '{') {
    ++i;
    while (i < line.size() && line[i] != '}') {
      const size_t label = i;
      while (i < line.size() && name_char(line[i], i == label) && line[i] != ':') {
        ++i;
      }
      if (i == label || i + 1 >= line.size() || line[i] != '=' || line[i + 1] != '"') {
        return false;
      }
      i += 2;
      while (i < line.size() && line[i] != '"') {
        if (line[i] == '\\') {
          if (i + 1 >= line.size() ||
              (line[i + 1] != '\\' && line[i + 1] != '"' && line[i + 1] != 'n')) {
            return false;
          }
          ++i;
        }
        ++i;
      }
      if (i >= line.size()) {
        return false;
      }
      ++i; // the closing quote
      if (i < line.size() && line[i] == ',') {
        ++i;
      }
    }
    if (i >= line.size()) {
      return false;
    }
    ++i; // '}'
  }
  if (i >= line.size() || line[i] != ' ') {
    return false;
  }
  const std::string value(line.substr(i + 1));
  if (value == "NaN" || value == "+Inf" || value == "-Inf") {
    return true;
  }
  char* end = nullptr;
  std::strtod(value.c_str(), &end);
  return end != value.c_str() && *end == '\0';
}

void check(ReportFormat format, const std::string& out) {
  switch (format) {
  case ReportFormat::text:
  case ReportFormat::markdown:
  case ReportFormat::reason:
    expect_visible(format, out);
    return;
  case ReportFormat::json:
    if (!nlohmann::json::accept(out)) {
      fail(format, "not valid JSON", out);
    }
    return;
  case ReportFormat::junit:
    if (!gpucheck::render::is_valid_utf8(out)) {
      fail(format, "not valid UTF-8", out);
    }
    for (const char c : out) {
      const auto u = static_cast<unsigned char>(c);
      if (u < 0x20 && c != '\n' && c != '\t' && c != '\r') {
        fail(format, "a character XML 1.0 forbids", out);
      }
    }
    return;
  case ReportFormat::prometheus:
  case ReportFormat::github: {
    size_t start = 0;
    while (start < out.size()) {
      const size_t end = std::min(out.find('\n', start), out.size());
      const std::string_view line = std::string_view(out).substr(start, end - start);
      if (format == ReportFormat::prometheus ? !prometheus_line(line)
                                             : (!line.empty() && !line.starts_with("::"))) {
        fail(format, "a line out of its syntax: " + std::string(line.substr(0, 200)), out);
      }
      if (format == ReportFormat::github && line.find('\r') != std::string_view::npos) {
        fail(format, "a carriage return in a workflow command", out);
      }
      start = end + 1;
    }
    return;
  }
  }
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(gpucheck::fuzz::as_text(data, size));
  gpucheck::SystemSnapshot snapshot = gpucheck::fuzz::recorded_snapshot();
  snapshot.host.hostname = text;
  snapshot.host.kernel = text;
  snapshot.nvml.driver_version = text;
  snapshot.environment.variables["CUDA_VISIBLE_DEVICES"] = text;
  if (!snapshot.gpus.empty()) {
    snapshot.gpus.front().name = text;
    snapshot.gpus.front().serial = text;
  }
  gpucheck::Report report = gpucheck::fuzz::report_of(snapshot);
  for (gpucheck::CheckResult& result : report.results) {
    for (gpucheck::Finding& finding : result.findings) {
      finding.message += text; // messages quote outside text (paths, versions, names)
    }
  }
  const gpucheck::render::TextStyle style;
  for (const ReportFormat format :
       {ReportFormat::text, ReportFormat::json, ReportFormat::markdown, ReportFormat::junit,
        ReportFormat::prometheus, ReportFormat::github, ReportFormat::reason}) {
    check(format, gpucheck::cli::render_report(report, format, style));
  }
  return 0;
}
