#include "cli/outputs.hpp"

#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "cli/output_file.hpp"
#include "findings/catalog.hpp"
#include "gpucheck/model/utc_time.hpp"
#include "gpucheck/suggest.hpp"
#include "probes/sysroot.hpp"
#include "render/github.hpp"
#include "render/json.hpp"
#include "render/junit.hpp"
#include "render/markdown.hpp"
#include "render/prometheus.hpp"
#include "render/reason.hpp"
#include "render/visible.hpp"

namespace gpucheck::cli {

namespace {

std::optional<ReportFormat> format_from_extension(std::string_view path) {
  const std::string extension = std::filesystem::path(path).extension().string();
  if (extension == ".txt") {
    return ReportFormat::text;
  }
  if (extension == ".json") {
    return ReportFormat::json;
  }
  if (extension == ".md" || extension == ".markdown") {
    return ReportFormat::markdown;
  }
  if (extension == ".xml") {
    return ReportFormat::junit;
  }
  if (extension == ".prom") {
    return ReportFormat::prometheus;
  }
  return std::nullopt;
}

} // namespace

std::string_view to_string(ReportFormat format) {
  switch (format) {
  case ReportFormat::text:
    return "text";
  case ReportFormat::json:
    return "json";
  case ReportFormat::markdown:
    return "markdown";
  case ReportFormat::junit:
    return "junit";
  case ReportFormat::prometheus:
    return "prometheus";
  case ReportFormat::github:
    return "github";
  case ReportFormat::reason:
    return "reason";
  }
  return "text";
}

std::optional<ReportFormat> format_from_string(std::string_view text) {
  for (ReportFormat format :
       {ReportFormat::text, ReportFormat::json, ReportFormat::markdown, ReportFormat::junit,
        ReportFormat::prometheus, ReportFormat::github, ReportFormat::reason}) {
    if (text == to_string(format)) {
      return format;
    }
  }
  if (text == "md") {
    return ReportFormat::markdown;
  }
  return std::nullopt;
}

namespace {
const std::vector<std::string>& format_names() {
  static const std::vector<std::string> names{"text",  "json",   "markdown", "md",
                                              "junit", "github", "reason",   "prometheus"};
  return names;
}

/// Whether the text before an --output's first ':' reads as a format's name (letters only) that
/// is none: `jsn:x.xml` is a typo, not a file of that name. "./jsn:x.xml" writes such a file.
bool looks_like_a_format(std::string_view word) {
  // One letter is a drive ("c:/r.json"), not a format.
  return word.size() >= 2 && word.size() <= 16 &&
         std::all_of(word.begin(), word.end(), [](char c) { return c >= 'a' && c <= 'z'; });
}
} // namespace

Expected<OutputTarget> parse_output(std::string_view spec) {
  OutputTarget target;
  const size_t colon = spec.find(':');
  std::optional<ReportFormat> named;
  if (colon != std::string_view::npos) {
    const std::string_view prefix = spec.substr(0, colon);
    named = format_from_string(prefix);
    if (!named && looks_like_a_format(prefix)) {
      return Error{fmt::format("--output '{}': '{}' is not a format{}; to write a file of that "
                               "name, say ./{}",
                               spec, prefix, did_you_mean_words(prefix, format_names()), spec)};
    }
  }
  target.path = std::string(named ? spec.substr(colon + 1) : spec);
  if (target.path.empty()) {
    return Error{fmt::format("--output '{}' names no file", spec)};
  }
  if (named) {
    target.format = *named;
    return target;
  }
  const std::optional<ReportFormat> guessed = format_from_extension(target.path);
  if (!guessed) {
    return Error{fmt::format("--output '{}': say which format, e.g. --output json:{} (formats: "
                             "text, json, markdown, junit, prometheus, github, reason; or end "
                             "the name in .txt, .json, .md, .xml, .prom)",
                             spec, spec)};
  }
  target.format = *guessed;
  return target;
}

bool has_format_prefix(std::string_view spec) {
  const size_t colon = spec.find(':');
  return colon != std::string_view::npos && format_from_string(spec.substr(0, colon)).has_value();
}

bool OutputPlan::redacts(ReportFormat format) const {
  if (redact_none) {
    return false;
  }
  return redact_all || format == ReportFormat::markdown;
}

bool OutputPlan::redacts_any() const {
  if (bundle && !redact_none) {
    return true;
  }
  if (stdout_format && redacts(*stdout_format)) {
    return true;
  }
  return std::any_of(files.begin(), files.end(),
                     [this](const OutputTarget& target) { return redacts(target.format); });
}

namespace {
/// stdout's format, and each unprefixed --output's when a --format follows it right after:
/// each --format names the format of the --output just before it, else stdout's.
Expected<std::optional<ReportFormat>>
formats_named(const OutputOptions& options, std::vector<std::optional<ReportFormat>>& paired) {
  std::optional<ReportFormat> format;
  for (const FormatOption& option : options.formats) {
    const std::optional<ReportFormat> named = format_from_string(option.format);
    if (!named) {
      return Error{fmt::format(
          "--format '{}' is not one of text, json, markdown, junit, prometheus, github, reason{}",
          option.format, did_you_mean_words(option.format, format_names()))};
    }
    const std::optional<size_t> target = option.after_output;
    if (target && *target < options.outputs.size() &&
        !has_format_prefix(options.outputs[*target]) && !paired[*target]) {
      paired[*target] = named;
      continue;
    }
    if (format) {
      return Error{"--format is given twice for stdout (to name a file's format, put it right "
                   "after that --output, or write --output FORMAT:FILE)"};
    }
    format = named;
  }
  if (options.json) {
    if (format && *format != ReportFormat::json) {
      return Error{fmt::format("--json and --format {} contradict each other", to_string(*format))};
    }
    format = ReportFormat::json;
  }
  return format;
}

/// An output file's path, not written twice and writable; nullopt when it is.
std::optional<Error> claim_path(const std::string& path, std::set<std::string>& paths) {
  const std::string key = std::filesystem::absolute(path).lexically_normal().string();
  if (!paths.insert(key).second) {
    return Error{fmt::format("two outputs write to '{}'", path)};
  }
  return check_writable(path);
}

/// Each --output into the plan: files, or stdout for '-' (whether one named it).
Expected<bool> plan_files(const OutputOptions& options,
                          const std::vector<std::optional<ReportFormat>>& paired,
                          std::set<std::string>& paths, OutputPlan& plan) {
  bool stdout_named = false;
  for (size_t i = 0; i < options.outputs.size(); ++i) {
    const std::string& spec = options.outputs[i];
    if (spec.empty()) {
      return Error{"--output names no file"};
    }
    Expected<OutputTarget> target =
        paired[i] ? Expected<OutputTarget>(OutputTarget{*paired[i], spec}) : parse_output(spec);
    if (!target) {
      return target.error();
    }
    if (target->path == "-") {
      if (stdout_named) {
        return Error{"two --output options write to stdout ('-')"};
      }
      stdout_named = true;
      plan.stdout_format = target->format;
      continue;
    }
    if (std::optional<Error> problem = claim_path(target->path, paths)) {
      return *problem;
    }
    // ".txt" says only "text": Prometheus' exposition or Markdown in it is no contradiction.
    if (const std::optional<ReportFormat> named = format_from_extension(target->path);
        named && *named != target->format && *named != ReportFormat::text) {
      plan.warnings.push_back(fmt::format("'{}' gets the {} report, though its name says {}",
                                          target->path, to_string(target->format),
                                          to_string(*named)));
    }
    plan.files.push_back(std::move(target).value());
  }
  return stdout_named;
}
} // namespace

Expected<OutputPlan> plan_outputs(const OutputOptions& options, bool report_command) {
  OutputPlan plan;
  if (options.redact && options.no_redact) {
    return Error{"--redact and --no-redact contradict each other"};
  }
  plan.redact_all = options.redact;
  plan.redact_none = options.no_redact;
  std::vector<std::optional<ReportFormat>> paired(options.outputs.size());
  Expected<std::optional<ReportFormat>> format = formats_named(options, paired);
  if (!format) {
    return format.error();
  }
  std::set<std::string> paths;
  const Expected<bool> stdout_named = plan_files(options, paired, paths, plan);
  if (!stdout_named) {
    return stdout_named.error();
  }
  if (options.bundle) {
    const std::string& bundle = *options.bundle;
    if (!bundle.ends_with(".tar.gz") && !bundle.ends_with(".tgz")) {
      return Error{fmt::format("--bundle '{}' must end in .tar.gz or .tgz", bundle)};
    }
    if (std::optional<Error> problem = claim_path(bundle, paths)) {
      return *problem;
    }
    plan.bundle = bundle;
  }
  // The terminal gets the --format report (text, or Markdown for `report`), except that
  // `gpucheck report --output FILE` writes only the file, and an --output to '-' replaces it.
  if (!stdout_named.value() && !(report_command && (!plan.files.empty() || plan.bundle))) {
    plan.stdout_format =
        format.value().value_or(report_command ? ReportFormat::markdown : ReportFormat::text);
  }
  return plan;
}

std::optional<Error> check_writable(const std::string& path) {
  if (std::optional<std::string> problem = output_path_problem(path)) {
    return Error{std::move(*problem)};
  }
  return std::nullopt;
}

namespace {

/// The catalogue's drain attribute, for render/reason (which does not see core/).
bool code_drains(std::string_view code) {
  const FindingSpec* spec = find_finding_spec(code);
  return spec != nullptr && spec->drain == Drain::yes;
}

} // namespace

bool drains_node(const Report& report) {
  // A "gpucheck-blind:" line is no drain: exit 0, the line says what could not be seen.
  return render::render_reason(report, &code_drains).starts_with(render::k_reason_marker);
}

std::string render_report(const Report& report, ReportFormat format, const render::TextStyle& style,
                          bool compact_json,
                          std::optional<std::chrono::milliseconds> run_duration) {
  switch (format) {
  case ReportFormat::text:
    return render::render_text(render::visible_report(report), style);
  case ReportFormat::json:
    return render::render_json(report, compact_json);
  case ReportFormat::markdown:
    return render::render_markdown(render::visible_report(report));
  case ReportFormat::junit:
    return render::render_junit(report);
  case ReportFormat::prometheus:
    return render::render_prometheus(report, render::PrometheusOptions{run_duration});
  case ReportFormat::github:
    return render::render_github(report);
  case ReportFormat::reason:
    return render::render_reason(render::visible_report(report), &code_drains);
  }
  return render::render_text(render::visible_report(report), style);
}

int64_t epoch_seconds(std::string_view iso_time) {
  const std::optional<std::chrono::sys_seconds> time = parse_utc_time(iso_time);
  return time ? static_cast<int64_t>(time->time_since_epoch().count()) : 0;
}

} // namespace gpucheck::cli
