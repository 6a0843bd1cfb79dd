#pragma once
/// The recorded snapshots (tests/snapshots/) that the CLI tests replay with --from-snapshot.

#include <string>

namespace gpucheck::cli_test {

/// The path of the recorded snapshot `name` (tests/snapshots/<name>.json).
inline std::string snapshot_file(const std::string& name) {
  return std::string(GPUCHECK_TEST_DATA_DIR) + "/snapshots/" + name + ".json";
}

} // namespace gpucheck::cli_test
