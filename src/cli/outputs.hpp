#pragma once
/// Where a run's report goes: the format on stdout, extra files (--output), the support bundle
/// (--bundle) and which of them are redacted (docs/report-format.md, "Output files").

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpucheck/expected.hpp"
#include "gpucheck/model/report.hpp"
#include "render/redact.hpp"
#include "render/text.hpp"

namespace gpucheck::cli {

enum class ReportFormat {
  text,
  json,
  markdown,
  junit,
  prometheus,
  github,
  reason, ///< one line for a drain reason, empty when nothing drains (render/reason.hpp)
};

std::string_view to_string(ReportFormat format);
/// "text", "json", "markdown" (or "md"), "junit", "prometheus", "github", "reason"; nullopt for
/// anything else.
std::optional<ReportFormat> format_from_string(std::string_view text);

/// One --output: a format and a path ("-" is stdout).
struct OutputTarget {
  ReportFormat format = ReportFormat::text;
  std::string path;

  bool operator==(const OutputTarget&) const = default;
};

/// "--output [FORMAT:]FILE": the format named before the first ':' when it is a format name
/// ("json:out/report.json", "junit:-"), else taken from the extension (.txt text, .json json,
/// .md/.markdown markdown, .xml junit, .prom prometheus). An empty path, or no format and an
/// unknown extension, is an error that says how to name the format.
Expected<OutputTarget> parse_output(std::string_view spec);

/// Whether an --output spec names its format with a "FORMAT:" prefix.
bool has_format_prefix(std::string_view spec);

/// A --format as given, and the --output it follows on the command line: the last --output
/// before it with no other --format in between (nullopt when there is none).
struct FormatOption {
  std::string format;
  std::optional<size_t> after_output; ///< index into OutputOptions::outputs

  bool operator==(const FormatOption&) const = default;
};

/// Output options as given on the command line (app.cpp binds them to CLI11).
struct OutputOptions {
  std::vector<FormatOption> formats; ///< --format, repeatable, in command-line order
  bool json = false;                 ///< --json, a synonym of --format json
  std::vector<std::string> outputs;  ///< --output, repeatable
  std::optional<std::string> bundle; ///< --bundle FILE.tar.gz
  bool redact = false;               ///< --redact: text, JSON and JUnit too
  bool no_redact = false;            ///< --no-redact: not even Markdown and the bundle
  bool json_compact = false;         ///< --json-compact: JSON on one line
};

/// What one run writes, checked before the run starts.
struct OutputPlan {
  std::optional<ReportFormat> stdout_format; ///< nullopt: nothing on stdout
  std::vector<OutputTarget> files;           ///< "-" never appears here
  std::optional<std::string> bundle;
  bool redact_all = false;  ///< --redact
  bool redact_none = false; ///< --no-redact
  /// Said on stderr before the run: a file whose name says one format but gets another
  /// (`--output report.json --format junit`).
  std::vector<std::string> warnings;

  /// Whether `format` is written redacted: markdown and the bundle unless --no-redact; text,
  /// JSON and JUnit only with --redact.
  [[nodiscard]] bool redacts(ReportFormat format) const;
  /// Whether any output of the plan is written redacted (the bundle unless --no-redact).
  [[nodiscard]] bool redacts_any() const;
};

/// Turn the options into a plan. A --format that follows an --output FILE without a FORMAT:
/// prefix names that file's format (`--output r.out --format json`, the pairs the issue asks
/// for); any other --format is the stdout format. `report_command`: `gpucheck report`, whose
/// stdout format is Markdown and which writes nothing to stdout when --output names files.
/// Errors: an unknown format, two stdout formats (or --json with another), --redact with
/// --no-redact, a bad --output, a --bundle not ending in .tar.gz or .tgz, a file that cannot be
/// written (its directory is missing or not writable, or it is a directory), and two outputs to
/// one path.
Expected<OutputPlan> plan_outputs(const OutputOptions& options, bool report_command);

/// Whether `path` could be written now: nullopt if so, else the reason ("cannot write
/// 'x/y.json': directory 'x' does not exist"; a symbolic link, a block device, a socket or a
/// directory is refused: output_file.hpp).
std::optional<Error> check_writable(const std::string& path);

/// Whether the report holds a finding that drains the node (--format reason is not empty): the
/// exit code of a run whose stdout format is reason (docs/exit-codes.md).
bool drains_node(const Report& report);

/// The report in one format. `style` applies to text only, `compact_json` to JSON only,
/// `run_duration` (the run's wall time) to Prometheus only.
std::string render_report(const Report& report, ReportFormat format, const render::TextStyle& style,
                          bool compact_json = false,
                          std::optional<std::chrono::milliseconds> run_duration = std::nullopt);

/// Seconds since 1970 of an ISO 8601 UTC time "2026-11-21T12:00:00Z"; 0 when it is not one.
int64_t epoch_seconds(std::string_view iso_time);

} // namespace gpucheck::cli
