#pragma once
/// The diagnostic programs whose output the support bundle carries (`nvidia-smi -q`,
/// `lspci -vvv`): run only from fixed system paths, in a clean environment, with a deadline and
/// an output cap. Whatever happens to a program, its file in the bundle says so; the bundle is
/// made anyway.

#include <chrono>
#include <cstddef>
#include <map>
#include <string>
#include <vector>

namespace gpucheck::probes {

/// One program the bundle runs.
struct BundleCommand {
  std::string file_name;               ///< the member under sources/: "nvidia-smi-q.txt"
  std::vector<std::string> candidates; ///< absolute paths; the first that exists is run
  std::vector<std::string> args;       ///< after the program: {"-q"}
  std::chrono::milliseconds deadline{10000};
  size_t max_bytes = size_t{4} << 20; ///< more than this: stopped, the complete lines kept
};

/// `nvidia-smi -q` (from /usr/bin, /bin or /usr/local/nvidia/bin, 20 s) and `lspci -vvv` (from
/// /usr/bin, /usr/sbin, /sbin or /bin, 10 s), 4 MiB each. Never a directory from $PATH.
std::vector<BundleCommand> bundle_commands();

/// The environment the programs get, whole: PATH of the system directories and LC_ALL=C
/// (stable, English output); nothing of gpucheck's (no LD_PRELOAD, LD_LIBRARY_PATH, HOME).
std::vector<std::string> bundle_command_environment();

/// File name -> text for each command: its output when it exited 0; otherwise a first line in
/// parentheses saying why (not found, refused as root with the reason, exit status, signal,
/// deadline, output cap, gpucheck interrupted), followed by what it printed before, if anything.
/// Each command is run (or refused) under the root policy of path_trust.hpp.
std::map<std::string, std::string>
collect_command_outputs(const std::vector<BundleCommand>& commands);

/// What a command's file holds when gpucheck reads a system tree (--sysroot) instead of the
/// machine it runs on: the programs would describe the wrong machine, so none is run.
std::map<std::string, std::string>
command_outputs_not_run(const std::vector<BundleCommand>& commands);

} // namespace gpucheck::probes
