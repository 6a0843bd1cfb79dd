#pragma once
/// A probe child that crashed, hung or failed turns the check that needed its facts into an
/// `error` result whose finding names the signal or the timeout and quotes the child's stderr.

#include <optional>
#include <string_view>

#include "gpucheck/check.hpp"

namespace gpucheck::checks {

/// The finding for a failed probe child: probe.crashed (kind "signal"), probe.timed_out
/// ("timeout") or probe.failed (anything else). `probe` names the probe in words, e.g.
/// "CUDA driver probe (cuInit, cuDeviceGet*)".
Finding probe_failure_finding(std::string_view probe, const ChildFailure& failure,
                              std::optional<int> gpu_index = std::nullopt);

/// An error result for `info` carrying probe_failure_finding(); a skip naming the probe when the
/// run was interrupted and the child cut short (kind "cancelled").
CheckResult probe_failure_result(const CheckInfo& info, std::string_view probe,
                                 const ChildFailure& failure,
                                 std::optional<int> gpu_index = std::nullopt);

/// The stderr tail as one quotable line ("(nothing on stderr)" when empty).
std::string stderr_excerpt(const ChildFailure& failure);

} // namespace gpucheck::checks
