#pragma once
/// Run a program briefly and capture its standard output (used only where no file states the
/// fact, e.g. an nvcc without version.json).

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace gpucheck::probes {

/// What run_capture keeps of a program's output unless told otherwise: enough for a version
/// banner or a command's answer.
inline constexpr size_t k_run_capture_max_bytes = size_t{64} << 10;

/// Run argv[0] (an absolute path) with argv, stdin and stderr on /dev/null, in a process group of
/// its own that dies with gpucheck (PR_SET_PDEATHSIG), and return what it wrote to stdout (its
/// first `max_bytes`; the rest is read and dropped) if it exits with status 0 before `deadline`.
/// A program still running at the deadline is killed with its group (SIGKILL) and reaped;
/// after platform::interrupt_children() its group gets that signal, then SIGKILL, at once, and
/// no new program starts. nullopt then, and when it cannot be started or fails.
std::optional<std::string> run_capture(const std::vector<std::string>& argv,
                                       std::chrono::milliseconds deadline,
                                       size_t max_bytes = k_run_capture_max_bytes);

} // namespace gpucheck::probes
