#pragma once
/// The CI gate options (--expect-gpus, --require, --min, --fail-on, --ignore) and --config FILE,
/// which reads these and any other option from a TOML or JSON file (docs/ci.md). Values given on
/// the command line override the file's.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gates/gate_spec.hpp"

namespace CLI { // NOLINT(readability-identifier-naming): CLI11 names it
class App;
}

namespace gpucheck::cli {

/// The gate options as given (each expression already validated by CLI11 when parsed).
struct GateOptions {
  std::optional<int> expect_gpus;
  std::vector<std::string> require; ///< "driver>=550"
  std::vector<std::string> min;     ///< "h2d_gbps=20"
  std::string fail_on = "fail";     ///< "warn" or "fail"
  std::vector<std::string> ignore;  ///< finding codes (repeatable, comma-separated)
};

/// Adds the gate options and --config to `app`. A malformed expression, an unknown --ignore code
/// or a bad config file is a CLI11 parse error naming the option and the problem (exit 2).
void add_gate_options(CLI::App& app, GateOptions& options);

/// The gates stated by `options`. Throws std::invalid_argument for an expression that the parse
/// did not validate: CLI11 runs no validator on an empty value, so the caller turns this into a
/// usage error before anything runs.
gates::GateSpec gate_spec(const GateOptions& options);

/// Where the config file set `option` (its long name without "--", e.g. "expect-gpus"): "config
/// file 'PATH', line 3" (TOML; a JSON file's lines are not kept: "config file 'PATH'"), or nullopt
/// when no config file set it. For the usage error of a value the file gave.
std::optional<std::string> config_position(const CLI::App& app, std::string_view option);

} // namespace gpucheck::cli
