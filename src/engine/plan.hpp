#pragma once
/// The GPU engine's plan: which GPU work runs when, written as named rules, apart from the
/// mechanism that carries it out (scheduler.hpp). Pure: no processes, no clocks.
///
/// A plan is a list of jobs (one child per work and GPU) and, for each job, the conditions under
/// which it may build its context (Step::setup) and start its gated, timed work (Step::go). Each
/// condition names the rule that asked for it, so a trace or a test failure says why a job
/// waited. The invariants the rules exist to keep are checked by tests over simulated runs
/// (tests/unit/engine/engine_plan_test.cpp.cpp), not by pinning the lists below.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gpucheck::engine {

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
/// memtest and burn are the long level's (`--level long`): the memory test over nearly all free
/// memory, then the sustained GEMM burn on every GPU at once. They run in one child per GPU after
/// every other job of the run has gone (rule long_after_standard), for --duration each.
///
/// A built-in work is one constant here and its row in k_work_table below; a check of its own
/// folder (src/gpu_checks/) adds its work at start-up with add_work().
struct Work {
  uint8_t id = 0;
  friend constexpr auto operator<=>(Work, Work) = default;
  static const Work compute, bandwidth, copies_together, local_copies, cudnn, peers, nccl, memtest,
      burn;
};
inline constexpr Work Work::compute{0};
inline constexpr Work Work::bandwidth{2};
inline constexpr Work Work::copies_together{3};
inline constexpr Work Work::local_copies{4};
inline constexpr Work Work::cudnn{5};
inline constexpr Work Work::peers{6};
inline constexpr Work Work::nccl{7};
inline constexpr Work Work::memtest{8};
inline constexpr Work Work::burn{9};

/// Which child a work's job runs in (rule same_child).
enum class WorkChild {
  /// Its GPU's one child (gpu-device): one after another on one context. cuDNN's work, the
  /// last, prepares from the start on a lane (a thread) of its own beside the others.
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
};

/// Every work, in the order of the gated work (and of the works in a shared child). The works of
/// one check follow one another.
inline constexpr WorkRow k_work_table[] = {
    // The FMA chains and the reduction.
    {Work::compute, "compute", "gpu.compute", "gpu-compute", WorkChild::shared, 32, 32, 32},
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
    // The least: the small verified cases and their workspace; wanted: the large timed cases,
    // cuDNN's and cuBLASLt's modules, workspace.
    {Work::cudnn, "cudnn", "gpu.cudnn", "gpu-cudnn", WorkChild::shared, 96, 640, 64},
    // What each GPU sends and receives, at the smallest size; a 64 MiB copy each way. Its
    // buffers are taken and filled before its gate.
    {Work::peers, "peers", "gpu.p2p", "gpu-peers", WorkChild::spanning, 2 * 4, 2 * 64, 2 * 64},
    // NCCL's own buffers and the smallest size; and a 256 MiB sum in place.
    {Work::nccl, "nccl", "gpu.nccl", "gpu-peers", WorkChild::spanning, 256 + 1, 2 * 256, 2 * 256},
    // The long level sizes itself to the GPU's free memory (not budgeted).
    {Work::memtest, "memtest", "gpu.memtest", "gpu-memtest", WorkChild::long_level, 64, 64, 64},
    {Work::burn, "burn", "gpu.burn", "gpu-burn", WorkChild::long_level, 64, 64, 64},
};

/// Every work in order: k_work_table with the added works after streams (before the copies).
std::span<const WorkRow> work_table();
/// Add a check's own work (a shared-child work of one GPU; row.work is ignored) before any plan
/// is made, and return the Work it gets. Throws std::logic_error for a name, mode or check that
/// a work already has, or a child other than WorkChild::shared.
Work add_work(WorkRow row);

/// The row of a work.
const WorkRow& work_row(Work work);

/// Whether one job of this work uses every GPU of the run (peers, nccl) rather than one.
bool spans_gpus(Work work);
/// Whether it is a work of the long level (memtest, burn).
bool is_long(Work work);
/// The long level's works, in order.
std::vector<Work> long_works();

