#include "engine/scheduler.hpp"

#include <unistd.h>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <climits>
#include <utility>

#include "process/trace.hpp"
#include "protocol/payloads.hpp"

namespace gpucheck::engine {

namespace {
using Clock = std::chrono::steady_clock;
constexpr size_t k_no_job = SIZE_MAX;
constexpr uint64_t k_mib = 1ULL << 20;

[[maybe_unused]] bool at_least(JobState state, JobState than) {
  return static_cast<int>(state) >= static_cast<int>(than);
}
} // namespace

std::string_view to_string(JobState state) {
  switch (state) {
  case JobState::waiting_for_setup:
    return "waiting_for_setup";
  case JobState::setting_up:
    return "setting_up";
  case JobState::preparing:
    return "preparing";
  case JobState::ready:
    return "ready";
  case JobState::running:
    return "running";
  case JobState::paused:
    return "paused";
  case JobState::done:
    return "done";
  case JobState::ended:
    return "ended";
  }
  return "ended";
}

bool condition_met(const Condition& condition, const std::vector<JobState>& states,
                   bool probes_over) {
  if (condition.await == Await::probes_over) {
    return probes_over;
  }
  if (!condition.job || *condition.job >= states.size()) {
    return true;
  }
  const JobState other = states[*condition.job];
  switch (condition.await) {
  case Await::context_built:
    return at_least(other, JobState::preparing);
  case Await::ready:
    return at_least(other, JobState::ready);
  case Await::done:
    return at_least(other, JobState::done);
  case Await::concluded: // a child concluded at its result has ended (nothing_awaits_exit)
  case Await::exited:
  case Await::probes_over:
    return other == JobState::ended;
  }
  return true;
}

bool may_step(const PlannedJob& job, Step step, const std::vector<JobState>& states,
              bool probes_over) {
  return std::all_of(job.conditions.begin(), job.conditions.end(), [&](const Condition& c) {
    return c.step != step || condition_met(c, states, probes_over);
  });
}

JobState after_message(JobState state, protocol::GateMessage message) {
  // A message counts only in the states where the protocol allows it; anything else (a repeat,
  // a message ahead of the parent's own step, garbage) leaves the state as it is.
  switch (message) {
  case protocol::GateMessage::context_built:
    return state == JobState::setting_up ? JobState::preparing : state;
  case protocol::GateMessage::ready:
    return state == JobState::setting_up || state == JobState::preparing ? JobState::ready : state;
  case protocol::GateMessage::paused:
    return state == JobState::running ? JobState::paused : state;
  case protocol::GateMessage::done:
    // Also before its go: a work that failed while preparing says it is over.
    return state == JobState::running || state == JobState::paused || state == JobState::preparing
               ? JobState::done
               : state;
  case protocol::GateMessage::setup:
  case protocol::GateMessage::go:
  case protocol::GateMessage::resume:
  case protocol::GateMessage::stop:
    return state;
  }
  return state;
}

JobState state_after_setup(const PlannedJob& job) {
  return job.after_in_child ? JobState::preparing : JobState::setting_up;
}

JobState state_after_done(const PlannedJob& job) {
  return job.followed_in_child ? JobState::ended : JobState::done;
}

std::vector<protocol::CensusProcess> GpuReport::other_processes() const {
  std::vector<protocol::CensusProcess> all;
  for (const auto* census : {&before, &after}) {
    if (!census->has_value()) {
      continue;
    }
    for (const protocol::CensusProcess& p : (*census)->processes) {
      if (std::none_of(all.begin(), all.end(),
                       [&p](const protocol::CensusProcess& q) { return q.pid == p.pid; })) {
        all.push_back(p);
      }
    }
  }
  return all;
}

Scheduler::Scheduler(SchedulerOptions options) : m_options(std::move(options)) {
  // A signal stops the GPU work through interrupt(): the long works report what they did.
  m_group.follow_interrupts(false);
}

Scheduler::~Scheduler() = default;

void Scheduler::probes_over() {
  m_probes_over.store(true);
  m_group.wake();
}

void Scheduler::cancel() {
  m_stop.store(true);
  m_group.cancel();
}

void Scheduler::interrupt() {
  m_interrupted.store(true);
  m_stop.store(true); // the turn waiters give up
  m_group.wake();
}

std::optional<Scheduler::Progress> Scheduler::progress() const {
  const std::lock_guard<std::mutex> guard(m_progress_lock);
  if (!m_progress || !m_phase_start) {
    return m_progress;
  }
  Progress now = *m_progress;
  now.elapsed_s = std::chrono::duration<double>(Clock::now() - *m_phase_start).count();
  return now;
}

std::chrono::milliseconds Scheduler::timeout_of(const Job& job) const {
  return is_long(job.work) ? m_options.timeout + m_options.long_duration : m_options.timeout;
}

void Scheduler::update_progress() {
  // The phase: the latest long work of the table that runs now (the burn once any GPU burns),
  // since its first go.
  std::optional<Progress> now;
  std::optional<Clock::time_point> since;
  const std::span<const WorkRow> table = work_table();
  for (auto row = table.rbegin(); row != table.rend(); ++row) {
    if (row->child != WorkChild::long_level) {
      continue;
    }
    for (const Job& job : m_jobs) {
      if (job.work != row->work || job.state != JobState::running) {
        continue;
      }
      if (!now) {
        now = Progress{};
        now->phase = row->phase;
        now->total_s = std::chrono::duration<double>(m_options.long_duration).count();
      }
      ++now->gpus;
      if (job.went && (!since || *job.went < *since)) {
        since = job.went;
      }
    }
    if (now) {
      break;
    }
  }
  const std::lock_guard<std::mutex> guard(m_progress_lock);
  m_progress = now;
  m_phase_start = since;
}

bool Scheduler::await_plan(std::chrono::milliseconds limit) {
  std::unique_lock<std::mutex> guard(m_lock);
  // A run that waits for another run's turn has no plan for a while: the probes go on.
  return m_changed.wait_for(guard, limit, [this] { return m_plan_ready || m_turn_waited; });
}

bool Scheduler::await_contexts(std::chrono::milliseconds limit) {
  std::unique_lock<std::mutex> guard(m_lock);
  return m_changed.wait_for(guard, limit, [this] { return m_contexts_ready || m_turn_waited; });
}

std::vector<size_t> Scheduler::gpus_of(const Slot& slot) const {
  const Job& head = m_jobs[slot.jobs.front()];
  if (head.planned && !m_plan.jobs[*head.planned].span.empty()) {
    return m_plan.jobs[*head.planned].span;
  }
  return {slot.gpu};
}

void Scheduler::spawn(Slot& slot) {
  process::ChildRequest request;
  const protocol::VisibleGpu& gpu = m_options.gpus[slot.gpu];
  const Work first = m_jobs[slot.jobs.front()].work;
  const bool shared = slot.jobs.size() > 1;
  std::vector<std::string> names;
  for (const size_t j : slot.jobs) {
    names.emplace_back(work_name(m_jobs[j].work));
  }
  const std::string works = protocol::work_list_arg(names);
  std::string ordinal = "0";
  if (gpu.visible_devices.empty()) {
    ordinal = std::to_string(gpu.ordinal >= 0 ? gpu.ordinal : static_cast<int>(slot.gpu));
  } else {
    // The child sees this GPU alone, as ordinal 0: cuInit initialises one GPU, not all.
    request.env.emplace_back("CUDA_VISIBLE_DEVICES", gpu.visible_devices);
  }
  request.mode = std::string(shared ? shared_child_mode() : child_mode(first));
  request.args = {ordinal};
  if (spans_gpus(first)) {
    // One child over every GPU of its span: all of them visible to it, in the plan's order.
    const std::vector<size_t> span = gpus_of(slot);
    std::string visible;
    std::string ordinals;
    bool by_uuid = true;
    for (size_t i = 0; i < span.size(); ++i) {
      const protocol::VisibleGpu& g = m_options.gpus[span[i]];
      by_uuid = by_uuid && !g.visible_devices.empty();
      visible += (i == 0 ? "" : ",") + g.visible_devices;
    }
    request.env.clear();
    for (size_t i = 0; i < span.size(); ++i) {
      const protocol::VisibleGpu& g = m_options.gpus[span[i]];
      const int own = g.ordinal >= 0 ? g.ordinal : static_cast<int>(span[i]);
      ordinals += (i == 0 ? "" : ",") + std::to_string(by_uuid ? static_cast<int>(i) : own);
    }
    if (by_uuid) {
      request.env.emplace_back("CUDA_VISIBLE_DEVICES", visible);
    }
    // NVLink SHARP (NVLS) builds multicast objects: it stays off in gpucheck's NCCL, whatever the
    // machine sets (every other NCCL_* variable reaches NCCL unchanged).
    request.env.emplace_back("NCCL_NVLS_ENABLE", "0");
    if (!m_plan.nccl_skip_reason.empty()) {
      // nccl_on_idle_gpus: the child writes the all-reduce's line as not run, with this reason.
      request.env.emplace_back("GPUCHECK_NCCL_NOT_RUN", m_plan.nccl_skip_reason);
    }
    const Job& head = m_jobs[slot.jobs.front()];
    if (head.planned && m_plan.jobs[*head.planned].contexts_at_start) {
      request.env.emplace_back("GPUCHECK_CONTEXTS_AT_START", "1");
    }
    request.mode = std::string(spanning_child_mode());
    request.args = {ordinals, works};
    if (m_options.long_level) {
      request.args.emplace_back("sweep");
    }
  } else if (shared) {
    request.args.push_back(works);
  }
  const auto override = m_options.job_override.find(first);
  if (override != m_options.job_override.end() && !override->second.empty()) {
    request.mode = override->second.front();
    request.args.assign(override->second.begin() + 1, override->second.end());
    if (shared) {
      request.args.push_back("works=" + works);
    }
  }
  if (is_long(first)) {
    request.env.emplace_back("GPUCHECK_LONG_DURATION_MS",
                             std::to_string(m_options.long_duration.count()));
  }
  request.timeout = timeout_of(m_jobs[slot.jobs.front()]);
  request.control_channel = true;
  request.deadline_by_owner = true;
  request.result_lines = shared;
  request.conclude_at_result = nothing_awaits_exit(slot);
  const size_t process = m_group.start(std::move(request));
  m_slot_of_process.resize(process + 1, k_no_job);
  m_slot_of_process[process] = static_cast<size_t>(&slot - m_slots.data());
  slot.process = process;
}

bool Scheduler::nothing_awaits_exit(const Slot& slot) const {
  // No rule awaits the exit of the child's last job: its result is taken as soon as it is
  // complete, without waiting for the kernel to free its context (slow with cuDNN's modules).
  const std::optional<size_t> last = m_jobs[slot.jobs.back()].planned;
  return m_planned && last &&
         std::none_of(m_plan.jobs.begin(), m_plan.jobs.end(), [&](const PlannedJob& other) {
           return std::any_of(
               other.conditions.begin(), other.conditions.end(),
               [&](const Condition& c) { return c.await == Await::exited && c.job == last; });
         });
}

bool Scheduler::per_gpu_contexts_built() const {
  // Every per-GPU job has its context or has ended.
  return std::all_of(m_jobs.begin(), m_jobs.end(), [this](const Job& job) {
    if (!job.planned || at_least(job.state, JobState::preparing) ||
        m_plan.jobs[*job.planned].after_in_child) {
      return true; // a job that follows another in its child builds no context
    }
    // A spanning job's contexts come after the others', a long job's later still.
    return !m_plan.jobs[*job.planned].span.empty() || is_long(job.work);
  });
}

void Scheduler::spawn_due() {
  // The driver initialises one process at a time, so a child's cuInit and context take several
  // times longer beside other children's (docs/performance.md, "What the driver's start costs").
  // Before the plan, each GPU's child starts; after it, a child starts once the jobs its setup
  // waits for have built their contexts.
  std::vector<bool> gave_up(m_turns.size(), false);
  for (size_t g = 0; g < m_turns.size(); ++g) {
    gave_up[g] = m_turns.outcome(g).needed && !m_turns.outcome(g).held;
  }
  if (m_interrupted.load()) {
    return; // the user stopped the run: nothing more starts
  }
  const std::vector<JobState> states = m_planned ? planned_states() : std::vector<JobState>{};
  // Every job the setup of `planned` waits for has reached `state` (or got further).
  const auto setup_waits_reached = [&states](const PlannedJob& planned, JobState state) {
    return std::all_of(planned.conditions.begin(), planned.conditions.end(),
                       [&states, state](const Condition& c) {
                         return c.step != Step::setup || !c.job ||
                                static_cast<int>(states[*c.job]) >= static_cast<int>(state);
                       });
  };
  for (Slot& slot : m_slots) {
    if (slot.process || (slot.gpu < gave_up.size() && gave_up[slot.gpu])) {
      continue;
    }
    const Job& head = m_jobs[slot.jobs.front()];
    bool due = false;
    if (spans_gpus(head.work)) {
      // A spanning child starts once the plan has it and every job it waits for has begun its
      // timed work: every context of theirs is built, so its cuInit (every GPU at once, the
      // slowest of any child's) holds up no one's, and it runs beside their timed work,
      // which needs no driver call that cuInit holds (docs/performance.md: the convolutions'
      // figures with and without it). Its contexts wait for their exit (peers_after_all).
      if (!m_planned || !head.planned) {
        continue;
      }
      const std::vector<size_t> span = gpus_of(slot);
      if (std::any_of(span.begin(), span.end(),
                      [&gave_up](size_t g) { return g < gave_up.size() && gave_up[g]; })) {
        continue;
      }
      // Beside the per-GPU work (span_beside_on_idle_gpus) it builds its contexts as it starts:
      // once every per-GPU child has built its own (a context built beside another's took three
      // times as long).
      const PlannedJob& planned = m_plan.jobs[*head.planned];
      due = planned.contexts_at_start ? per_gpu_contexts_built()
                                      : setup_waits_reached(planned, JobState::running);
    } else if (is_long(head.work)) {
      // The long level's child starts once every job before it is done with its timed work:
      // its cuInit is not beside anyone's measurement.
      if (!m_planned || !head.planned) {
        continue;
      }
      due = setup_waits_reached(m_plan.jobs[*head.planned], JobState::done);
    } else if (!m_planned) {
      // Before the plan, each GPU's first child (its only one in a standard run).
      due = std::none_of(m_slots.begin(), m_slots.end(), [&slot](const Slot& other) {
        return other.gpu == slot.gpu && &other < &slot;
      });
    } else if (head.planned) {
      due = setup_waits_reached(m_plan.jobs[*head.planned], JobState::preparing);
    }
    if (due) {
      spawn(slot);
    }
  }
}

void Scheduler::make_slots() {
  for (size_t g = 0; g < m_options.gpus.size(); ++g) {
    for (const std::vector<Work>& group : child_groups(m_options.works)) {
      Slot slot;
      slot.gpu = g;
      for (const Work work : group) {
        Job job;
        job.work = work;
        job.gpu = g;
        job.slot = m_slots.size();
        slot.jobs.push_back(m_jobs.size());
        m_jobs.push_back(job);
      }
      m_slots.push_back(std::move(slot));
    }
  }
  if (m_options.gpus.size() >= 2 && !spanning_works(m_options.works).empty()) {
    Slot slot;
    slot.gpu = 0; // moved to the plan's first GPU of its span once planned
    for (const Work work : spanning_works(m_options.works)) {
      Job job;
      job.work = work;
      job.gpu = 0;
      job.slot = m_slots.size();
      slot.jobs.push_back(m_jobs.size());
      m_jobs.push_back(job);
    }
    m_slots.push_back(std::move(slot));
  }
}

void Scheduler::run() {
  make_slots();
  take_turns();
  // The GPU work's own time limit runs from here: past it every child still alive is stopped.
  m_work_deadline = Clock::now() + m_options.work_limit;
  spawn_due();
  if (m_stop.load()) {
    // Cancelled or interrupted while waiting for a turn: nothing starts.
  } else if (m_options.census_override) {
    make_plan_from_census(*m_options.census_override);
  } else {
    process::ChildRequest census;
    census.mode = "gpu-census";
    census.args = {std::to_string(::getpid())};
    census.timeout = m_options.census_timeout;
    m_census_child = m_group.start(std::move(census));
  }
  const std::vector<process::ChildOutcome> outcomes = m_group.wait_all(this);
  {
    const std::lock_guard<std::mutex> guard(m_lock);
    m_contexts_ready = true;
    m_plan_ready = true;
  }
  m_changed.notify_all();
  for (const Job& job : m_jobs) {
    JobReport report;
    report.work = job.work;
    report.gpu = job.gpu;
    m_reports.push_back(std::move(report));
  }
  for (const Slot& slot : m_slots) {
    report_slot(slot, outcomes);
  }
  report_gpus();
  explain_jobs_without_outcome();
}

void Scheduler::report_gpus() {
  for (size_t g = 0; g < m_options.gpus.size(); ++g) {
    GpuReport gpu;
    gpu.visible = m_options.gpus[g];
    if (g < m_plan.gpus.size()) {
      gpu.plan = m_plan.gpus[g];
    }
    if (m_census) {
      if (const protocol::CensusGpu* c = m_census->find(gpu.visible.gpu)) {
        gpu.before = *c;
      }
    }
    if (m_census_after) {
      if (const protocol::CensusGpu* c = m_census_after->find(gpu.visible.gpu)) {
        gpu.after = *c;
      }
    }
    const TurnOutcome& turn = m_turns.outcome(g);
    gpu.lock_waited = turn.waited;
    gpu.waited_for_another_run = gpu.lock_waited > std::chrono::milliseconds(50);
    gpu.turn_not_taken = turn.needed && !turn.held;
    m_gpu_reports.push_back(std::move(gpu));
  }
}

void Scheduler::explain_jobs_without_outcome() {
  // Jobs stopped because the user interrupted the run: not a failure of the machine.
  if (m_interrupted.load()) {
    for (JobReport& report : m_reports) {
      if (report.outcome && report.outcome->failure &&
          report.outcome->failure->kind == ChildFailureKind::cancelled) {
        report.outcome.reset();
        report.skip = JobReport::Skip::stopped;
        report.skip_reason = "stopped: the run was interrupted before this check finished";
      }
    }
  }
  // Jobs on a GPU whose turn did not come (for a spanning job that did not run: on any GPU of
  // the run): another run's, or the wait was cut short by an interrupt.
  for (size_t j = 0; j < m_jobs.size(); ++j) {
    JobReport& report = m_reports[j];
    for (size_t g = 0; g < m_gpu_reports.size() && !report.outcome; ++g) {
      if (m_gpu_reports[g].turn_not_taken && (g == m_jobs[j].gpu || spans_gpus(m_jobs[j].work))) {
        report.skip = m_interrupted.load() ? JobReport::Skip::stopped : JobReport::Skip::other_run;
        report.skip_reason = m_interrupted.load()
                                 ? "stopped: the run was interrupted before this check ran"
                                 : turn_not_taken_reason(g);
        report.skip_is_contention = !m_interrupted.load();
        break;
      }
    }
  }
  // Jobs that never ran: why.
  for (size_t j = 0; j < m_jobs.size(); ++j) {
    JobReport& report = m_reports[j];
    if (report.outcome || report.skip != JobReport::Skip::none) {
      continue;
    }
    const size_t g = m_jobs[j].gpu;
    const PlannedGpu& plan = m_gpu_reports[g].plan;
    if (m_planned && spans_gpus(m_jobs[j].work)) {
      std::vector<std::string> reasons;
      for (const GpuReport& other : m_gpu_reports) {
        if (other.plan.mode == GpuMode::skip) {
          reasons.push_back(other.plan.reason);
          report.skip_is_contention = report.skip_is_contention || !other.other_processes().empty();
        }
      }
      report.skip = JobReport::Skip::no_memory;
      report.skip_reason = fmt::format("fewer than two GPUs can be tested{}",
                                       reasons.empty() ? std::string() : ": " + reasons.front());
    } else if (m_planned && plan.mode == GpuMode::skip) {
      report.skip = JobReport::Skip::no_memory;
      report.skip_reason = plan.reason;
      report.skip_is_contention = !m_gpu_reports[g].other_processes().empty();
    } else if (m_planned && is_long(m_jobs[j].work) && !plan.long_skip_reason.empty()) {
      report.skip = JobReport::Skip::busy;
      report.skip_reason = plan.long_skip_reason;
      report.skip_is_contention = true;
    } else if (m_interrupted.load()) {
      report.skip = JobReport::Skip::stopped;
      report.skip_reason = "stopped: the run was interrupted before this check ran";
    } else if (m_over_limit) {
      report.skip = JobReport::Skip::stopped;
      report.skip_reason = fmt::format(
          "not run: the GPU work's time limit of {:.0f} s for the whole run passed first",
          std::chrono::duration<double>(m_options.work_limit).count());
    } else {
      report.skip = JobReport::Skip::stopped;
      report.skip_reason = "the GPU work was stopped before this check ran";
    }
  }
}

std::string Scheduler::gpu_label(size_t g) const {
  const protocol::VisibleGpu& gpu = m_options.gpus[g];
  return !gpu.gpu.bus_id.empty() ? gpu.gpu.bus_id : gpu.visible_devices;
}

std::string Scheduler::turn_not_taken_reason(size_t g) const {
  const TurnOutcome& turn = m_turns.outcome(g);
  std::string who = "another gpucheck run on this host";
  if (turn.other_pid && *turn.other_pid > 0) {
    who += fmt::format(" (pid {})", *turn.other_pid);
  } else if (turn.other_pid) {
    who += " (in another PID namespace)";
  }
  return fmt::format("{} was testing GPU {} for all of this run's wait of {}: its turn did not "
                     "come (--wait-turn sets the wait)",
                     who, gpu_label(g), wait_text(m_options.turn_wait));
}

void Scheduler::take_turns() {
  // Each GPU's turn is named by its UUID (or what names it to CUDA).
  std::vector<std::string> names;
  for (const protocol::VisibleGpu& gpu : m_options.gpus) {
    names.push_back(!gpu.gpu.uuid.empty()          ? gpu.gpu.uuid
                    : !gpu.visible_devices.empty() ? gpu.visible_devices
                                                   : gpu.gpu.bus_id);
  }
  m_turns.take(names, m_options.turn_wait, &m_stop, [this](const TurnWait& wait) {
    {
      const std::lock_guard<std::mutex> guard(m_lock);
      m_turn_waited = true;
    }
    m_changed.notify_all();
    process::trace(fmt::format("GPU engine: waiting up to {} ms for GPU {}'s turn (pid {})",
                               wait.limit.count(), gpu_label(wait.gpu),
                               wait.holder ? std::to_string(*wait.holder) : "unknown"));
    if (m_options.on_turn_wait) {
      m_options.on_turn_wait(wait, gpu_label(wait.gpu));
    }
  });
}

void Scheduler::make_plan_from_census(const protocol::Census& census) {
  m_census = census;
  std::vector<GpuFacts> facts;
  for (const protocol::VisibleGpu& gpu : m_options.gpus) {
    GpuFacts f;
    if (const protocol::CensusGpu* c = census.find(gpu.gpu)) {
      f.free_bytes = c->free_bytes;
      f.total_bytes = c->total_bytes;
      for (const protocol::CensusProcess& p : c->processes) {
        f.other_processes.push_back(p.name.empty() ? fmt::format("pid {}", p.pid)
                                                   : fmt::format("{} ({})", p.pid, p.name));
      }
    }
    const size_t g = facts.size();
    if (m_turns.outcome(g).needed && !m_turns.outcome(g).held) {
      f.not_tested_reason = turn_not_taken_reason(g);
    }
    facts.push_back(f);
  }
  m_plan = make_plan(m_options.works, facts, m_options.memory, m_options.force_long);
  m_planned = true;
  {
    const std::lock_guard<std::mutex> guard(m_lock);
    m_plan_ready = true;
  }
  m_changed.notify_all();
  for (size_t p = 0; p < m_plan.jobs.size(); ++p) {
    for (Job& job : m_jobs) {
      if (job.work == m_plan.jobs[p].work && spans_gpus(job.work)) {
        // A spanning job's child sits on the first GPU of its span.
        job.planned = p;
        job.gpu = m_plan.jobs[p].gpu;
        m_slots[job.slot].gpu = job.gpu;
      } else if (job.work == m_plan.jobs[p].work && job.gpu == m_plan.jobs[p].gpu) {
        job.planned = p;
      }
    }
  }
  for (size_t g = 0; g < m_plan.gpus.size(); ++g) {
    if (process::tracing()) {
      process::trace(
          fmt::format("GPU engine: GPU {} {}: budget {} MiB, allowance {} MiB{}", g,
                      to_string(m_plan.gpus[g].mode), m_plan.gpus[g].budget_bytes / k_mib,
                      m_plan.gpus[g].allowance_bytes / k_mib,
                      m_plan.gpus[g].reason.empty() ? "" : ": " + m_plan.gpus[g].reason));
    }
  }
  for (Slot& slot : m_slots) {
    if (!m_jobs[slot.jobs.front()].planned && slot.process) {
      m_group.cancel_one(*slot.process, "not run: " + m_plan.gpus[slot.gpu].reason);
    } else if (slot.process && nothing_awaits_exit(slot)) {
      m_group.conclude_at_result(*slot.process);
    }
  }
  spawn_due();
}

std::vector<JobState> Scheduler::planned_states() const {
  std::vector<JobState> states(m_plan.jobs.size(), JobState::ended);
  for (const Job& job : m_jobs) {
    if (job.planned) {
      states[*job.planned] = job.state;
    }
  }
  return states;
}

void Scheduler::arm_deadline(Job& job) {
  const std::optional<size_t> process = m_slots[job.slot].process;
  if (!process) {
    return;
  }
  const auto now = Clock::now();
  switch (job.state) {
  case JobState::setting_up:
  case JobState::running:
    job.anchor = now; // its own time starts: at the setup, at the go, at the resume
    m_group.set_deadline(*process, now + timeout_of(job));
    break;
  case JobState::preparing:
  case JobState::done:
    m_group.set_deadline(*process, job.anchor + timeout_of(job));
    break;
  case JobState::waiting_for_setup:
  case JobState::ready:
  case JobState::paused:
  case JobState::ended:
    m_group.set_deadline(*process, std::nullopt); // waiting is not its own time
    break;
  }
}

Scheduler::Job* Scheduler::current_job(const Slot& slot) {
  for (const size_t j : slot.jobs) {
    if (m_jobs[j].state != JobState::ended) {
      return &m_jobs[j];
    }
  }
  return nullptr;
}

void Scheduler::on_message(size_t child, std::string_view bytes) {
  if (child >= m_slot_of_process.size() || m_slot_of_process[child] == k_no_job) {
    return;
  }
  const Slot& slot = m_slots[m_slot_of_process[child]];
  for (const char byte : bytes) {
    Job* job = current_job(slot);
    if (job == nullptr) {
      break;
    }
    const std::optional<protocol::GateMessage> message = protocol::parse_gate_message(byte);
    if (!message || protocol::sent_by_parent(*message)) {
      process::trace(fmt::format("GPU engine: {} on GPU {} sent byte {} outside the protocol",
                                 work_name(job->work), job->gpu, static_cast<int>(byte)));
      continue;
    }
    const JobState before = job->state;
    job->state = after_message(job->state, *message);
    if (job->state == before) {
      continue;
    }
    if (job->state == JobState::done) {
      job->finished = Clock::now();
      if (job->planned) {
        // The next job of a shared child starts preparing on its context at once: the child's
        // next message is about it.
        job->state = state_after_done(m_plan.jobs[*job->planned]);
        if (job->state == JobState::ended) {
          if (Job* next = current_job(slot)) {
            next->state = state_after_setup(m_plan.jobs[*next->planned]);
            next->started = true;
            next->anchor = Clock::now();
            arm_deadline(*next);
            continue;
          }
        }
      }
    }
    arm_deadline(*job);
  }
  advance();
}

void Scheduler::on_finished(size_t child) {
  if (m_census_child && child == *m_census_child) {
    const std::optional<process::ChildOutcome> outcome = m_group.outcome(child);
    protocol::Census census;
    if (outcome && outcome->ok()) {
      census = protocol::census_from_json(*outcome->payload);
    } else {
      census.error = outcome && outcome->failure ? outcome->failure->detail : "no census";
    }
    make_plan_from_census(census);
  } else if (m_census_after_child && child == *m_census_after_child) {
    const std::optional<process::ChildOutcome> outcome = m_group.outcome(child);
    if (outcome && outcome->ok()) {
      m_census_after = protocol::census_from_json(*outcome->payload);
    }
  } else if (child < m_slot_of_process.size() && m_slot_of_process[child] != k_no_job) {
    for (const size_t j : m_slots[m_slot_of_process[child]].jobs) {
      m_jobs[j].state = JobState::ended;
    }
  }
  advance();
}

namespace {
/// Whether a shared child's last lane line says cuDNN's lane was still preparing.
bool lane_preparing(const nlohmann::json* lines) {
  bool preparing = false;
  if (lines != nullptr && lines->is_array()) {
    for (const nlohmann::json& line : *lines) {
      const Expected<protocol::WorkLine> read = protocol::read_work_line(line);
      if (read && read.value().lane) {
        preparing = *read.value().lane == protocol::k_lane_preparing;
      }
    }
  }
  return preparing;
}

/// A work's own line of a shared child's result, and its head; nullptr when it has none. A
/// line that is not a work's (the timeline), a lane's progress, or garbage, is no job's result.
const nlohmann::json* work_line(const nlohmann::json* lines, std::string_view work,
                                std::optional<protocol::WorkLine>& head) {
  const nlohmann::json* part = nullptr;
  if (lines != nullptr && lines->is_array()) {
    for (const nlohmann::json& line : *lines) {
      const Expected<protocol::WorkLine> read = protocol::read_work_line(line);
      if (read && read.value().work == work && !read.value().lane) {
        part = &line;
        head = read.value();
      }
    }
  }
  return part;
}
/// A job's outcome from its own line of its shared child's result: its time is its own (from its
/// go to its done) when both are known.
process::ChildOutcome own_outcome(const nlohmann::json& part, const process::ChildOutcome& child,
                                  std::optional<Clock::time_point> went,
                                  std::optional<Clock::time_point> finished) {
  process::ChildOutcome own;
  own.payload = std::make_shared<const nlohmann::json>(part);
  own.stderr_tail = child.stderr_tail;
  own.elapsed = went && finished
                    ? std::chrono::duration_cast<std::chrono::milliseconds>(*finished - *went)
                    : child.elapsed;
  return own;
}
} // namespace

void Scheduler::report_slot(const Slot& slot, const std::vector<process::ChildOutcome>& outcomes) {
  if (!slot.process || !m_jobs[slot.jobs.front()].planned) {
    return;
  }
  const process::ChildOutcome& outcome = outcomes[*slot.process];
  if (slot.jobs.size() == 1) {
    m_reports[slot.jobs.front()].outcome = outcome;
    return;
  }
  // A shared child: each job's own line of the result (kept even when the child died later).
  const std::shared_ptr<const nlohmann::json>& lines =
      outcome.payload ? outcome.payload : outcome.partial;
  std::string died_in; // the check whose work the child was on when it failed
  // The lane (gpu/work_lane.hpp; cuDNN's): a child that died while the lane prepared beside
  // another work is blamed on the lane, whose libraries (cuDNN's) are the riskiest code gpucheck
  // loads, and the work beside it is said not to have finished.
  const bool lane_open = lane_preparing(lines.get());
  const auto lane_job = std::find_if(slot.jobs.begin(), slot.jobs.end(), [this](size_t o) {
    return protocol::is_lane(m_jobs[o].work);
  });
  const std::optional<Work> lane_work =
      lane_job != slot.jobs.end() ? std::optional<Work>(m_jobs[*lane_job].work) : std::nullopt;
  const std::string_view lane_name = lane_work ? work_row(*lane_work).lane : std::string_view();
  // An interrupted run's children are stopped, not failed: no blame (the run says so).
  const bool died = outcome.failure && outcome.failure->kind != ChildFailureKind::cancelled;
  std::string beside_lane; // the check the lane prepared beside when the child died
  for (const size_t j : slot.jobs) {
    const Job& job = m_jobs[j];
    JobReport& report = m_reports[j];
    std::optional<protocol::WorkLine> head;
    const nlohmann::json* part = work_line(lines.get(), work_name(job.work), head);
    if (head && head->not_run) {
      report.skip = JobReport::Skip::stopped;
      report.skip_reason = *head->not_run;
      continue;
    }
    if (part != nullptr) {
      report.outcome = own_outcome(*part, outcome, job.went, job.finished);
      continue;
    }
    if (protocol::is_lane(job.work) && lane_open && died) {
      // The child died while the lane prepared: its failure is the lane's.
      report.outcome = outcome;
      if (!beside_lane.empty()) {
        report.outcome->failure->detail +=
            fmt::format(" while {} prepared beside {}", lane_name, beside_lane);
      }
      continue;
    }
    if (!died_in.empty() || (!job.started && j != slot.jobs.front())) {
      report.skip = JobReport::Skip::stopped;
      report.skip_reason =
          fmt::format("not run: the check process {} before this check's turn{}",
                      outcome.failure ? outcome.failure->detail : "ended",
                      died_in.empty() ? std::string() : fmt::format(", during {}", died_in));
      continue;
    }
    const bool lane_blamed =
        lane_open && died && !protocol::is_lane(job.work) && lane_job != slot.jobs.end();
    if (lane_blamed) {
      report.skip = JobReport::Skip::stopped;
      report.skip_reason = fmt::format(
          "not finished: the check process {} while {} prepared beside this check (see {})",
          outcome.failure->detail, lane_name, check_id(*lane_work));
      beside_lane = std::string(check_id(job.work));
      died_in = fmt::format("{}'s preparation beside {}", check_id(*lane_work), beside_lane);
      continue;
    }
    // The job it was on: the child's failure is its own.
    report.outcome = outcome;
    if (report.outcome->ok()) {
      ChildFailure failure;
      failure.kind = ChildFailureKind::bad_output;
      failure.detail = "its result has no line for this check";
      report.outcome->failure = failure;
      report.outcome->payload.reset();
    }
    died_in = check_id(job.work);
  }
}

void Scheduler::on_wake() {
  advance();
}

void Scheduler::start_census_after() {
  process::ChildRequest census;
  census.mode = "gpu-census";
  census.args = {std::to_string(::getpid())};
  census.timeout = m_options.census_timeout;
  m_census_after_child = m_group.start(std::move(census));
  m_slot_of_process.resize(*m_census_after_child + 1, k_no_job);
}

void Scheduler::check_work_limit() {
  if (m_over_limit || Clock::now() < m_work_deadline) {
    return;
  }
  // Every child has its own deadline, but a job may wait at its gate for another job for as
  // long as that one runs: this limit bounds the whole run whatever the children do.
  m_over_limit = true;
  process::trace("GPU engine: the GPU work's time limit passed; stopping every child");
  for (size_t p = 0; p < m_group.size(); ++p) {
    m_group.cancel_one(p, fmt::format("stopped: the GPU work's time limit of {:.0f} s for the "
                                      "whole run passed (--timeout sets it)",
                                      std::chrono::duration<double>(m_options.work_limit).count()));
  }
}

void Scheduler::stop_on_interrupt() {
  // The user stopped the run: a long work that runs is told to stop and report what it did; a
  // job finishing its results goes on; every other child goes now (its check says it was
  // stopped).
  for (Slot& slot : m_slots) {
    Job* job = slot.process && !slot.cancelled ? current_job(slot) : nullptr;
    if (job == nullptr || job->state == JobState::done) {
      continue;
    }
    if (is_long(job->work) && job->state != JobState::waiting_for_setup) {
      // The long level's child keeps what it did: a running work is told to stop; the next work
      // of the child (the burn after the memory test) gets its go and the stop at once, so that
      // the child writes every result line and exits by itself (killing it between the memory
      // test's done and its result line lost the result). A work still preparing is waited for
      // (its deadline runs).
      if (job->state == JobState::ready) {
        m_group.send(*slot.process, std::string(1, static_cast<char>(protocol::GateMessage::go)));
        m_group.mark_start(*slot.process);
        job->went = Clock::now();
        job->state = JobState::running;
        arm_deadline(*job);
      }
      if (job->state == JobState::running && !job->stop_sent) {
        m_group.send(*slot.process, std::string(1, static_cast<char>(protocol::GateMessage::stop)));
        job->stop_sent = true;
      }
      continue;
    }
    slot.cancelled = true;
    m_group.cancel_one(*slot.process, "stopped: the run was interrupted");
  }
}

namespace {
/// With GPUCHECK_TRACE, when each job's setup and go are sent (where the plan's waits end).
void trace_step(std::string_view step, const PlannedJob& job) {
  if (process::tracing()) {
    process::trace(fmt::format("GPU engine: {} {} on GPU {}", step, work_name(job.work),
                               job.span.empty() ? fmt::format("{}", job.gpu)
                                                : fmt::format("{}", fmt::join(job.span, ","))));
  }
}
} // namespace

void Scheduler::step_jobs(std::vector<JobState>& states, bool probes_over) {
  std::vector<bool> turn_held(m_turns.size(), false);
  for (size_t g = 0; g < m_turns.size(); ++g) {
    turn_held[g] = m_turns.held(g);
  }
  for (Job& job : m_jobs) {
    const std::optional<size_t> process = m_slots[job.slot].process;
    if (!job.planned || !process || job.state == JobState::ended || m_interrupted.load()) {
      continue;
    }
    const size_t child = *process;
    const PlannedJob& planned = m_plan.jobs[*job.planned];
    const bool turns_held =
        turn_held[job.gpu] && std::all_of(planned.span.begin(), planned.span.end(),
                                          [&turn_held](size_t g) { return turn_held[g]; });
    if (job.state == JobState::waiting_for_setup && !planned.after_in_child && turns_held &&
        may_step(planned, Step::setup, states, probes_over)) {
      const uint64_t allowance_mib = planned.allowance_bytes / k_mib;
      m_group.send(child, fmt::format("{}{}\n", static_cast<char>(protocol::GateMessage::setup),
                                      allowance_mib));
      job.state = state_after_setup(planned);
      job.started = true;
      arm_deadline(job);
      trace_step("setup", planned);
    } else if (job.state == JobState::ready && may_step(planned, Step::go, states, probes_over)) {
      trace_step("go", planned);
      m_group.send(child, std::string(1, static_cast<char>(protocol::GateMessage::go)));
      m_group.mark_start(child);
      job.went = Clock::now();
      job.state = JobState::running;
      arm_deadline(job);
    } else if (job.state == JobState::paused && probes_over) {
      m_group.send(child, std::string(1, static_cast<char>(protocol::GateMessage::resume)));
      job.state = JobState::running;
      arm_deadline(job);
    }
    states[*job.planned] = job.state;
  }
}

void Scheduler::after_steps() {
  // A GPU's turn ends when its last job has gone (at once on a GPU with none).
  for (size_t g = 0; g < m_turns.size(); ++g) {
    const bool all_ended = std::all_of(m_jobs.begin(), m_jobs.end(), [this, g](const Job& job) {
      return !job.planned || !uses_gpu(m_plan.jobs[*job.planned], g) ||
             job.state == JobState::ended;
    });
    if (all_ended) {
      m_turns.release(g);
    }
  }
  // The probes may load cuDNN once no context is being built (a context built beside that load
  // takes three times as long).
  if (per_gpu_contexts_built()) {
    {
      const std::lock_guard<std::mutex> guard(m_lock);
      m_contexts_ready = true;
    }
    m_changed.notify_all();
  }
  // The census after: once every job's timed work has begun, beside the last of it (NVML's
  // queries leave cuDNN's figures unchanged: docs/performance.md), so that its answer is in
  // when that work ends.
  const bool all_done = std::all_of(m_jobs.begin(), m_jobs.end(), [](const Job& job) {
    return !job.planned || is_long(job.work) || at_least(job.state, JobState::running);
  });
  if (all_done && !m_census_after_child && !m_options.census_override &&
      std::any_of(m_jobs.begin(), m_jobs.end(),
                  [](const Job& job) { return job.planned && !is_long(job.work); })) {
    start_census_after();
  }
}

void Scheduler::advance() {
  check_work_limit();
  if (!m_planned || m_over_limit) {
    return;
  }
  const bool probes_over = m_probes_over.load();
  std::vector<JobState> states = planned_states();
  if (m_interrupted.load()) {
    stop_on_interrupt();
  }
  spawn_due();
  step_jobs(states, probes_over);
  spawn_due(); // children whose turn to start came with the steps just taken
  after_steps();
  update_progress();
}

} // namespace gpucheck::engine

namespace gpucheck::engine {

std::chrono::milliseconds work_limit_for(std::chrono::milliseconds timeout,
                                         std::chrono::milliseconds census_timeout, bool long_level,
                                         std::chrono::milliseconds long_duration) {
  std::chrono::milliseconds limit = 3 * timeout + census_timeout;
  if (long_level) {
    limit += 2 * long_duration + timeout;
  }
  return limit;
}

} // namespace gpucheck::engine
