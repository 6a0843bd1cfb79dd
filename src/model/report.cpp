#include "gpucheck/model/report.hpp"

namespace gpucheck {

ReportSummary summarize(const std::vector<CheckResult>& results) {
  ReportSummary summary;
  for (const CheckResult& result : results) {
    switch (result.status) {
    case Status::pass:
      ++summary.pass;
      break;
    case Status::warn:
      ++summary.warn;
      break;
    case Status::fail:
      ++summary.fail;
      break;
    case Status::skip:
      ++summary.skip;
      break;
    case Status::error:
      ++summary.error;
      break;
    }
    // skip does not lower the overall verdict: "nothing to check" is not a problem.
    if (result.status != Status::skip) {
      summary.overall = worst_of(summary.overall, result.status);
    }
  }
  return summary;
}

} // namespace gpucheck
