#pragma once
/// Process exit codes (docs/exit-codes.md). Chosen in one place: cli/app.cpp.

namespace gpucheck::cli {

inline constexpr int k_exit_ok = 0;           ///< every check passed, warned or was skipped
inline constexpr int k_exit_check_failed = 1; ///< at least one check failed or errored
inline constexpr int k_exit_usage = 2;        ///< bad arguments or unreadable input file
inline constexpr int k_exit_internal = 3;     ///< gpucheck itself failed
/// Stopped by SIGINT or SIGTERM: the report of what ran is written, then 128 + the signal
/// (130 for Ctrl-C, 143 for SIGTERM), as a shell reports a process the signal ended.
inline constexpr int k_exit_signal_base = 128;

} // namespace gpucheck::cli
