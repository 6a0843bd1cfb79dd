#pragma once
/// The GPU engine's plan: which GPU work runs when, written as named rules, apart from the
/// mechanism that carries it out (scheduler.hpp). Pure: no processes, no clocks.
///
/// A plan is a list of jobs (one child per work and GPU) and, for each job, the conditions under
/// which it may build its context (Step::setup) and start its gated, timed work (Step::go). Each
/// condition names the rule that asked for it, so a trace or a test failure says why a job
/// waited. The invariants the rules exist to keep are checked by tests over simulated runs
/// (tests/unit/engine/engine_plan_test.cpp), not by pinning the lists below.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/works.hpp"

namespace gpucheck::engine {

// What a work is (its id, name, check, child mode, child and memory): one table, in protocol/
// so that the children (gpu/) run the same works the plan orders.
using protocol::add_work;
using protocol::check_id;
using protocol::child_mode;
using protocol::Copies;
using protocol::shared_child_mode;
using protocol::spanning_child_mode;
using protocol::Work;
using protocol::work_for_check;
using protocol::work_name;
using protocol::work_named;
using protocol::work_row;
using protocol::work_table;
using protocol::WorkChild;
using protocol::WorkRow;

/// What the copy rules know of a work (its row's WorkRow::copies).
Copies copies_of(Work work);
/// Whether one job of this work uses every GPU of the run (peers, nccl) rather than one.
bool spans_gpus(Work work);
/// Whether it is a work of the long level (memtest, burn).
bool is_long(Work work);
/// The long level's works, in order.
std::vector<Work> long_works();

/// Every work of a standard run on any machine, in the table's order (the host copies on every
/// GPU at once, Copies::host_together, which only a machine with several GPUs runs, are not among
/// them, nor the long level's works).
std::vector<Work> all_works();

/// Which works share a child process (rule same_child, WorkChild): every standard work of one GPU
/// runs in one child, in the table's order, on one context: the driver initialises one (process,
/// GPU) pair at a time (docs/performance.md), so a second child per GPU costs a driver start on
/// every GPU. A lane's work (cuDNN's, WorkRow::lane) prepares on a thread of its own in that
/// child from the start (src/gpu/work_lane.hpp); the long level's works form a group of
/// their own. Works not in `works` are left out; empty groups are dropped. Works that span GPUs
/// are never in these groups (spanning_works()).
std::vector<std::vector<Work>> child_groups(const std::vector<Work>& works);
/// The works of `works` that span GPUs, in order: they run in one child of their own.
std::vector<Work> spanning_works(const std::vector<Work>& works);

/// Which transition of a job a condition holds back.
enum class Step { setup, go };

/// What a condition waits for.
enum class Await {
  context_built, ///< the other job built its context (or ended)
  ready,         ///< the other job is prepared and waits at its gate (or got further, or ended)
  done,          ///< the other job is done with its gated work (or ended)
  /// the other job's child handed in its whole result (its GPU work and checks are over); the
  /// kernel may still be freeing its process (or it ended)
  concluded,
  exited,      ///< the other job's process is gone (its teardown included)
  probes_over, ///< gpucheck's own probes are over (no other job named)
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
  Work work{};
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
