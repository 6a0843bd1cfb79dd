#include "gpucheck/check.hpp"

namespace gpucheck {

namespace {
CheckResult base_result(const CheckInfo& info, std::optional<int> gpu_index) {
  CheckResult result;
  result.check_id = std::string(info.id);
  result.title = std::string(info.title);
  result.gpu_index = gpu_index;
  return result;
}
} // namespace

CheckResult make_result(const CheckInfo& info, std::string summary, std::vector<Finding> findings,
                        std::optional<int> gpu_index) {
  CheckResult result = base_result(info, gpu_index);
  result.status = Status::pass;
  for (const Finding& finding : findings) {
    result.status = worst_of(result.status, status_for(finding.severity));
  }
  result.summary = std::move(summary);
  result.findings = std::move(findings);
  return result;
}

CheckResult skip_result(const CheckInfo& info, std::string reason, std::optional<int> gpu_index) {
  CheckResult result = base_result(info, gpu_index);
  result.status = Status::skip;
  result.summary = std::move(reason);
  return result;
}

CheckResult error_result(const CheckInfo& info, std::string reason, std::optional<int> gpu_index) {
  CheckResult result = base_result(info, gpu_index);
  result.status = Status::error;
  result.summary = std::move(reason);
  return result;
}

} // namespace gpucheck
