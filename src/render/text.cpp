#include "render/text.hpp"

#include <fmt/format.h>

#include <string_view>

namespace gpucheck::render {

namespace {

std::string_view color_of(Status status) {
  switch (status) {
  case Status::pass:
    return "\x1b[32m";
  case Status::warn:
    return "\x1b[33m";
  case Status::fail:
    return "\x1b[31m";
  case Status::skip:
    return "\x1b[2m";
  case Status::error:
    return "\x1b[35m";
  }
  return "";
}

std::string label(Status status, const TextStyle& style) {
  std::string text = fmt::format("{:<5}", to_string(status));
  for (char& c : text) {
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  if (!style.color) {
    return text;
  }
  return fmt::format("{}{}\x1b[0m", color_of(status), text);
}

/// Greedy word wrap with a hanging indent.
std::string wrap(std::string_view text, size_t width, std::string_view indent) {
  std::string out;
  std::string line(indent);
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find(' ', pos);
    if (end == std::string_view::npos) {
      end = text.size();
    }
    std::string_view word = text.substr(pos, end - pos);
    if (line.size() > indent.size() && line.size() + 1 + word.size() > width) {
      out += line + "\n";
      line = std::string(indent);
    }
    if (line.size() > indent.size()) {
      line += ' ';
    }
    line += word;
    pos = end + 1;
  }
  if (line.size() > indent.size()) {
    out += line + "\n";
  }
  return out;
}

} // namespace

std::string render_text(const Report& report, const TextStyle& style) {
  const auto width = static_cast<size_t>(style.width > 40 ? style.width : 80);
  std::string out;
  out += fmt::format("gpucheck {} ({})\n", report.context.tool_version, report.context.mode);
  const SystemSnapshot& s = report.snapshot;
  if (s.kernel_module.version) {
    out += fmt::format("driver {}", *s.kernel_module.version);
  } else {
    out += "driver: not loaded";
  }
  if (s.cuda.driver_version) {
    out += fmt::format(", CUDA driver API {}.{}", *s.cuda.driver_version / 1000,
                       (*s.cuda.driver_version % 1000) / 10);
  }
  out += fmt::format(", {} GPU(s)\n", s.gpus.size());
  for (const GpuInfo& gpu : s.gpus) {
    std::string line = fmt::format("  GPU {}: {}", gpu.index, gpu.name);
    if (gpu.cc_major) {
      line += fmt::format(", sm_{}{}", *gpu.cc_major, gpu.cc_minor.value_or(0));
    }
    if (gpu.memory_total_bytes) {
      line +=
          fmt::format(", {:.0f} GiB", static_cast<double>(*gpu.memory_total_bytes) / (1u << 30));
    }
    out += line + "\n";
  }
  out += "\n";
  for (const CheckResult& result : report.results) {
    std::string head = fmt::format("{} {}", label(result.status, style), result.check_id);
    if (result.gpu_index) {
      head += fmt::format(" [GPU {}]", *result.gpu_index);
    }
    out += head + "\n";
    if (!result.summary.empty()) {
      out += wrap(result.summary, width, "      ");
    }
    for (const Finding& finding : result.findings) {
      out += wrap(
          fmt::format("{} ({}): {}", finding.code, to_string(finding.severity), finding.message),
          width, "      - ");
      if (!finding.remedy.empty()) {
        out += wrap(fmt::format("fix: {}", finding.remedy), width, "        ");
      }
    }
    for (const Metric& metric : result.metrics) {
      out += fmt::format("      {} = {:.4g} {}{}\n", metric.name, metric.value, metric.unit,
                         metric.note.empty() ? "" : fmt::format(" ({})", metric.note));
    }
  }
  const ReportSummary& sum = report.summary;
  out += fmt::format("\nresult: {}  ({} pass, {} warn, {} fail, {} skip, {} error)\n",
                     label(sum.overall, style), sum.pass, sum.warn, sum.fail, sum.skip, sum.error);
  return out;
}

} // namespace gpucheck::render