/// Every work of a standard run on any machine, in the order of k_work_table (copies_together,
/// which only a machine with several GPUs runs, is not among them, nor the long level's works).
std::vector<Work> all_works();
/// "gpu-compute", ...: the child mode that does it alone ("" for copies_together, which runs
/// only in the shared child).
std::string_view child_mode(Work work);
/// The child mode that does several works in one context, in order ("gpu-device").
std::string_view shared_child_mode();
/// "compute", ...: a work's name in the shared child's arguments and result lines.
std::string_view work_name(Work work);
/// The work of a name; nullopt for an unknown one.
std::optional<Work> work_named(std::string_view name);

/// Which works share a child process (rule same_child, WorkChild): every standard work of one GPU
/// runs in one child, in the table's order, on one context: the driver initialises one (process,
/// GPU) pair at a time (docs/performance.md), so a second child per GPU costs a driver start on
/// every GPU. cuDNN's work prepares on a lane of its own in that child
/// from the start (CudnnLane, src/gpu/gpu_children.hpp); the long level's works form a group of
/// their own. Works not in `works` are left out; empty groups are dropped. Works that span GPUs
/// are never in these groups (spanning_works()).
std::vector<std::vector<Work>> child_groups(const std::vector<Work>& works);
/// The works of `works` that span GPUs, in order: they run in one child of their own.
std::vector<Work> spanning_works(const std::vector<Work>& works);
/// "gpu.compute", ...: the check that judges it.
std::string_view check_id(Work work);
/// The work of a check id; nullopt for checks that run no GPU work.
std::optional<Work> work_for_check(std::string_view check_id);

/// Which transition of a job a condition holds back.
enum class Step { setup, go };

/// What a condition waits for.
enum class Await {
  context_built, ///< the other job built its context (or ended)
  ready,         ///< the other job is prepared and waits at its gate (or got further, or ended)
  done,          ///< the other job is done with its gated work (or ended)
  exited,        ///< the other job's process is gone (its teardown included)
  probes_over,   ///< gpucheck's own probes are over (no other job named)
};

struct Condition {
  std::string_view rule; ///< the rule that asked for it (k_rules in plan.cpp)
  Step step = Step::go;
  Await await = Await::done;
  std::optional<size_t> job; ///< the other job (index into Plan::jobs); unset for probes_over
};

/// How a GPU's work runs, chosen from its free memory before any context exists.
enum class GpuMode {
  run,  ///< its child runs its works
  skip, ///< not even one context and the smallest buffers fit: no active check here
};
std::string_view to_string(GpuMode mode);

/// What the planner knows of one GPU before any context is built (the census).
struct GpuFacts {
  std::optional<uint64_t> free_bytes;  ///< unknown when NVML could not tell
  std::optional<uint64_t> total_bytes; ///< likewise
  /// Processes other than gpucheck's own use the GPU ("pid (name)", ...): the long level's
  /// works, which take nearly all its memory and its full power for minutes, are left out.
  std::vector<std::string> other_processes;
  /// Why this run does not test the GPU at all (another run's turn did not come): "" to test it.
  std::string not_tested_reason;
};

/// Device memory the planner counts per job (docs/engine.md, "Memory"): a context after
/// gpucheck shrinks its stack reservation, the extra a context holds while it is being built,
/// and each work's buffers: the least it can run with and what it uses when it can.
struct MemoryModel {
  uint64_t context_bytes = 288ULL << 20;             ///< a context as measured, with a margin
  uint64_t context_build_extra_bytes = 264ULL << 20; ///< the more it holds while it is built
  /// What NCCL allocates on each GPU for its own channels, beyond gpucheck's buffers: as
  /// measured on four GPUs (docs/performance.md), with a margin for eight.
  uint64_t nccl_own_bytes = 3ULL << 30;
  /// The least buffers the work can run with.
  uint64_t min_bytes(Work work) const;
  /// What it uses when it can.
  uint64_t wanted_bytes(Work work) const;
  /// What it holds before its gate, beyond its context (cuDNN's small verified cases, as
  /// measured: docs/performance.md).
  uint64_t prepare_bytes(Work work) const;
};

/// The most gpucheck takes on a GPU, contexts included: 1 GiB, and at most 10% of what is free.
uint64_t gpu_budget_bytes(uint64_t free_bytes);

