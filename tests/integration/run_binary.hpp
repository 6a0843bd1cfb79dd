#pragma once
// Run the real gpucheck binary with a chosen environment and capture what it prints.

#include <chrono>
#include <map>
#include <string>
#include <vector>

namespace gpucheck::testing {

struct BinaryRun {
  int exit_code = -1; ///< -1 when killed by a signal or the timeout
  std::string out;    ///< stdout
  std::string err;    ///< stderr
  std::chrono::milliseconds elapsed{0};
};

/// Run `binary args...` with exactly `env` as its environment (nothing inherited), killing it
/// after `timeout`.
BinaryRun run_binary(const std::string& binary, const std::vector<std::string>& args,
                     const std::map<std::string, std::string>& env,
                     std::chrono::milliseconds timeout = std::chrono::milliseconds(60000));

} // namespace gpucheck::testing
