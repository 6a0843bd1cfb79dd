#pragma once
/// Fixed reports for renderer tests: recorded snapshots (tests/snapshots/) plus hand-made results,
/// so the goldens do not move when the real checks change.

#include <ostream>
#include <string>
#include <vector>

#include "gpucheck/model/report.hpp"

namespace gpucheck::testing {

struct Scenario {
  std::string name; ///< also the golden file stem and the snapshot file stem
  Report report;
};

/// gtest prints a failing parameter with this: the scenario's name, not its bytes.
void PrintTo(const Scenario& scenario, std::ostream* os);

/// The recorded snapshot tests/snapshots/<name>.json; throws std::runtime_error when it cannot
/// be read or parsed (a broken fixture, not a test outcome).
SystemSnapshot load_recorded_snapshot(const std::string& name);

/// Names of the recorded snapshots, sorted.
std::vector<std::string> recorded_snapshot_names();

/// One report per recorded snapshot, with results written for it by hand.
std::vector<Scenario> golden_scenarios();

} // namespace gpucheck::testing
