#include "engine/plan.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <stdexcept>

namespace gpucheck::engine {

namespace {
constexpr uint64_t k_mib = 1ULL << 20;
constexpr uint64_t k_budget_cap_bytes = 1ULL << 30;

// The rules, by name (docs/engine.md, "Plan", says why each exists).
constexpr std::string_view k_same_child = "same_child";
constexpr std::string_view k_copies_alone = "copies_alone";
constexpr std::string_view k_copies_together = "copies_together";
constexpr std::string_view k_local_copies_last = "local_copies_last";
constexpr std::string_view k_cudnn_after_copies = "cudnn_after_copies";
constexpr std::string_view k_after_probes = "after_probes";
constexpr std::string_view k_peers_after_all = "peers_after_all";
constexpr std::string_view k_span_beside = "span_beside_on_idle_gpus";
constexpr std::string_view k_long_after_standard = "long_after_standard";
constexpr std::string_view k_burn_together = "burn_together";

// A job's life as numbered events: setup (0), context built (1), ready (2), go (3), done (4),
// exited (5). Each happens after the one before it; setup and go also after their conditions.
constexpr int k_setup_event = 0;
constexpr int k_go_event = 3;

int event_of(Step step) {
  return step == Step::setup ? k_setup_event : k_go_event;
}

int event_of(Await await) {
  switch (await) {
  case Await::context_built:
    return 1;
  case Await::ready:
    return 2;
  case Await::done:
    return 4;
  case Await::concluded:
  case Await::exited:
  case Await::probes_over:
    return 5;
  }
  return 5;
}

/// Whether event `event` of job `job` can only happen after event `before` of job `other`.
bool happens_after(const std::vector<PlannedJob>& jobs, size_t job, int event, size_t other,
                   int before) {
  std::vector<std::array<bool, 6>> seen(jobs.size(), std::array<bool, 6>{});
  std::vector<std::pair<size_t, int>> stack{{job, event}};
  while (!stack.empty()) {
    const auto [j, e] = stack.back();
    stack.pop_back();
    if (j == other && e >= before) {
      return true;
    }
    if (seen[j][static_cast<size_t>(e)]) {
      continue;
    }
    seen[j][static_cast<size_t>(e)] = true;
    if (e > 0) {
      stack.emplace_back(j, e - 1);
    }
    for (const Condition& c : jobs[j].conditions) {
      if (c.job && event_of(c.step) == e) {
        stack.emplace_back(*c.job, event_of(c.await));
      }
    }
  }
  return false;
}

/// Add the condition unless the awaited event can only come after the held step (a deadlock):
/// a rule never makes the plan wait for itself.
void add(std::vector<PlannedJob>& jobs, size_t job, Condition condition) {
  if (condition.job &&
      (*condition.job == job || happens_after(jobs, *condition.job, event_of(condition.await), job,
                                              event_of(condition.step)))) {
    return;
  }
  jobs[job].conditions.push_back(condition);
}
} // namespace

bool spans_gpus(Work work) {
  return work_row(work).child == WorkChild::spanning;
}

bool is_long(Work work) {
  return work_row(work).child == WorkChild::long_level;
}

bool uses_gpu(const PlannedJob& job, size_t gpu) {
  return job.gpu == gpu || std::find(job.span.begin(), job.span.end(), gpu) != job.span.end();
}

namespace {
/// The works of the table that are in `works` and run in `child`, in the table's order.
std::vector<Work> works_in(const std::vector<Work>& works, WorkChild child) {
  std::vector<Work> out;
  for (const WorkRow& row : work_table()) {
    if (row.child == child && std::find(works.begin(), works.end(), row.work) != works.end()) {
      out.push_back(row.work);
    }
  }
  return out;
}
} // namespace

std::vector<Work> spanning_works(const std::vector<Work>& works) {
  return works_in(works, WorkChild::spanning);
}

std::vector<Work> long_works() {
  std::vector<Work> works;
  for (const WorkRow& row : work_table()) {
    if (row.child == WorkChild::long_level) {
      works.push_back(row.work);
    }
  }
  return works;
}

Copies copies_of(Work work) {
  return work_row(work).copies;
}

std::vector<Work> all_works() {
  std::vector<Work> works;
  for (const WorkRow& row : work_table()) {
    if (row.copies != Copies::host_together && row.child != WorkChild::long_level) {
      works.push_back(row.work);
    }
  }
  return works;
}

std::vector<std::vector<Work>> child_groups(const std::vector<Work>& works) {
  std::vector<std::vector<Work>> groups;
  for (const WorkChild child : {WorkChild::shared, WorkChild::long_level}) {
    if (std::vector<Work> group = works_in(works, child); !group.empty()) {
      groups.push_back(std::move(group));
    }
  }
  return groups;
}

std::string_view to_string(GpuMode mode) {
  switch (mode) {
  case GpuMode::run:
    return "run";
  case GpuMode::skip:
    return "skip";
  }
  return "run";
}

uint64_t MemoryModel::min_bytes(Work work) const {
  return work_row(work).min_mib * k_mib;
}

uint64_t MemoryModel::wanted_bytes(Work work) const {
  return work_row(work).wanted_mib * k_mib;
}

uint64_t MemoryModel::prepare_bytes(Work work) const {
  return work_row(work).prepare_mib * k_mib;
}

namespace {
/// What a job holds before its gate: a job over several GPUs sizes what it takes before its
/// gate (its buffers, NCCL's) to its allowance; the others hold a fixed amount.
uint64_t prepared(const PlannedJob& job, const MemoryModel& memory) {
  const uint64_t bytes = memory.prepare_bytes(job.work);
  return job.span.empty() ? bytes : std::min(bytes, job.allowance_bytes);
}
} // namespace

uint64_t modelled_bytes(const PlannedJob& job, int state, const MemoryModel& memory) {
  // States as numbered in scheduler.hpp's JobState: 0 waiting, 1 setting up, 2 preparing,
  // 3 ready, 4 running, 5 paused, 6 done, 7 ended.
  switch (state) {
  case 0:
    return job.contexts_at_start ? memory.context_bytes : 0;
  case 1:
    return memory.context_bytes + memory.context_build_extra_bytes;
  case 2:
  case 3:
    return memory.context_bytes + job.lane_bytes + prepared(job, memory);
  case 4:
  case 5:
  case 6:
    // A child's buffers stay within its allowance and what its work uses.
    return memory.context_bytes + job.lane_bytes +
           std::max(std::min(job.allowance_bytes, memory.wanted_bytes(job.work)),
                    prepared(job, memory));
  default:
    return 0;
  }
}

uint64_t gpu_budget_bytes(uint64_t free_bytes) {
  return std::min(k_budget_cap_bytes, free_bytes / 10);
}

std::vector<Condition> conditions_of(const PlannedJob& job, Step step) {
  std::vector<Condition> out;
  for (const Condition& c : job.conditions) {
    if (c.step == step) {
      out.push_back(c);
    }
  }
  return out;
}

namespace {
/// The most of `what` over `works`.
template <typename F> uint64_t most(const std::vector<Work>& works, F what) {
  uint64_t out = 0;
  for (const Work w : works) {
    out = std::max(out, what(w));
  }
  return out;
}

/// What the lane (cuDNN's) holds beside the works before it in a child of `group`: its
/// preparation.
uint64_t lane_bytes_of(const std::vector<Work>& group, const MemoryModel& memory) {
  const auto lane = std::find_if(group.begin(), group.end(), &protocol::is_lane);
  return lane != group.end() ? memory.prepare_bytes(*lane) : 0;
}

PlannedGpu plan_gpu(const std::vector<std::vector<Work>>& groups, const GpuFacts& facts,
                    const MemoryModel& memory) {
  PlannedGpu gpu;
  gpu.budget_bytes = facts.free_bytes ? gpu_budget_bytes(*facts.free_bytes) : k_budget_cap_bytes;
  const auto min_of = [&memory](Work w) { return memory.min_bytes(w); };
  // The child: its context while it is built, or its context, cuDNN's lane and its least buffers.
  uint64_t one_child = 0;
  uint64_t lane = 0;
  for (const std::vector<Work>& group : groups) {
    lane = std::max(lane, lane_bytes_of(group, memory));
    one_child =
        std::max(one_child, memory.context_bytes +
                                std::max(memory.context_build_extra_bytes,
                                         lane_bytes_of(group, memory) + most(group, min_of)));
  }
  if (gpu.budget_bytes >= one_child) {
    gpu.mode = GpuMode::run;
    gpu.allowance_bytes = gpu.budget_bytes - memory.context_bytes - lane;
  } else {
    gpu.mode = GpuMode::skip;
    gpu.reason = fmt::format("gpucheck may use {} MiB here (1 GiB at most, and 10% of the {} MiB "
                             "free) but one check needs at least {} MiB",
                             gpu.budget_bytes / k_mib, facts.free_bytes.value_or(0) / k_mib,
                             one_child / k_mib);
  }
  gpu.courtesy_bytes = gpu.budget_bytes;
  if (!facts.not_tested_reason.empty()) {
    gpu.mode = GpuMode::skip; // no job, so no rule waits for one that will never run
    gpu.reason = facts.not_tested_reason;
    gpu.allowance_bytes = 0;
  }
  return gpu;
}
} // namespace

namespace {
using Jobs = std::vector<PlannedJob>;
using Groups = std::vector<std::vector<Work>>;

/// The job of `work` on GPU `gpu`, if planned.
std::optional<size_t> job_of(const Jobs& jobs, Work work, size_t gpu) {
  for (size_t i = 0; i < jobs.size(); ++i) {
    if (jobs[i].work == work && jobs[i].gpu == gpu) {
      return i;
    }
  }
  return std::nullopt;
}

/// Each GPU's plan, with the long level's skip where other processes use it.
void plan_gpus(Plan& plan, const Groups& groups, const std::vector<GpuFacts>& gpus,
               const MemoryModel& memory, bool force_long) {
  for (const GpuFacts& facts : gpus) {
    plan.gpus.push_back(plan_gpu(groups, facts, memory));
    if (!facts.other_processes.empty() && !force_long) {
      plan.gpus.back().long_skip_reason = fmt::format(
          "other processes use this GPU ({}): the long level takes nearly all of its free memory "
          "and its full power for minutes, which would disturb them; --force runs it anyway",
          fmt::join(facts.other_processes, ", "));
    }
  }
}

/// Jobs in the order of the gated work: compute and streams of every GPU, then each GPU's
/// copies, then each GPU's cuDNN; none on a skipped GPU, no long work where it is skipped.
void add_per_gpu_jobs(Plan& plan, const std::vector<Work>& works, size_t gpu_count) {
  for (const WorkRow& row : work_table()) {
    const Work w = row.work;
    for (size_t g = 0; g < gpu_count; ++g) {
      if (plan.gpus[g].mode != GpuMode::skip &&
          std::find(works.begin(), works.end(), w) != works.end() &&
          !(is_long(w) && !plan.gpus[g].long_skip_reason.empty())) {
        plan.jobs.push_back({w, g, {}});
      }
    }
  }
}

/// same_child: each work of a shared child after the one before it, on its context; the works
/// before cuDNN's share the child with its lane's preparation.
void rule_same_child(Plan& plan, const Groups& groups, const MemoryModel& memory) {
  Jobs& jobs = plan.jobs;
  for (size_t g = 0; g < plan.gpus.size(); ++g) {
    if (plan.gpus[g].mode == GpuMode::skip) {
      continue;
    }
    for (const std::vector<Work>& group : groups) {
      const uint64_t lane = lane_bytes_of(group, memory);
      std::optional<size_t> previous;
      for (const Work w : group) {
        const std::optional<size_t> j = job_of(jobs, w, g);
        if (!j) {
          continue; // a long work left out of this GPU
        }
        if (!protocol::is_lane(w)) {
          jobs[*j].lane_bytes = lane;
        }
        if (previous) {
          jobs[*j].after_in_child = previous;
          jobs[*previous].followed_in_child = true;
          add(jobs, *j, {k_same_child, Step::setup, Await::exited, previous});
        }
        previous = j;
      }
    }
  }
}

/// copies_alone: a GPU's copies are timed with no other gated work anywhere, no context being
/// built, no teardown of an earlier job, and no cuDNN preparation on any GPU; one GPU's copies
/// after the other's.
void rule_copies_alone(Jobs& jobs) {
  for (size_t b = 0; b < jobs.size(); ++b) {
    if (copies_of(jobs[b].work) != Copies::host_alone) {
      continue;
    }
    for (size_t o = 0; o < jobs.size(); ++o) {
      if (o == b) {
        continue;
      }
      const Work other = jobs[o].work;
      const Copies copies = copies_of(other);
      if (copies == Copies::host_alone) {
        add(jobs, b,
            o < b ? Condition{k_copies_alone, Step::go, Await::exited, o}
                  : Condition{k_copies_alone, Step::go, Await::ready, o});
      } else if (copies == Copies::host_together) {
        // An earlier GPU's part of the copies together prepares (takes its buffers) before
        // these copies, not beside them; a later GPU's comes after them anyway.
        if (const auto own = job_of(jobs, jobs[b].work, jobs[o].gpu); own && *own < b) {
          add(jobs, b, {k_copies_alone, Step::go, Await::ready, o});
        }
      } else if (protocol::is_lane(other) || copies == Copies::device_local) {
        // cuDNN's lane: each child holds its copies' `ready` until its lane is prepared, and the
        // copies go once every GPU's copies are ready (above), so no lane prepares beside any
        // GPU's copies; its timed work comes after them (cudnn_after_copies). The local copies
        // come after every host copy (local_copies_last).
        continue;
      } else if (work_row(other).child == WorkChild::shared) {
        // The shared child's works before the copies (compute, streams): gone before them.
        add(jobs, b, {k_copies_alone, Step::go, Await::exited, o});
      }
      // Spanning and long works come later (peers_after_all, long_after_standard).
    }
  }
}

/// copies_together: every GPU's host copies at once, released in one step once each GPU's part
/// is prepared, with every GPU's own copies, compute and streams over (every cuDNN lane is
/// prepared by then, as copies_alone says).
void rule_copies_together(Jobs& jobs) {
  for (size_t t = 0; t < jobs.size(); ++t) {
    if (copies_of(jobs[t].work) != Copies::host_together) {
      continue;
    }
    for (size_t o = 0; o < jobs.size(); ++o) {
      if (o == t) {
        continue;
      }
      const Work other = jobs[o].work;
      if (copies_of(other) == Copies::host_together) {
        add(jobs, t, {k_copies_together, Step::go, Await::ready, o});
      } else if (!protocol::is_lane(other) && copies_of(other) != Copies::device_local &&
                 work_row(other).child == WorkChild::shared) {
        add(jobs, t, {k_copies_together, Step::go, Await::exited, o});
      }
    }
  }
}

/// local_copies_last: the device-local copy once every GPU's host copies are over, on every GPU
/// at once (each reads and writes its own memory), and once the probes are over (the probe
/// child that loads every cuDNN library slowed it: docs/performance.md).
void rule_local_copies_last(Jobs& jobs) {
  for (size_t l = 0; l < jobs.size(); ++l) {
    if (copies_of(jobs[l].work) != Copies::device_local) {
      continue;
    }
    for (size_t o = 0; o < jobs.size(); ++o) {
      const Copies other = copies_of(jobs[o].work);
      if (o == l) {
        continue;
      }
      if (other == Copies::device_local) {
        add(jobs, l, {k_local_copies_last, Step::go, Await::ready, o});
      } else if (other == Copies::host_alone || other == Copies::host_together) {
        add(jobs, l, {k_local_copies_last, Step::go, Await::exited, o});
      }
    }
    add(jobs, l, {k_after_probes, Step::go, Await::probes_over, std::nullopt});
  }
}

/// cudnn_after_copies and after_probes: cuDNN's timed convolutions once every GPU's copies are
/// over, and once the probes (which load cuDNN) are over. Its turn in its child comes after its
/// GPU's copies; it prepared on its lane before any GPU's copies.
void rule_cudnn_after_copies(Jobs& jobs) {
  for (size_t c = 0; c < jobs.size(); ++c) {
    if (!protocol::is_lane(jobs[c].work)) {
      continue;
    }
    for (size_t o = 0; o < jobs.size(); ++o) {
      if (is_long(jobs[o].work)) {
        continue; // after it (long_after_standard)
      }
      const bool same_gpu_before = jobs[o].gpu == jobs[c].gpu && o != c;
      if (same_gpu_before || copies_of(jobs[o].work) != Copies::none) {
        add(jobs, c, {k_cudnn_after_copies, Step::go, Await::exited, o});
      }
    }
    add(jobs, c, {k_after_probes, Step::go, Await::probes_over, std::nullopt});
  }
}

/// Each job's buffers: the GPU's allowance; cuDNN's timed work comes after the works before it
/// in its child have freed theirs, so it may use all but its context.
void set_allowances(Plan& plan, const MemoryModel& memory) {
  for (PlannedJob& job : plan.jobs) {
    const PlannedGpu& gpu = plan.gpus[job.gpu];
    job.allowance_bytes = gpu.allowance_bytes;
    if (protocol::is_lane(job.work)) {
      job.allowance_bytes = gpu.budget_bytes - memory.context_bytes;
    }
  }
}

/// nccl_on_idle_gpus: NCCL's own buffers are beyond gpucheck's budget (its channels' buffers for
/// every peer, whatever NCCL_BUFFSIZE: docs/performance.md); beside another process they could
/// take memory it needs, so the all-reduce runs only on GPUs no other process uses. The job
/// stays planned; its child is told not to run it. "" when it may run.
std::string nccl_skip_reason(const std::vector<size_t>& testable, const std::vector<GpuFacts>& gpus,
                             const std::vector<Work>& spanning, bool force_long) {
  if (testable.size() < 2 || force_long ||
      std::none_of(spanning.begin(), spanning.end(),
                   [](Work w) { return work_row(w).beyond_budget; })) {
    return "";
  }
  std::vector<std::string> busy;
  for (const size_t g : testable) {
    for (const std::string& p : gpus[g].other_processes) {
      if (std::find(busy.begin(), busy.end(), p) == busy.end()) {
        busy.push_back(p);
      }
    }
  }
  if (busy.empty()) {
    return "";
  }
  return fmt::format("other processes use these GPUs ({}): NCCL's own buffers take more than "
                     "gpucheck's 1 GiB budget on each GPU (1.6 GiB on four H100s), which could "
                     "take memory they need; --level long --force runs it anyway",
                     fmt::join(busy, ", "));
}

/// span_beside_on_idle_gpus: whether every GPU of the span is used by no other process and 10%
/// of its free memory holds gpucheck's per-GPU budget, the spanning child's context and buffers
/// and NCCL's own; then that is the courtesy on those GPUs.
bool span_fits_beside(Plan& plan, const std::vector<size_t>& testable,
                      const std::vector<GpuFacts>& gpus, const MemoryModel& memory,
                      uint64_t span_allowance, bool with_nccl) {
  const bool fits = std::all_of(testable.begin(), testable.end(), [&](size_t g) {
    const uint64_t needs = plan.gpus[g].budget_bytes + memory.context_bytes + span_allowance +
                           (with_nccl ? memory.nccl_own_bytes : 0);
    return gpus[g].other_processes.empty() && gpus[g].free_bytes &&
           plan.gpus[g].mode == GpuMode::run && *gpus[g].free_bytes / 10 >= needs;
  });
  if (fits) {
    for (const size_t g : testable) {
      plan.gpus[g].courtesy_bytes = *gpus[g].free_bytes / 10;
    }
  }
  return fits;
}

/// The first spanning job's conditions on the per-GPU job `o`. peers_after_all: its timed work
/// once every other job on its GPUs has handed in its result (its GPU work and checks over);
/// without span_beside, its contexts too, once they have exited (their memory freed).
/// span_beside_on_idle_gpus: NCCL's initialisation slowed timed kernels and device-local copies
/// on its GPUs but not host copies, so it prepares once the kernels' own timed work is over
/// (compute, streams, the memory pool; the copies then only take their pinned buffers) or parked
/// at its gate (local copies, cuDNN), beside the host copies, and the local copies and cuDNN's
/// timed work wait until it is prepared; its contexts come before, beside compute and streams
/// (contexts_at_start), which they did not slow.
void rule_span_beside(Jobs& jobs, size_t span, size_t o, bool beside) {
  if (!beside) {
    add(jobs, span, {k_peers_after_all, Step::setup, Await::exited, o});
    return;
  }
  add(jobs, span, {k_peers_after_all, Step::go, Await::concluded, o});
  const Work other = jobs[o].work;
  if (copies_of(other) == Copies::host_together) {
    return; // host copies too, after the GPU's own
  }
  if (copies_of(other) == Copies::device_local) {
    add(jobs, o, {k_span_beside, Step::go, Await::ready, span});
    return;
  }
  if (copies_of(other) == Copies::host_alone) {
    add(jobs, span, {k_span_beside, Step::setup, Await::context_built, o});
  } else if (protocol::is_lane(other)) {
    // Without copies on its GPU, once its lane is prepared (parked at its gate); with them, the
    // lane prepares beside the memory pool and is as a rule done when the pool is.
    const bool host_copies = std::any_of(jobs.begin(), jobs.end(), [&jobs, o](const PlannedJob& j) {
      return j.gpu == jobs[o].gpu && j.span.empty() && copies_of(j.work) == Copies::host_alone;
    });
    if (!host_copies) {
      add(jobs, span, {k_span_beside, Step::setup, Await::ready, o});
    }
    add(jobs, o, {k_span_beside, Step::go, Await::ready, span});
  } else {
    add(jobs, span, {k_span_beside, Step::setup, Await::exited, o});
  }
}

/// Spanning works (peers, then NCCL): one job each over every GPU that can be tested, when
/// there are two or more, one after the other in one child.
void add_spanning_jobs(Plan& plan, const std::vector<Work>& wanted,
                       const std::vector<GpuFacts>& gpus, const MemoryModel& memory,
                       bool force_long) {
  std::vector<size_t> testable;
  for (size_t g = 0; g < gpus.size(); ++g) {
    if (plan.gpus[g].mode != GpuMode::skip) {
      testable.push_back(g);
    }
  }
  const std::vector<Work> spanning = spanning_works(wanted);
  plan.nccl_skip_reason = nccl_skip_reason(testable, gpus, spanning, force_long);
  uint64_t span_allowance = UINT64_MAX;
  for (const size_t g : testable) {
    span_allowance = std::min(span_allowance, plan.gpus[g].budget_bytes - memory.context_bytes);
  }
  if (testable.size() < 2 || spanning.empty()) {
    return;
  }
  const bool with_nccl = std::any_of(spanning.begin(), spanning.end(),
                                     [](Work w) { return work_row(w).beyond_budget; });
  plan.span_beside = span_fits_beside(plan, testable, gpus, memory, span_allowance, with_nccl);
  Jobs& jobs = plan.jobs;
  const size_t per_gpu_jobs = jobs.size();
  std::optional<size_t> previous;
  for (const Work w : spanning) {
    PlannedJob job{w, testable.front(), {}};
    job.span = testable;
    job.allowance_bytes = span_allowance;
    job.contexts_at_start = plan.span_beside && !previous;
    jobs.push_back(job);
    const size_t j = jobs.size() - 1;
    if (previous) {
      jobs[j].after_in_child = previous;
      jobs[*previous].followed_in_child = true;
      add(jobs, j, {k_same_child, Step::setup, Await::exited, previous});
    } else {
      for (size_t o = 0; o < per_gpu_jobs; ++o) {
        if (!is_long(jobs[o].work)) { // the long level comes after it (long_after_standard)
          rule_span_beside(jobs, j, o, plan.span_beside);
        }
      }
    }
    previous = j;
  }
}

/// long_after_standard: the long level's child builds its context once every other job of the
/// run has gone (nothing of the standard run is measured beside it, and it may take nearly all
/// free memory); its buffers are sized by the child from what is free then, not budgeted.
/// burn_together: every GPU's job of a work that runs together (WorkRow::together: the burn) goes
/// in one step once each is prepared (the node's power and heat at full load, and the GPUs
/// compared with one another under the same conditions).
void rule_long_after_standard(Jobs& jobs, const std::vector<GpuFacts>& gpus) {
  for (size_t l = 0; l < jobs.size(); ++l) {
    if (!is_long(jobs[l].work)) {
      continue;
    }
    jobs[l].allowance_bytes = gpus[jobs[l].gpu].free_bytes.value_or(0);
    if (!jobs[l].after_in_child) {
      for (size_t o = 0; o < jobs.size(); ++o) {
        if (!is_long(jobs[o].work)) {
          add(jobs, l, {k_long_after_standard, Step::setup, Await::exited, o});
        }
      }
    }
    if (work_row(jobs[l].work).together) {
      for (size_t o = 0; o < jobs.size(); ++o) {
        if (o != l && jobs[o].work == jobs[l].work) {
          add(jobs, l, {k_burn_together, Step::go, Await::ready, o});
        }
      }
    }
  }
}
} // namespace

Plan make_plan(const std::vector<Work>& wanted, const std::vector<GpuFacts>& gpus,
               const MemoryModel& memory, bool force_long) {
  Plan plan;
  // The standard works decide how each GPU runs; the long level's come after them, alone.
  std::vector<Work> standard;
  std::copy_if(wanted.begin(), wanted.end(), std::back_inserter(standard),
               [](Work w) { return !is_long(w); });
  Groups groups = child_groups(standard);
  plan_gpus(plan, groups, gpus, memory, force_long);
  std::vector<Work> long_level;
  std::copy_if(wanted.begin(), wanted.end(), std::back_inserter(long_level), &is_long);
  if (!long_level.empty()) {
    groups.push_back(child_groups(long_level).front());
  }
  std::vector<Work> works;
  for (const std::vector<Work>& group : groups) {
    works.insert(works.end(), group.begin(), group.end());
  }
  add_per_gpu_jobs(plan, works, gpus.size());
  rule_same_child(plan, groups, memory);
  rule_copies_alone(plan.jobs);
  rule_copies_together(plan.jobs);
  rule_local_copies_last(plan.jobs);
  rule_cudnn_after_copies(plan.jobs);
  set_allowances(plan, memory);
  add_spanning_jobs(plan, wanted, gpus, memory, force_long);
  rule_long_after_standard(plan.jobs, gpus);
  return plan;
}

} // namespace gpucheck::engine
