#pragma once
/// One node's row in a fleet merge, read leniently from a gpucheck JSON report of any gpucheck or
/// schema version: what it knows is read, the rest stays unknown, and a file that is not a
/// gpucheck report is refused with a reason.

#include <optional>
#include <string>
#include <vector>

#include "gpucheck/expected.hpp"

namespace gpucheck::fleet {

struct NodeReport {
  std::string source;       ///< the file it came from
  std::string node;         ///< host name from the report, else the file's name without .json
  int gpu_count = 0;        ///< GPUs in the report's snapshot
  std::string gpus;         ///< "8x NVIDIA H100 80GB HBM3", "1x A100, 1x T4", "0"
  std::string driver;       ///< "580.95.05"; empty when unknown
  std::string cuda;         ///< CUDA version the driver supports, "13.0"; empty when unknown
  std::string cudnn;        ///< loaded cuDNN, "9.10.2"; empty when unknown or none
  std::string verdict;      ///< "pass", "warn", "fail", "error" (the report's overall status)
  std::string tool_version; ///< gpucheck version that wrote it; empty when unknown
  std::optional<int> schema_version;
  std::vector<std::string> failing_codes; ///< codes of fail/error findings (sorted, unique); a
                                          ///< failing result without one gives "<check id>"
  std::vector<std::string> warning_codes; ///< codes of warn findings in warning results
  std::vector<std::string> notes;         ///< what was odd about the file, e.g. a newer schema
};

/// Read one report file's text. Fails with a reason fit for "FILE: reason" when the text is empty,
/// not JSON, or JSON that is not a gpucheck report (a snapshot is named as such).
Expected<NodeReport> read_node_report(const std::string& text, const std::string& source);

/// Whether a verdict counts as a failing node (fail or error; an unknown verdict too).
bool is_failing(const std::string& verdict);

} // namespace gpucheck::fleet
