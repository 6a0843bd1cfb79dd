#pragma once
/// Runs the built gpucheck binary for CLI tests: arguments, a controlled environment, captured
/// stdout, stderr and exit status.

#include <sys/types.h>

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gpucheck::cli_test {

struct RunResult {
  int exit_code = -1; ///< the exit status; 128 + N when killed by signal N
  std::string out;    ///< everything written to stdout
  std::string err;    ///< everything written to stderr
};

struct RunSpec {
  std::vector<std::string> args;
  /// Variables to set on top of the test's environment. NO_COLOR, CLICOLOR_FORCE, TERM and
  /// SOURCE_DATE_EPOCH are always removed first, so only what a test sets here is seen.
  std::map<std::string, std::string> env;
  /// Where stdout goes instead of a capture file (e.g. "/dev/full"); `out` is then empty.
  std::optional<std::string> stdout_path;
  /// false: `env` is the whole environment, nothing is inherited (end-to-end scenarios).
  bool inherit_env = true;
  /// Send this signal (SIGINT, SIGTERM) to gpucheck this many milliseconds after it started.
  std::optional<std::pair<int, int>> signal_after;
  /// The working directory gpucheck starts in (default: the test's).
  std::optional<std::string> cwd;
};

/// The path of the gpucheck binary under test (GPUCHECK_BINARY).
std::string binary_path();

/// Starts gpucheck as `spec` says (its signal_after and stdout_path aside) with stdout and stderr
/// into these files, and returns at once: its pid, or -1 (and ADD_FAILURE) if it cannot start.
pid_t spawn_gpucheck(const RunSpec& spec, const std::string& out_path, const std::string& err_path);

/// Runs gpucheck and waits; fails the calling test (gtest ADD_FAILURE) if it cannot start.
RunResult run_gpucheck(const RunSpec& spec);

/// Shorthand: the given arguments with SOURCE_DATE_EPOCH=1700000000.
RunResult run_gpucheck(const std::vector<std::string>& args);

} // namespace gpucheck::cli_test
