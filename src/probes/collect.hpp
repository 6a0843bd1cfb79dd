#pragma once
/// Parent-side probing: local facts (/proc, /sys, /dev, env, files) directly, NVIDIA libraries
/// through children in parallel; everything merged into one SystemSnapshot.

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "gpucheck/model/snapshot.hpp"
#include "probes/sysroot.hpp"

namespace gpucheck::probes {

struct ProbeOptions {
  std::string sysroot = "/";
  std::chrono::milliseconds child_timeout{15000};
  /// --quick: skip loading the heavy libraries (cuBLAS pulls ~500 MB of cuBLASLt; cuDNN's engine
  /// sub-libraries ~400 MB): their copies are still listed from disk, cuDNN's core is still loaded.
  bool quick = false;
  /// --python PATH (repeatable): more interpreters to examine.
  std::vector<std::string> python_interpreters;
  /// --import: import each framework found, in a child interpreter with `import_timeout`.
  bool import_frameworks = false;
  /// Whether interpreters may be run at all (the query and --import children). nullopt: only on
  /// the real root; a fixture's interpreters are not this machine's (tests may set true).
  std::optional<bool> run_interpreters;
  /// The query child's deadline; an interpreter is queried only when its environment's files
  /// cannot say (read_python_layout).
  std::chrono::milliseconds python_query_timeout{2000};
  std::chrono::milliseconds import_timeout{120000};
  /// Called before the children that load cuDNN start (after the other children and the
  /// library discovery): the GPU checks' children, started ahead, use it to build their first
  /// contexts undisturbed (docs/checks.md, "How the GPU checks are scheduled"). May block.
  std::function<void()> before_cudnn_children;
};

/// Probe the machine. Never throws for a broken system: gaps become ProbeIssues or nullopts.
SystemSnapshot collect_snapshot(const ProbeOptions& options, const Environment& env);

// Local probes, each a pure function of the sysroot and environment (unit-tested on fixtures).
KernelModuleInfo probe_kernel_module(const Sysroot& root);
EnvironmentInfo probe_environment(const Sysroot& root, const Environment& env);
HostInfo probe_host(const Sysroot& root);
/// Whether an nv-fabricmanager process is in /proc (this PID namespace only); nullopt when /proc
/// lists no process at all (not mounted, or a fixture without one).
std::optional<bool> fabric_manager_running(const Sysroot& root);
/// `notes`: where a refusal to run nvcc as root goes (path_trust.hpp), when given.
ToolkitInfo probe_toolkit(const Sysroot& root, const Environment& env,
                          std::vector<ProbeIssue>* notes = nullptr);
/// Every copy of each family's libraries on disk (no loading): cudart, cudnn, cublas, nccl,
/// plus libcuda ("cuda") and NVML ("nvml").
std::vector<LibraryFamily> discover_libraries(const Sysroot& root, const Environment& env);

/// Merge NVML's GPUs with the driver API's devices (by PCI bus id, then UUID).
std::vector<GpuInfo> merge_gpus(std::vector<GpuInfo> nvml_gpus, const CudaDriverInfo& cuda);

/// Normalise a PCI bus id: "00000000:3B:00.0" and "0000:3b:00.0" -> "0000:3b:00.0".
std::string normalize_bus_id(std::string_view bus_id);

} // namespace gpucheck::probes