struct PlannedGpu {
  GpuMode mode = GpuMode::run;
  uint64_t budget_bytes = 0; ///< gpu_budget_bytes(free), or the cap when free is unknown
  /// The most gpucheck may hold on the GPU at any moment, every child included: the budget, or,
  /// where the spanning child prepares beside the per-GPU work (span_beside_on_idle_gpus), 10%
  /// of the free memory: the per-GPU jobs stay within the budget, the spanning child the rest.
  uint64_t courtesy_bytes = 0;
  /// The buffers each work of this GPU's child may allocate beside its context and what cuDNN's
  /// lane holds (lane_bytes).
  uint64_t allowance_bytes = 0;
  std::string reason; ///< why skip, in plain words
  /// Why the long level's works are left out of this GPU (other processes use it), when they are.
  std::string long_skip_reason;
};

struct PlannedJob {
  Work work = Work::compute;
  size_t gpu = 0; ///< index into the plan's GPUs
  std::vector<Condition> conditions;
  uint64_t allowance_bytes = 0; ///< the device buffers it may allocate (sent with its setup)
  /// The job before it in the same child (same_child): this job builds no context; it starts
  /// preparing, on that child's context, as soon as that job says `done`.
  std::optional<size_t> after_in_child;
  /// Whether another job follows it in the same child: this job's part is over (it "exits") at
  /// its `done`, since its child goes on to the next work rather than tearing down.
  bool followed_in_child = false;
  /// What its child's cuDNN lane holds beside it (its preparation, from the child's start to
  /// cuDNN's own turn): counted with this job's memory.
  uint64_t lane_bytes = 0;
  /// The GPUs a spanning job uses (plan indices, `gpu` first); empty for a job on one GPU.
  std::vector<size_t> span;
  /// Its child builds its contexts as soon as it starts, before its setup, which then only
  /// releases its preparation (span_beside_on_idle_gpus): the engine starts it once every
  /// context of the per-GPU jobs on its GPUs is built, and the plan counts its contexts held
  /// from the start.
  bool contexts_at_start = false;
};

/// Whether `job` uses GPU `gpu` (its own, or one of its span).
bool uses_gpu(const PlannedJob& job, size_t gpu);

/// Device memory the plan counts for a job in `state` (0 when it holds none): its context, the
/// extra while the context is built, what it holds before its gate, its allowance after.
/// Tests check that a GPU's sum stays within its budget at every moment of simulated runs.
uint64_t modelled_bytes(const PlannedJob& job, int state, const MemoryModel& memory);

struct Plan {
  std::vector<PlannedGpu> gpus;
  std::vector<PlannedJob> jobs; ///< jobs of skipped GPUs are left out
  /// Why the NCCL all-reduce is not run in the spanning child ("" when it is): NCCL's own
  /// buffers take more than gpucheck's budget on each GPU (1.6 GiB per GPU on four H100s, NCCL
  /// 2.28), so it runs only where no other process uses any GPU of the span (rule
  /// nccl_on_idle_gpus), unless `force_long` (--level long --force).
  std::string nccl_skip_reason;
  /// Rule span_beside_on_idle_gpus: the spanning child builds its contexts and initialises NCCL
  /// beside the per-GPU work (every GPU of its span idle and with room), and only its timed work
  /// waits for every other job to have gone.
  bool span_beside = false;
};

/// The plan for `works` on these GPUs. Rules (plan.cpp, k_rules): one child per GPU does its works
/// in order; copies are timed alone on the host, with every context of the per-GPU work built,
/// every earlier job gone and (the child's own doing) every cuDNN lane prepared; cuDNN's timed
/// work after every copy; device-local copies' and cuDNN's timed work after the probes; a
/// spanning job (peers) times its copies once every other
/// job on its GPUs has gone (peers_after_all), and builds its contexts then too unless every GPU of
/// its span is idle and has room (span_beside_on_idle_gpus: its contexts and NCCL's initialisation
/// beside the per-GPU work, once each GPU's own contexts are built).
///
/// The long level's works (long_after_standard): a GPU's memory test builds its context once
/// every other job of the run has gone; burn_together: every GPU's burn starts in one step, once
/// each is prepared. On a GPU that other processes use they are left out unless `force_long`.
Plan make_plan(const std::vector<Work>& works, const std::vector<GpuFacts>& gpus,
               const MemoryModel& memory = {}, bool force_long = false);

/// The conditions of `job` for `step`.
std::vector<Condition> conditions_of(const PlannedJob& job, Step step);

} // namespace gpucheck::engine
