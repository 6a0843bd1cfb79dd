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

namespace gpucheck {

std::string_view to_string(Level level) {
  switch (level) {
  case Level::quick:
    return "quick";
  case Level::standard:
    return "standard";
  case Level::long_:
    return "long";
  }
  return "standard";
}

std::optional<Level> level_named(std::string_view name) {
  for (const Level level : {Level::quick, Level::standard, Level::long_}) {
    if (to_string(level) == name) {
      return level;
    }
  }
  return std::nullopt;
}

} // namespace gpucheck
