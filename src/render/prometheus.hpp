#pragma once
/// Prometheus text exposition format (version 0.0.4) renderer, for node_exporter's textfile
/// collector and anything else that scrapes *.prom files (docs/fleet.md, "Prometheus").

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "gpucheck/model/report.hpp"

namespace gpucheck::render {

/// What the report itself does not hold.
struct PrometheusOptions {
  /// Wall time of the whole run, measured by the caller; no gpucheck_run_duration_seconds
  /// series without it.
  std::optional<std::chrono::milliseconds> run_duration;
};

/// The report as Prometheus metrics, every family with # HELP and # TYPE (all gauges: a report
/// is one run's state, nothing accumulates), names gpucheck_* in base units
/// (docs/report-format.md, "Prometheus"):
///   gpucheck_info{version,matrix_version,mode,driver,cuda,cudnn,Hostname} 1
///   gpucheck_run_timestamp_seconds, gpucheck_run_duration_seconds (with options.run_duration)
///   gpucheck_status{status} 0/1 (the verdict), gpucheck_results{status} counts
///   gpucheck_check_status{check,status,GPU labels} 1, one series per result
///   gpucheck_check_duration_seconds{check,GPU labels}
///   gpucheck_findings{severity} counts (ignored findings not counted; gpucheck_findings_ignored)
///   gpucheck_finding{check,code,severity,GPU labels} 1 per finding that is not ignored
///   gpucheck_gpu_info{GPU labels} 1, gpucheck_gpus, and each GPU's health gauges
/// GPU labels are dcgm-exporter's: gpu, UUID, pci_bus_id, modelName, Hostname.
///   one family per check metric, converted to base units (h2d_gbps -> gpucheck_h2d_bytes_per_
///   second); GPU pairs and sizes in a metric's name become labels.
/// Label values are valid UTF-8 (other bytes as "\xNN") with \, " and newline escaped. Series of
/// a family are contiguous and sorted; pure and deterministic.
std::string render_prometheus(const Report& report, const PrometheusOptions& options = {});

/// A label value as the exposition format writes it between quotes: backslash, double quote and
/// line feed escaped; bytes that are not UTF-8 written as "\\xNN" (an escaped backslash).
std::string prometheus_label_value(std::string_view text);

/// A metric name made of [a-zA-Z0-9_:], not starting with a digit (others become '_').
std::string prometheus_name(std::string_view text);

} // namespace gpucheck::render
