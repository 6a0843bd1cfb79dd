#pragma once
/// `gpucheck merge REPORT.json... | DIR...`: one table across nodes (docs/fleet.md).
///
/// Exit codes: 0 every node passed or warned and every input was a report; 1 a node failed or
/// errored, or an input was refused (not JSON, not a report, empty); 2 usage (no input, a path
/// that does not exist, a directory without *.json, or no report among the inputs); 3 the table
/// could not be written.

#include <iosfwd>
#include <string>
#include <vector>

namespace CLI { // NOLINT(readability-identifier-naming): CLI11 names it
class App;
}

namespace gpucheck::cli {

struct MergeOptions {
  std::vector<std::string> paths; ///< report files and directories
  std::string format = "text";    ///< "text", "json", "markdown"
  bool json = false;              ///< --json: same as --format json
};

/// Adds the `merge` subcommand to `app`; returns it so the caller can see whether it was given.
CLI::App* add_merge_command(CLI::App& app, MergeOptions& options);

/// Runs the merge: the table to `out`, one line per problem to `err`; returns the exit code.
int run_merge(const MergeOptions& options, std::ostream& out, std::ostream& err);

} // namespace gpucheck::cli
