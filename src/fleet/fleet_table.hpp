#pragma once
/// `gpucheck merge`: many nodes' reports as one table, grouped by failing code so an admin sees
/// "12 nodes: row remap pending" at a glance (docs/fleet.md).

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
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
  /// The catalogue's title; for a code not in it, unknown_code_title(); empty for a failed
  /// result without a finding ("gpu.compute (fail)").
  std::string title;
  bool known = false;  ///< the code is in this gpucheck's catalogue
  bool failing = true; ///< a failing code (else a warning)
  std::vector<std::string> nodes;
  /// Per entry of `nodes`: the indices of its GPUs that have the code (sorted); empty when the
  /// code is the node's, not a GPU's.
  std::vector<std::vector<int>> gpus;
};

/// An older report of a node that has a newer one in the merge: not counted.
struct StaleReport {
  std::string node;
  std::string source;
  std::string generated_at;  ///< as the report wrote it; empty when it had none
  std::string superseded_by; ///< the source of the node's newest report
};

struct FleetSummary {
  int nodes = 0;
  int pass = 0;
  int warn = 0;
  int failing = 0; ///< fail, error or an unknown verdict
  int rejected = 0;
  int stale = 0; ///< older reports of a counted node
};

struct FleetTable {
  std::vector<NodeReport> nodes; ///< sorted by node name (digits compared as numbers)
  std::vector<CodeGroup> groups; ///< failing codes first, most nodes first, then warnings
  std::vector<RejectedInput> rejected;
  std::vector<StaleReport> stale; ///< sorted by node, then source
  FleetSummary summary;
  std::chrono::sys_seconds now; ///< the clock the ages are measured from
};

/// The report files named by `paths`: files as given, directories searched recursively for
/// *.json (sorted). Fails for a path that does not exist or a directory without *.json files.
Expected<std::vector<std::string>> report_files(const std::vector<std::string>& paths);

/// Read every file; files that are not reports become `rejected` entries, never stop the merge.
/// `now` is the clock report ages are measured from (cli passes report_now()).
FleetTable merge_files(const std::vector<std::string>& files, std::chrono::sys_seconds now);

/// Build the table from already read nodes: one row per host, its newest report (docs/fleet.md,
/// "One row per host"):
/// - reports with different host names are different hosts;
/// - reports with one host name are one host when they share a GPU UUID (directly or through
///   another of them), or when at most one such group of UUIDs exists for that name and the
///   report names no GPU; two groups without a common GPU are two machines that share a name
///   (each counted, noted), and then a report without GPU UUIDs stands alone (noted);
/// - an anonymous report (no host name, or redacted) is always a host of its own;
/// - of one host's reports the newest `generated` counts; one without a time is older than any
///   with one; on a tie the source that sorts last (natural order) counts. The others are
///   `stale`.
FleetTable merge_nodes(std::vector<NodeReport> nodes, std::vector<RejectedInput> rejected,
                       std::chrono::sys_seconds now);

/// A report's age as a terminal column: "45s", "5m", "3h", "2d" (whole units, rounded down);
/// "future" when it is more than a minute ahead of the clock (a node's clock skew), "0s" for less;
/// "-" when unknown.
std::string age_text(std::optional<std::chrono::seconds> age);

/// "node-2" < "node-10": runs of digits compare as numbers.
bool natural_less(const std::string& a, const std::string& b);

/// What the merge says of a code not in this gpucheck's catalogue: a code-shaped one may be
/// another version's (renamed since, or new); anything else (spaces, capitals, control characters,
/// 65 characters or more) is no finding code at all. "" for "CHECK (STATUS)", a failed result
/// without a finding.
std::string_view unknown_code_title(std::string_view code);

} // namespace gpucheck::fleet
