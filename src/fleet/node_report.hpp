#pragma once
/// One node's row in a fleet merge, read leniently from a gpucheck JSON report of any gpucheck or
/// schema version: what it knows is read, the rest stays unknown, and a file that is not a
/// gpucheck report is refused with a reason.

#include <chrono>
#include <compare>
#include <optional>
#include <string>
#include <vector>

#include "gpucheck/expected.hpp"

namespace gpucheck::fleet {

/// A failing or warning finding code, with the GPU it belongs to when it belongs to one.
struct CodeOnGpu {
  std::string code;
  std::optional<int> gpu_index; ///< the finding's GPU, else its result's; nullopt: the node's
  std::string uuid;             ///< that GPU's UUID in the report's inventory; empty if unknown
  std::string serial;           ///< its board serial number; empty if unknown

  auto operator<=>(const CodeOnGpu&) const = default;
};

struct NodeReport {
  std::string source; ///< the file it came from
  std::string node;   ///< host name from the report, else the file's name without .json
  int gpu_count = 0;  ///< GPUs in the report's snapshot (NVML's inventory)
  /// NVIDIA display and 3D controllers on the PCI bus (the kernel module facts): what a node
  /// whose NVML failed still shows.
  int pci_gpu_count = 0;
  /// "8x NVIDIA H100 80GB HBM3", "1x A100, 1x T4", "0"; "4 (PCI)" when NVML listed no GPU but
  /// the PCI bus has some.
  std::string gpus;
  std::string driver;       ///< "580.95.05"; empty when unknown
  std::string cuda;         ///< CUDA version the driver supports, "13.0"; empty when unknown
  std::string cudnn;        ///< loaded cuDNN, "9.10.2"; empty when unknown or none
  std::string verdict;      ///< "pass", "warn", "fail", "error" (the report's overall status)
  std::string tool_version; ///< gpucheck version that wrote it; empty when unknown
  std::optional<int> schema_version;
  std::string mode;         ///< the run's mode: "quick", "standard", "replay"; empty if unknown
  std::string generated_at; ///< the report's own time as written (context.generated_at, else
                            ///< snapshot.collected_at); empty when it has neither
  /// generated_at read as a time; nullopt when missing or not ISO 8601 UTC.
  std::optional<std::chrono::sys_seconds> generated;
  /// How long before the merge's clock the report was made (negative: the node's clock runs
  /// ahead); set by merge_nodes, nullopt without a time.
  std::optional<std::chrono::seconds> age;
  /// Real GPU UUIDs of its inventory (not redaction placeholders such as "GPU-0"), sorted: what
  /// tells two machines that share a host name apart.
  std::vector<std::string> gpu_uuids;
  /// The report names no machine that merge can recognise again: no host name (named after its
  /// file), or a redacted one ("host-0") without real GPU UUIDs.
  bool anonymous = false;
  std::vector<std::string> failing_codes; ///< codes of fail/error findings (sorted, unique); a
                                          ///< failing result without one gives "<check id>"
  std::vector<std::string> warning_codes; ///< codes of warn findings in warning results
  std::vector<CodeOnGpu> failing;         ///< failing_codes with their GPUs (sorted, unique)
  std::vector<CodeOnGpu> warnings;        ///< warning_codes with their GPUs (sorted, unique)
  std::vector<std::string> notes;         ///< what was odd about the file, e.g. a newer schema
};

/// Read one report file's text. Fails with a reason fit for "FILE: reason" when the text is empty,
/// not JSON, or JSON that is not a gpucheck report (a snapshot is named as such).
Expected<NodeReport> read_node_report(const std::string& text, const std::string& source);

/// "GPU 1 (1320924004411)": the index, then the serial (the board to pull), else the UUID;
/// empty when the code is not a GPU's.
std::string gpu_label(const CodeOnGpu& item);

/// Whether a verdict counts as a failing node (fail or error; an unknown verdict too).
bool is_failing(const std::string& verdict);

} // namespace gpucheck::fleet
