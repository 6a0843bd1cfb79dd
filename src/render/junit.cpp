#include "render/junit.hpp"

#include <fmt/format.h>

#include <chrono>

#include "render/utf8.hpp"

namespace gpucheck::render {

namespace {

std::string seconds(std::chrono::milliseconds duration) {
  return fmt::format("{:.3f}", static_cast<double>(duration.count()) / 1000.0);
}

/// The testcase's name: the check id, with the GPU for a per-GPU result ("gpu.ecc[GPU 3]"), so
/// GitLab's and GitHub's lists, which show the name, tell thirty results apart.
std::string testcase_name(const CheckResult& result) {
  return result.gpu_index ? fmt::format("{}[GPU {}]", result.check_id, *result.gpu_index)
                          : result.check_id;
}

/// The testcase's class: the check's area ("gpu" of gpu.ecc), as Jenkins groups them.
std::string_view area(const CheckResult& result) {
  const std::string_view id = result.check_id;
  return id.substr(0, id.find('.'));
}

/// The finding that explains a failing or erroring result: the first of the result's own
/// severity, else the first of any.
const Finding* leading_finding(const CheckResult& result) {
  const Severity wanted = result.status == Status::error ? Severity::error : Severity::fail;
  for (const Finding& f : result.findings) {
    if (f.severity == wanted) {
      return &f;
    }
  }
  return result.findings.empty() ? nullptr : &result.findings.front();
}

/// Findings as plain text: "CODE (severity): cause\n  remedy: ...".
std::string findings_text(const CheckResult& result) {
  std::string text;
  for (const Finding& f : result.findings) {
    text += fmt::format("{} ({}): {}\n", f.code, to_string(f.severity), f.message);
    if (!f.remedy.empty()) {
      text += fmt::format("  remedy: {}\n", f.remedy);
    }
  }
  return text;
}

/// What the testcase adds in <system-out>: for a pass or a warning the summary and findings;
/// for a failure or an error only the metrics (its <failure>/<error> has the rest); for a skip
/// nothing (<skipped> has the reason).
std::string system_out(const CheckResult& result) {
  std::string text;
  if (result.status == Status::skip) {
    return text;
  }
  if (result.status == Status::warn) {
    text += "WARN: this check passed with warnings\n";
  }
  if (result.status == Status::pass || result.status == Status::warn) {
    if (!result.summary.empty()) {
      text += result.summary + "\n";
    }
    text += findings_text(result);
  }
  for (const Metric& metric : result.metrics) {
    text += fmt::format("{} = {:g} {}{}\n", metric.name, metric.value, metric.unit,
                        metric.note.empty() ? "" : " (" + metric.note + ")");
  }
  return text;
}

} // namespace

std::string xml_escape(std::string_view raw, bool attribute) {
  // XML must be UTF-8 here: bytes that are not become visible "\xNN" text first.
  const std::string valid = visible_utf8(raw);
  const std::string_view text = valid;
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    // U+FFFE and U+FFFF (EF BF BE/BF) are UTF-8 but not XML characters.
    if (c == '\xEF' && i + 2 < text.size() && text[i + 1] == '\xBF' &&
        (text[i + 2] == '\xBE' || text[i + 2] == '\xBF')) {
      out += fmt::format("\\u{:04X}", text[i + 2] == '\xBE' ? 0xFFFE : 0xFFFF);
      i += 2;
      continue;
    }
    const auto u = static_cast<unsigned char>(c);
    switch (c) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '"':
      out += attribute ? "&quot;" : "\"";
      break;
    case '\'':
      out += attribute ? "&apos;" : "'";
      break;
    case '\n':
      out += attribute ? "&#10;" : "\n";
      break;
    case '\r':
      out += "&#13;";
      break;
    case '\t':
      out += attribute ? "&#9;" : "\t";
      break;
    default:
      // Control characters are not allowed in XML 1.0: written as visible "\xNN" text.
      if (u < 0x20 || u == 0x7f) {
        out += fmt::format("\\x{:02x}", u);
      } else {
        out += c;
      }
    }
  }
  return out;
}

std::string render_junit(const Report& report) {
  const ReportSummary& sum = report.summary;
  std::chrono::milliseconds total{0};
  for (const CheckResult& result : report.results) {
    total += result.duration;
  }
  const int tests = static_cast<int>(report.results.size());
  const std::string counts =
      fmt::format(R"(tests="{}" failures="{}" errors="{}")", tests, sum.fail, sum.error);

  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += fmt::format("<testsuites name=\"gpucheck\" {} time=\"{}\">\n", counts, seconds(total));
  // One suite per host: merged JUnit files of a fleet keep their nodes apart.
  const std::string suite = report.snapshot.host.hostname.empty()
                                ? std::string("gpucheck")
                                : "gpucheck on " + report.snapshot.host.hostname;
  out += fmt::format("  <testsuite name=\"{}\" {} skipped=\"{}\" time=\"{}\"",
                     xml_escape(suite, true), counts, sum.skip, seconds(total));
  if (!report.context.generated_at.empty()) {
    out += fmt::format(" timestamp=\"{}\"", xml_escape(report.context.generated_at, true));
  }
  if (!report.snapshot.host.hostname.empty()) {
    out += fmt::format(" hostname=\"{}\"", xml_escape(report.snapshot.host.hostname, true));
  }
  out += ">\n";
  out += "    <properties>\n";
  const auto property = [&out](std::string_view name, std::string_view value) {
    out +=
        fmt::format("      <property name=\"{}\" value=\"{}\"/>\n", name, xml_escape(value, true));
  };
  property("gpucheck.version", report.context.tool_version);
  property("gpucheck.mode", report.context.mode);
  property("gpucheck.matrix_version", report.context.matrix_version);
  property("gpucheck.overall", to_string(sum.overall));
  property("gpucheck.warnings", std::to_string(sum.warn));
  out += "    </properties>\n";

  for (const CheckResult& result : report.results) {
    out += fmt::format("    <testcase classname=\"{}\" name=\"{}\" time=\"{}\">\n",
                       xml_escape(area(result), true), xml_escape(testcase_name(result), true),
                       seconds(result.duration));
    if (result.status == Status::fail || result.status == Status::error) {
      const char* element = result.status == Status::fail ? "failure" : "error";
      const Finding* lead = leading_finding(result);
      const std::string message =
          lead != nullptr ? fmt::format("{}: {}", lead->code, lead->message) : result.summary;
      const std::string type = lead != nullptr ? lead->code : result.check_id;
      std::string body = result.summary.empty() ? "" : result.summary + "\n";
      body += findings_text(result);
      out += fmt::format("      <{} message=\"{}\" type=\"{}\">{}</{}>\n", element,
                         xml_escape(message, true), xml_escape(type, true), xml_escape(body, false),
                         element);
    } else if (result.status == Status::skip) {
      out += fmt::format("      <skipped message=\"{}\"/>\n", xml_escape(result.summary, true));
    }
    const std::string text = system_out(result);
    if (!text.empty()) {
      out += fmt::format("      <system-out>{}</system-out>\n", xml_escape(text, false));
    }
    out += "    </testcase>\n";
  }
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

} // namespace gpucheck::render
