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

/// The active GPU checks' work. copies_together is gpu.bandwidth's second part on a machine
/// with several GPUs: host copies on every GPU at once (the host's aggregate, as DCGM's PCIe
/// test reports it), after each GPU's copies were timed alone.
///
/// peers and nccl span GPUs: one child sees every GPU of the run and does gpu.p2p's peer-to-peer
/// copies, then gpu.nccl's all-reduce; they are planned only on a machine with two or more GPUs
/// that can be tested.
///
/// local_copies is gpu.bandwidth's last part: the device-local copy, once every host copy is over,
/// on every GPU at once (each GPU's memory is its own), after the probes and after the spanning
/// child's preparation (NCCL's initialisation slowed it by a sixth).
///
/// The long level's works (`--level long`: gpu.memtest, then gpu.burn on every GPU at once) are
/// added from their folders. They run in one child per GPU after every other job of the run has
/// gone (rule long_after_standard), for --duration each.
///
/// A built-in work is one constant here and its row in k_work_table below; a check of its own
/// folder (src/gpu_checks/) adds its work at start-up with add_work().
struct Work {
  uint8_t id = 0;
  friend constexpr auto operator<=>(Work, Work) = default;
  static const Work bandwidth, copies_together, local_copies, peers, nccl;
};
inline constexpr Work Work::bandwidth{2};
inline constexpr Work Work::copies_together{3};
inline constexpr Work Work::local_copies{4};
inline constexpr Work Work::peers{6};
inline constexpr Work Work::nccl{7};

/// Which child a work's job runs in (rule same_child).
enum class WorkChild {
  /// Its GPU's one child (gpu-device): one after another on one context. Its lane's work
  /// (cuDNN's), the last, prepares from the start on a thread of its own beside the others.
  shared,
  spanning, ///< one child over every GPU of the run, timed after every other job (peers_after_all)
  long_level, ///< the long level's child per GPU, after every other job (long_after_standard)
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
};

/// Every work, in the order of the gated work (and of the works in a shared child: a lane's
/// last). The works of one check follow one another.
inline constexpr WorkRow k_work_table[] = {
    // The least: the smallest host copies that still measure something; wanted: their device
    // side.
    {Work::bandwidth, "bandwidth", "gpu.bandwidth", "gpu-bandwidth", WorkChild::shared, 4 * 4,
     2 * 64, 4 * 4},
    // The host copies' device buffers, kept from gpu.bandwidth's own (only on several GPUs).
    {Work::copies_together, "copies_together", "gpu.bandwidth", "", WorkChild::shared, 2 * 4,
     2 * 64, 2 * 4},
    // The device-local copy's two buffers, taken after its gate.
    {Work::local_copies, "local_copies", "gpu.bandwidth", "", WorkChild::shared, 2 * 16, 2 * 256,
     0},
    // What each GPU sends and receives, at the smallest size; a 64 MiB copy each way. Its
    // buffers are taken and filled before its gate.
    {Work::peers, "peers", "gpu.p2p", "gpu-peers", WorkChild::spanning, 2 * 4, 2 * 64, 2 * 64},
    // NCCL's own buffers and the smallest size; and a 256 MiB sum in place.
    {Work::nccl, "nccl", "gpu.nccl", "gpu-peers", WorkChild::spanning, 256 + 1, 2 * 256, 2 * 256},
};

/// Every work in order: k_work_table with the added works of a shared child before the copies,
/// then those of the long level's child in the order they were added.
std::span<const WorkRow> work_table();
/// Add a check's own work (of one GPU's shared or long-level child; row.work is ignored) before
/// any plan is made, and return the Work it gets. Throws std::logic_error for a name, mode or
/// check that a work already has, or a spanning child.
Work add_work(WorkRow row);

/// The row of a work.
const WorkRow& work_row(Work work);
/// Whether it is a lane's work (WorkRow::lane).
bool is_lane(Work work);

/// "gpu-compute", ...: the child mode that does it alone ("" for copies_together, which runs
/// only in the shared child).
std::string_view child_mode(Work work);
/// The child mode that does several works in one context, in order ("gpu-device").
std::string_view shared_child_mode();
/// "compute", ...: a work's name in the shared child's arguments and result lines.
std::string_view work_name(Work work);
/// The work of a name; nullopt for an unknown one.
std::optional<Work> work_named(std::string_view name);
/// "gpu.compute", ...: the check that judges it.
std::string_view check_id(Work work);
/// The work of a check id; nullopt for checks that run no GPU work.
std::optional<Work> work_for_check(std::string_view check_id);

} // namespace gpucheck::protocol
