#pragma once
/// What the active GPU checks share (common.cpp): each one's work runs per GPU, or over
/// every GPU, in an isolated child process scheduled by the GPU engine (src/engine/), and its
/// check turns the child's JSON into results with findings and metrics through run_per_gpu() or
/// run_spanning() and its judge. The passive gpu_*.cpp checks read the snapshot only; every
/// check's factory is declared in checks.hpp.

#include <nlohmann/json_fwd.hpp>

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "checks/checks.hpp"
#include "findings/codes.hpp"
#include "gpucheck/check.hpp"
#include "protocol/payloads.hpp"

namespace gpucheck::checks {

/// One GPU that the active checks will use.
struct GpuTarget {
  int ordinal = 0;   ///< CUDA ordinal (after CUDA_VISIBLE_DEVICES)
  int gpu_index = 0; ///< NVML index when known, else the ordinal
  std::string name;
  std::string pci_bus_id;
  std::optional<int> pcie_gen;   ///< the link's best generation (NVML max for this system)
  std::optional<int> pcie_width; ///< the link's best width
  std::vector<std::string> other_processes; ///< "pid (name)" of processes already on the GPU
  std::string uuid;                         ///< NVML's, when known
  std::string compute_mode;  ///< NVML's ("default", "exclusive_process", ...), when known
  bool fell_off_bus = false; ///< the kernel log has Xid 79 or "fallen off the bus" for it
};

/// The GPUs to test, or the reason there are none. Uses the snapshot's driver-API facts; when
/// the snapshot has none at all (the CUDA probe did not run), asks a gpu-devices child.
struct GpuTargets {
  std::vector<GpuTarget> gpus;
  std::string skip_reason; ///< set when gpus is empty
};
GpuTargets gpu_targets(const SystemSnapshot& snapshot, std::chrono::milliseconds timeout);

/// A judge turns one child's JSON payload into the check's own findings, summary and extra
/// metrics; the common part (child failures, failed calls, verifications, metrics, contention)
/// is already done.
struct Judgement {
  std::string summary;
  std::vector<Finding> findings;
  bool skipped = false; ///< the work could not start for a reason that is no fault (summary says)
  /// Metric name -> what its sibling GPUs compare besides its value (Metric::sibling_basis).
  std::vector<std::pair<std::string, SiblingBasis>> sibling_bases;
};
using Judge = std::function<Judgement(const GpuTarget& gpu, const nlohmann::json& payload)>;

/// Give the metrics the judge named their sibling basis (Judgement::sibling_bases).
void apply_sibling_bases(const Judgement& judgement, std::vector<Metric>& metrics);

/// Before a GPU's payload is judged: fold into it what another work of the same check measured
/// (gpu.bandwidth's device-local copy), adding a finding for that work's own failure.
using Amend = std::function<void(size_t index, const GpuTarget& gpu, nlohmann::json& payload,
                                 std::vector<Finding>& findings)>;

/// The check's results, one per GPU: its child's outcome from the GPU engine
/// (`context.gpu_engine`, src/engine/), judged; a GPU the engine skipped (no memory to spare,
/// another run's turn) is a warning that names why, a busy GPU labels the figures; a long work
/// the engine left out of a GPU that other processes use (Skip::busy, no --force) is a skip
/// with the engine's reason.
std::vector<CheckResult> run_per_gpu(const CheckInfo& info, const CheckContext& context,
                                     const Judge& judge, const Amend& amend = {});

/// A judge of a work that spans GPUs: its payload, whether any GPU of the run had other
/// processes; appends its metrics.
using SpanJudge = std::function<Judgement(const nlohmann::json& payload, bool contended,
                                          std::vector<Metric>& metrics)>;

/// The one result of a check whose work spans GPUs (gpu.p2p, gpu.nccl): skip with one GPU (or
/// none), else its job's outcome from the GPU engine (spanning_result), judged, with contention
/// from every GPU's census; a job that could not run is a skip or a warning naming why.
std::vector<CheckResult> run_spanning(const CheckInfo& info, const CheckContext& context,
                                      const SpanJudge& judge);

/// A child's envelope (failure, verifications, metrics), read once from its payload, or why it
/// could not be read.
using ReadEnvelope = Expected<protocol::ChildEnvelope>;

/// The findings every GPU child can produce: its `failure` and each failed verification (an
/// envelope that could not be read: that, named).
std::vector<Finding> common_findings(const std::string& check_title, const GpuTarget& gpu,
                                     const ReadEnvelope& envelope);
std::vector<Finding> common_findings(const std::string& check_title, const GpuTarget& gpu,
                                     const nlohmann::json& payload);

/// Metrics of the envelope, with "measured under contention" added when `contended`.
std::vector<Metric> payload_metrics(const ReadEnvelope& envelope, bool contended);
std::vector<Metric> payload_metrics(const nlohmann::json& payload, bool contended);

/// The finding of a failed verification of `kind` (a check of its own folder, src/gpu_checks/,
/// adds its kinds at start-up); unknown kinds are gpu.compute_mismatch.
void add_verify_code(std::string_view kind, FindingCode code);
/// A verification kind whose mismatches its check's judge names in full (gpu.memtest's): no
/// common finding is made of it.
void add_own_verify_kind(std::string_view kind);

/// Whether every verification in the payload found no mismatch (and there was at least one).
bool all_verified(const nlohmann::json& payload);
bool all_verified(const protocol::ChildEnvelope& envelope);

/// The finding for a kernel module that did not load, or nullopt when it loaded. `device`: the
/// payload's, for the GPU's compute capability (sm_00 when the child had none).
std::optional<Finding>
kernel_load_finding(const GpuTarget& gpu, const protocol::KernelModuleReport& module,
                    const std::optional<protocol::DeviceDescription>& device);

/// The judgement for a result whose own fields cannot be read (protocol/payloads.hpp's error, which
/// names the key): gpu.child_failed, never a pass.
Judgement unreadable_result(std::string_view check_title, const GpuTarget& gpu, const Error& error);

/// For the checks that judge what they measured without gpucheck's kernels: the judgement when
/// the child could not get to its work (its result cannot be read, or a stage failed), or nullopt
/// when it did.
std::optional<Judgement> judge_child_setup(std::string_view check_title, const GpuTarget& gpu,
                                           const nlohmann::json& payload);

/// For the checks that need gpucheck's kernels: the judgement when the child could not get to its
/// work (its result cannot be read, the kernels did not load, or a stage failed), or nullopt when
/// it did.
std::optional<Judgement> judge_kernel_setup(std::string_view check_title, const GpuTarget& gpu,
                                            const nlohmann::json& payload);

} // namespace gpucheck::checks
