#pragma once
/// Report: the immutable outcome of one run (context, snapshot, results).

#include <string>
#include <vector>

#include "gpucheck/model/check_result.hpp"
#include "gpucheck/model/snapshot.hpp"

namespace gpucheck {

struct ReportContext {
  static constexpr int k_schema_version = 1;

  int schema_version = k_schema_version;
  std::string tool_version;      ///< gpucheck version, "0.1.0"
  std::string generated_at;      ///< ISO 8601 UTC (injected clock)
  std::string mode;              ///< "quick", "standard", "replay"
  std::string matrix_version;    ///< compatibility data version in use, "" if none
  std::vector<std::string> argv; ///< the command line (argv[1..])

  bool operator==(const ReportContext&) const = default;
};

struct ReportSummary {
  Status overall = Status::pass; ///< worst status of all results
  int pass = 0;
  int warn = 0;
  int fail = 0;
  int skip = 0;
  int error = 0;

  bool operator==(const ReportSummary&) const = default;
};

struct Report {
  ReportContext context;
  SystemSnapshot snapshot;
  std::vector<CheckResult> results;
  ReportSummary summary;

  bool operator==(const Report&) const = default;
};

/// Counts and the overall status from a list of results.
ReportSummary summarize(const std::vector<CheckResult>& results);

} // namespace gpucheck
