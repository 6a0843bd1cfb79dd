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

/// How a captured program ended (Capture::end).
enum class CaptureEnd {
  exited,      ///< it exited by itself (Capture::status: its exit status)
  signalled,   ///< a signal ended it (Capture::status: the signal)
  timed_out,   ///< still running at the deadline: killed with its group
  flooded,     ///< printed more than max_bytes with CaptureOptions::kill_at_cap: killed
  interrupted, ///< gpucheck was interrupted (process::interrupt_children): killed or not started
  refused,     ///< the root policy refused the program (path_trust.hpp): not started
  not_started, ///< fork, pipe or exec failed
};

struct CaptureOptions {
  std::chrono::milliseconds deadline{3000};
  size_t max_bytes = k_run_capture_max_bytes; ///< output kept; the rest is read and dropped
  bool kill_at_cap = false; ///< kill the program once it printed more than max_bytes
  bool with_stderr = false; ///< capture stderr with stdout (else /dev/null)
  /// The program's whole environment ("NAME=value" each); nullopt: gpucheck's own.
  std::optional<std::vector<std::string>> environment;
};

struct Capture {
  CaptureEnd end = CaptureEnd::not_started;
  int status = 0;     ///< the exit status (exited) or the signal (signalled)
  std::string output; ///< what it printed before it ended, at most max_bytes
  /// Killed, but not reaped within a second of SIGKILL (a process stuck in the kernel, as
  /// nvidia-smi on a hung GPU can be): left to be reaped by init once gpucheck exits.
  bool unreaped = false;
};

/// Run argv[0] (an absolute path) with argv, stdin on /dev/null, in a process group of its own
/// that dies with gpucheck (PR_SET_PDEATHSIG), and capture its output until it ends or the
/// deadline passes. A program still running at the deadline is killed with its group (SIGKILL)
/// and reaped (waiting at most a second more); after process::interrupt_children() its group
/// gets that signal, then SIGKILL, at once, and no new program starts.
Capture run_capture_detailed(const std::vector<std::string>& argv, const CaptureOptions& options);

/// run_capture_detailed with stderr on /dev/null and gpucheck's environment: what the program
/// wrote to stdout (its first `max_bytes`) if it exited with status 0 before `deadline`, else
/// nullopt.
std::optional<std::string> run_capture(const std::vector<std::string>& argv,
                                       std::chrono::milliseconds deadline,
                                       size_t max_bytes = k_run_capture_max_bytes);

} // namespace gpucheck::probes
