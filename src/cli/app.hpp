#pragma once
/// The command line: parses arguments, runs the command, picks the exit code.

namespace gpucheck::cli {

/// Run gpucheck with these arguments; returns the process exit code (exit_codes.hpp).
int run_app(int argc, char** argv);

} // namespace gpucheck::cli
