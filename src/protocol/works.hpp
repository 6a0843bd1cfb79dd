#pragma once
/// The works of gpucheck's GPU children, one table: each work's id, its name in a shared
/// child's arguments and result lines, the check that judges it, the child mode that runs it
/// alone, which child it runs in and the memory the engine counts for it. The engine plans
/// these works (engine/plan.hpp) and the children run them (gpu/gpu_children.hpp, which adds only
/// how each runs); a check of its own folder (src/gpu_checks/) adds its row with add_work().
/// A protocol header: std only.

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace gpucheck::protocol {

/// The active GPU checks' work: every work is added at start-up by a check of its own folder
/// (src/gpu_checks/, add_work()): each GPU's shared child's (compute, streams, the copies, cuDNN's
/// lane, ...), the child's over every GPU of the run (gpu.p2p's peer copies, then gpu.nccl's
/// all-reduce, planned only on a machine with two or more GPUs that can be tested), and the long
/// level's (gpu.memtest, then gpu.burn on every GPU at once), which run in one child per GPU after
/// every other job of the run has gone (rule long_after_standard).
struct Work {
  uint8_t id = 0;
  friend constexpr auto operator<=>(Work, Work) = default;
};

/// Which child a work's job runs in (rule same_child).
enum class WorkChild {
  /// Its GPU's one child (gpu-device): one after another on one context. Its lane's work
  /// (cuDNN's), the last, prepares from the start on a thread of its own beside the others.
  shared,
  /// One child over every GPU of the run (gpu-peers), its works one after another, timed after
  /// every other job (peers_after_all)
  spanning,
  long_level, ///< the long level's child per GPU, after every other job (long_after_standard)
};

/// Copies between the host and the GPU, or within it, as the engine's rules time them
/// (engine/plan.cpp: copies_alone, copies_together, local_copies_last).
enum class Copies : uint8_t {
  none,
  /// Host copies timed alone: no other gated work on any GPU, no context being built, no lane
  /// preparing; one GPU's after another's.
  host_alone,
  /// Host copies on every GPU at once, after each GPU's alone (the host's aggregate, as DCGM's
  /// PCIe test reports it): planned only on a machine with several GPUs.
  host_together,
  /// A copy within the GPU's memory, once every host copy is over, on every GPU at once.
  device_local,
};

/// One work as the plan knows it. Its memory (MiB) is what MemoryModel counts: the least buffers
/// it can run with, what it uses when it can, and what it holds before its gate.
struct WorkRow {
  Work work;
  std::string_view name;  ///< in the shared child's arguments and result lines
  std::string_view check; ///< the check that judges it
  std::string_view mode;  ///< the child mode that does it alone ("": none)
  WorkChild child;
  uint64_t min_mib;
  uint64_t wanted_mib;
  uint64_t prepare_mib;
  /// A long-level work: what the terminal's progress line calls it while it runs.
  std::string_view phase = {};
  /// Every GPU's job of it starts its timed work in one step once each is prepared (rule
  /// burn_together: the node's power and heat at full load, the GPUs compared under the same
  /// conditions).
  bool together = false;
  /// A lane's work: what messages call it ("cuDNN"); empty for any other. In its GPU's shared
  /// child it prepares on a thread of its own from the start, beside the works before it, and
  /// does its timed work last (gpu/work_lane.hpp; the engine's rules copies_alone,
  /// cudnn_after_copies, span_beside).
  std::string_view lane = {};
  /// What the engine's copy rules know of it (gpu.bandwidth's three works).
  Copies copies = Copies::none;
  /// A further work of its check, after its first (whose result the check reads, and whose
  /// child mode does both): `check` repeats the first's, `mode` is empty.
  bool part = false;
  /// It takes device memory beyond gpucheck's budget (NCCL's own buffers for every peer,
  /// MemoryModel::nccl_own_bytes), so it runs only on GPUs no other process uses (rule
  /// nccl_on_idle_gpus).
  bool beyond_budget = false;
};

/// Every work in order: the shared child's (those that copy after the others, its lane last),
/// the spanning child's, then the long level's child's, each in the order added.
std::span<const WorkRow> work_table();
/// Add a check's own work (row.work is ignored) before any plan is made, and return the Work it
/// gets. Throws std::logic_error for a name or mode that a work already has, a check that has a
/// work unless this is its `part`, a second lane, or a spanning work with a mode of its own (its
/// child's is spanning_child_mode()).
Work add_work(WorkRow row);

/// The row of a work.
const WorkRow& work_row(Work work);
/// Whether it is a lane's work (WorkRow::lane).
bool is_lane(Work work);

/// "gpu-compute", ...: the child mode that does it alone ("" for a check's further part, which
/// its first work's mode does too, and for a spanning work: spanning_child_mode()).
std::string_view child_mode(Work work);
/// The child mode that does several works in one context, in order ("gpu-device").
std::string_view shared_child_mode();
/// The child mode over several GPUs that does the spanning works, in order ("gpu-peers").
std::string_view spanning_child_mode();
/// "compute", ...: a work's name in the shared child's arguments and result lines.
std::string_view work_name(Work work);
/// The work of a name; nullopt for an unknown one.
std::optional<Work> work_named(std::string_view name);
/// "gpu.compute", ...: the check that judges it.
std::string_view check_id(Work work);
/// The work of a check id; nullopt for checks that run no GPU work.
std::optional<Work> work_for_check(std::string_view check_id);

} // namespace gpucheck::protocol
