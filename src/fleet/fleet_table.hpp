#pragma once
/// `gpucheck merge`: many nodes' reports as one table, grouped by failing code so an admin sees
/// "12 nodes: row remap pending" at a glance (docs/fleet.md).

#include <string>
#include <vector>

#include "fleet/node_report.hpp"
#include "gpucheck/expected.hpp"

namespace gpucheck::fleet {

/// An input that is not a readable gpucheck report, and why.
struct RejectedInput {
  std::string source;
  std::string reason;
};

/// The nodes that share one finding code.
struct CodeGroup {
  std::string code;
  std::string title;   ///< the catalogue's title; empty for a code this gpucheck does not know
  bool failing = true; ///< a failing code (else a warning)
  std::vector<std::string> nodes;
};

struct FleetSummary {
  int nodes = 0;
  int pass = 0;
  int warn = 0;
  int failing = 0; ///< fail, error or an unknown verdict
  int rejected = 0;
};

struct FleetTable {
  std::vector<NodeReport> nodes; ///< sorted by node name (digits compared as numbers)
  std::vector<CodeGroup> groups; ///< failing codes first, most nodes first, then warnings
  std::vector<RejectedInput> rejected;
  FleetSummary summary;
};

/// The report files named by `paths`: files as given, directories searched recursively for
/// *.json (sorted). Fails for a path that does not exist or a directory without *.json files.
Expected<std::vector<std::string>> report_files(const std::vector<std::string>& paths);

/// Read every file; files that are not reports become `rejected` entries, never stop the merge.
FleetTable merge_files(const std::vector<std::string>& files);

/// Build the table from already read nodes.
FleetTable merge_nodes(std::vector<NodeReport> nodes, std::vector<RejectedInput> rejected);

/// "node-2" < "node-10": runs of digits compare as numbers.
bool natural_less(const std::string& a, const std::string& b);

} // namespace gpucheck::fleet
