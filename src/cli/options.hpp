#pragma once
/// Options shared by the commands, filled by CLI11 in app.cpp.

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "cli/gate_options.hpp"
#include "cli/outputs.hpp"
#include "gpucheck/check.hpp"
#include "render/terminal.hpp"

namespace gpucheck::cli {

struct RunOptions {
  bool json = false;
  bool quick = false;
  /// --level quick|standard|long (unset: standard, or quick with --quick).
  std::optional<std::string> level_name;
  Level level = Level::standard;    ///< resolved from --quick and --level (resolve_level)
  std::optional<double> duration_s; ///< --duration: each timed phase of the long level
  bool force = false;               ///< --force: the long level also on GPUs others use
  bool verbose = false;
  bool quiet = false; ///< -q: text shows only the problems and the summary
  std::vector<std::string> only;
  std::vector<std::string> skip;
  std::optional<std::string> from_snapshot;
  std::string sysroot = "/";
  double timeout_s = 30.0;       ///< per active check
  double probe_timeout_s = 15.0; ///< per probe child
  /// --wait-turn: seconds to wait for other runs' turns (unset: the engine's default for the
  /// run's GPU count)
  std::optional<double> wait_turn_s;
  std::vector<std::string> python; ///< --python PATH: more interpreters to examine
  bool import_frameworks = false;  ///< --import: import each framework in a child interpreter
  render::ColorChoice color = render::ColorChoice::automatic;
  std::vector<std::string> argv;
  OutputOptions output; ///< --format, --output, --bundle, --redact, --no-redact (cli/outputs.hpp)
  GateOptions gates;    ///< CI gates, judged after every check (cli/gate_options.hpp)
};

/// The level from --quick and --level, or the reason they cannot be used together (--quick
/// --level long; --duration or --force without --level long).
Expected<Level> resolve_level(const RunOptions& options);

/// Repeatable options that also take comma-separated lists ("--only a,b --only c") -> {a, b, c}.
std::vector<std::string> split_commas(const std::vector<std::string>& items);

} // namespace gpucheck::cli
