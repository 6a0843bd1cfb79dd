#pragma once
/// CI gates as the command line or a config file states them (docs/ci.md): --expect-gpus N,
/// --require 'driver>=550', --min h2d_gbps=20, --fail-on warn, --ignore CODE. Parsing is pure and
/// names the bad part of a malformed expression.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpucheck/expected.hpp"
#include "gpucheck/model/version.hpp"

namespace gpucheck::gates {

/// The comparison of a version requirement.
enum class CompareOp { greater_equal, greater, less_equal, less, equal, not_equal };

/// ">=", ">", "<=", "<", "==", "!=".
std::string_view to_string(CompareOp op);

/// The operator that states the opposite (">=" -> "<"), for messages like "535 < required 550".
CompareOp negation(CompareOp op);

/// Whether `have` meets `op need`, compared at the precision of `need`: "580.65.06" meets
/// "<=580" and "==580", because only as many components as `need` has are compared.
bool satisfies(const Version& have, CompareOp op, const Version& need);

/// The components a requirement can name, in the order gates report them.
inline constexpr std::string_view k_requirement_subjects[] = {"driver", "cuda", "cudart",  "cudnn",
                                                              "cublas", "nccl", "toolkit", "cc"};

/// One --require expression: `driver>=550`, `cudnn >= 9.1`, `cc>=8.0` (or `cc>=sm_80`).
struct Requirement {
  std::string subject; ///< one of k_requirement_subjects
  CompareOp op = CompareOp::greater_equal;
  Version version;
  std::string text; ///< normalised spelling, "driver>=550"
};

/// Parse a requirement; the error quotes the expression and says what is wrong with it.
Expected<Requirement> parse_requirement(std::string_view text);

/// One --min expression: `h2d_gbps=20`: every reported value of the metric must be >= minimum.
struct MetricMinimum {
  std::string metric; ///< metric name as checks report it, [a-z][a-z0-9_]*
  double minimum = 0.0;
  std::string text; ///< "h2d_gbps=20"
};

/// Parse a minimum; the error quotes the expression and says what is wrong with it.
Expected<MetricMinimum> parse_minimum(std::string_view text);

/// Parse a --fail-on level: "warn" (warnings fail the run) or "fail" (the default: only
/// failures and errors do). Returns whether warnings fail.
Expected<bool> parse_fail_on(std::string_view text);

/// Check that a finding code is in the catalogue, for --ignore.
Expected<std::string> parse_ignored_code(std::string_view text);

/// Every gate of one run. Empty (the default) means no gate: the report is the checks' alone.
struct GateSpec {
  std::optional<int> expect_gpus;
  std::vector<Requirement> requirements;
  std::vector<MetricMinimum> minimums;
  bool fail_on_warn = false;
  std::vector<std::string> ignored_codes;

  [[nodiscard]] bool empty() const {
    return !expect_gpus && requirements.empty() && minimums.empty() && !fail_on_warn &&
           ignored_codes.empty();
  }
};

} // namespace gpucheck::gates
