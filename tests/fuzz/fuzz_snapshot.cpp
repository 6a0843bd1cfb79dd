// Snapshots (`--from-snapshot FILE`, src/model/json_io.cpp): read in the parent, then judged by
// every passive check and written by every renderer. Any bytes: a snapshot or an Error naming
// the place, never an exception or a crash; an accepted snapshot gives a complete report whose
// JSON is valid, and survives its own JSON round trip.
#include <nlohmann/json.hpp>

#include <cstdlib>

#include "fuzz_support.hpp"
#include "gpucheck/model/json_io.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(gpucheck::fuzz::as_text(data, size));
  gpucheck::Expected<gpucheck::SystemSnapshot> snapshot = gpucheck::snapshot_from_text(text);
  if (!snapshot) {
    return 0;
  }
  gpucheck::fuzz::check_snapshot_round_trip(*snapshot);
  gpucheck::fuzz::exercise_report(*snapshot);
  return 0;
}
