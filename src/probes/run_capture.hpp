#pragma once
/// Run a program briefly and capture its standard output (used only where no file states the
/// fact, e.g. an nvcc without version.json).

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace gpucheck::probes {

/// posix_spawn argv[0] (an absolute path) with argv, stdin and stderr on /dev/null, and return
/// what it wrote to stdout (at most 64 KiB) if it exits with status 0 before `deadline`.
/// A program still running at the deadline is killed (SIGKILL) and reaped; nullopt then, and
/// when it cannot be started or fails.
std::optional<std::string> run_capture(const std::vector<std::string>& argv,
                                       std::chrono::milliseconds deadline);

} // namespace gpucheck::probes
