#pragma once
/// The names of the metrics checks report, for --min: a misspelt metric is a usage error (exit 2)
/// as a misspelt --ignore code is, not a gate that is skipped because nothing reported it.

#include <span>
#include <string_view>
#include <vector>

#include "gpucheck/expected.hpp"

namespace gpucheck::gates {

/// Every metric name or name pattern that a check reports, in the order docs/ci.md lists them.
/// In a pattern '<...>' stands for one or more of [a-z0-9_] ("p2p_<a>_<b>_write_gbps").
const std::vector<std::string_view>& known_metric_names();

/// Add the metric names of a check of its own folder (src/gpu_checks/) at start-up.
void add_metric_names(std::span<const std::string_view> names);

/// Whether `metric` is reported by some check (a name in known_metric_names or one that a pattern
/// there matches).
bool is_known_metric(std::string_view metric);

/// `metric` when known, else an error that quotes it and lists the known names.
Expected<std::string_view> check_known_metric(std::string_view metric);

} // namespace gpucheck::gates
