#include "checks/rules/probe_failure.hpp"

#include <fmt/format.h>

#include "findings/catalog.hpp"

namespace gpucheck::checks {

namespace {
/// Keep the report readable: the last few hundred characters hold the abort message.
constexpr std::size_t k_max_stderr_chars = 400;
} // namespace

std::string stderr_excerpt(const ChildFailure& failure) {
  std::string text = failure.stderr_tail;
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) {
    text.pop_back();
  }
  if (text.empty()) {
    return "(nothing on stderr)";
  }
  if (text.size() > k_max_stderr_chars) {
    text = "..." + text.substr(text.size() - k_max_stderr_chars);
  }
  for (char& c : text) {
    if (c == '\n') {
      c = '|';
    }
  }
  return fmt::format("\"{}\"", text);
}

Finding probe_failure_finding(std::string_view probe, const ChildFailure& failure,
                              std::optional<int> gpu_index) {
  const std::string tail = stderr_excerpt(failure);
  if (failure.kind == ChildFailureKind::signal) {
    const std::string signal = failure.signal_name.empty()
                                   ? fmt::format("signal {}", failure.signal)
                                   : failure.signal_name;
    return make_finding(codes::k_probe_crashed, gpu_index, probe, signal, tail);
  }
  if (failure.kind == ChildFailureKind::timeout) {
    return make_finding(codes::k_probe_timed_out, gpu_index, probe,
                        fmt::format("{:g}", failure.timeout_s), tail);
  }
  std::string how = failure.detail;
  if (how.empty()) {
    how = failure.kind == ChildFailureKind::exit ? fmt::format("exit code {}", failure.exit_code)
                                                 : std::string(to_string(failure.kind));
  }
  return make_finding(codes::k_probe_failed, gpu_index, probe, how, tail);
}

CheckResult probe_failure_result(const CheckInfo& info, std::string_view probe,
                                 const ChildFailure& failure, std::optional<int> gpu_index) {
  if (failure.kind == ChildFailureKind::cancelled) {
    // The user stopped the run (SIGINT, SIGTERM): no verdict on the machine.
    return skip_result(info, fmt::format("the {} was {}", probe, failure.detail), gpu_index);
  }
  Finding finding = probe_failure_finding(probe, failure, gpu_index);
  std::string summary = finding.message;
  return make_result(info, std::move(summary), {std::move(finding)}, gpu_index);
}

} // namespace gpucheck::checks
