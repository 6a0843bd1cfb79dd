#pragma once
/// Runs a command-line tool a test checks output with (cmark-gfm, xmllint, tar, gzip): the tools
/// are test dependencies installed by scripts/install-deps.sh.

#include <string>
#include <vector>

namespace gpucheck::testing {

struct ToolResult {
  int exit_code = -1; ///< the exit status; -1 when the tool could not be run
  std::string output; ///< stdout and stderr together
};

/// Run argv[0] (looked up on PATH) with the arguments, no shell; `input` is written to its stdin.
ToolResult run_tool(const std::vector<std::string>& argv, const std::string& input = "");

/// Whether `name` is an executable on PATH.
bool tool_on_path(const std::string& name);

} // namespace gpucheck::testing
