#pragma once
/// Report: the immutable outcome of one run (context, snapshot, results).

#include <optional>
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

/// A result named by its check and GPU (the pair is unique in a report).
struct ResultRef {
  std::string check_id;
  std::optional<int> gpu_index;

  bool operator==(const ResultRef&) const = default;
};

/// One fault that explains other results: fix it first, and its consequences may go away.
struct RootCause {
  std::string code;                ///< the finding that is the cause, e.g. "driver.missing"
  std::string check_id;            ///< the result that holds it
  std::optional<int> gpu_index;    ///< that result's GPU, if per GPU
  std::string message;             ///< the finding's message
  std::string remedy;              ///< the finding's remedy
  std::vector<ResultRef> explains; ///< results that are its consequences, in report order

  bool operator==(const RootCause&) const = default;
};

struct Report {
  ReportContext context;
  SystemSnapshot snapshot;
  std::vector<CheckResult> results;
  ReportSummary summary;
  std::vector<RootCause> root_causes; ///< from find_root_causes(results), in report order

  bool operator==(const Report&) const = default;
};

/// Counts and the overall status from a list of results.
ReportSummary summarize(const std::vector<CheckResult>& results);

} // namespace gpucheck
