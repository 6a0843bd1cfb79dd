#pragma once
/// The GPU engine's mechanism: it carries out a Plan (plan.hpp) over child processes. Each job's
/// state is one JobState; each job has one deadline, armed in one place (arm_deadline) from its
/// state; the gate messages are the typed vocabulary of messages.hpp. The census child runs
/// first and the plan is made from it while the job children load libcuda and run cuInit.
///
/// The decisions (which job may set up or go now) are pure functions of the plan and the job
/// states, shared by the scheduler and the tests that simulate runs.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "engine/plan.hpp"
#include "engine/turns.hpp"
#include "process/child_process.hpp"
#include "protocol/census.hpp"
#include "protocol/messages.hpp"

namespace gpucheck::engine {

/// A job's life, in order; a state only ever moves forward.
enum class JobState {
  waiting_for_setup, ///< started (cuInit), waits for leave to build its context
  setting_up,        ///< builds its context (its deadline runs)
  preparing,         ///< context built; prepares before its gate (its deadline runs)
  ready,             ///< waits at its gate (no deadline: waiting is not its own time)
  running,           ///< its gated work (its deadline runs, fresh from the go)
  paused,            ///< waits for the probes to end in the middle of its work (no deadline)
  done,              ///< done with the gated work; checks results and tears down
  ended,             ///< its process is gone (whatever the reason)
};
std::string_view to_string(JobState state);

/// Whether the condition holds for these job states.
bool condition_met(const Condition& condition, const std::vector<JobState>& states,
                   bool probes_over);
/// Whether every condition of `job` for `step` holds.
bool may_step(const PlannedJob& job, Step step, const std::vector<JobState>& states,
              bool probes_over);
/// The state after a message from the child. A message counts only where the protocol allows it
/// (context_built while setting up, ready before the gate, paused while running, done after the
/// go); repeated, early or misplaced messages change nothing.
JobState after_message(JobState state, protocol::GateMessage message);

/// The state a job moves to when its setup step is taken: setting_up (it builds a context), or
/// preparing for a job that follows another in the same child (its context exists).
JobState state_after_setup(const PlannedJob& job);
/// The state after `done` from the child: done, or ended for a job followed by another in the
/// same child (its part is over: the child goes on to the next work, it tears nothing down).
JobState state_after_done(const PlannedJob& job);

/// One GPU of the run, as the scheduler knows it.
struct EngineGpu {
  protocol::VisibleGpu visible;
  const protocol::CensusGpu* census_before = nullptr; ///< into Scheduler's census
};

struct SchedulerOptions {
  std::vector<Work> works;
  std::vector<protocol::VisibleGpu> gpus;
  std::chrono::milliseconds timeout{60000}; ///< per job, from setup and again from go
  /// How long to wait for other gpucheck runs' turns on these GPUs (--wait-turn; the default is
  /// default_turn_wait() of the run's GPU count).
  std::chrono::milliseconds turn_wait{10000};
  /// Called on the engine's thread when a wait for another run's turn begins (the terminal says
  /// whose turn it waits for).
  std::function<void(const TurnWait&, const std::string& gpu_label)> on_turn_wait;
  std::chrono::milliseconds census_timeout{5000};
  /// The whole GPU work's limit, counted once the turns are taken: past it every child still
  /// alive is stopped (each also has its own deadline, `timeout`). work_limit_for() by default.
  std::chrono::milliseconds work_limit{120000};
  /// The long level's --duration: each long job's deadline adds it to `timeout`.
  std::chrono::milliseconds long_duration{60000};
  /// --force: the long level also runs on GPUs that other processes use.
  bool force_long = false;
  /// --level long: the peer copies measure every size (the child's "sweep"), not one.
  bool long_level = false;
  MemoryModel memory;
  /// Test seam: per work, the child mode and arguments that stand for it ("test-gated ..." in
  /// unit tests); works not named run their real child mode.
  std::map<Work, std::vector<std::string>> job_override;
  /// Test seam: a census to use instead of running the census child.
  std::optional<protocol::Census> census_override;
};

/// The GPU work's limit for a whole run (SchedulerOptions::work_limit): three times the per-check
/// `timeout` and the census's, and with the long level twice its `long_duration` and one more
/// `timeout`. A standard run's work takes seconds; the limit only ends runs something holds up.
std::chrono::milliseconds work_limit_for(std::chrono::milliseconds timeout,
                                         std::chrono::milliseconds census_timeout, bool long_level,
                                         std::chrono::milliseconds long_duration);

/// What became of one job.
struct JobReport {
  Work work{};
  size_t gpu = 0;
  std::optional<process::ChildOutcome> outcome; ///< unset when the job never ran
  /// Why it never ran, when `outcome` is unset.
  enum class Skip { none, no_memory, other_run, stopped, busy } skip = Skip::none;
  std::string skip_reason;         ///< the same in words
  bool skip_is_contention = false; ///< other processes or another run are why
};

/// What the run found per GPU.
struct GpuReport {
  protocol::VisibleGpu visible;
  PlannedGpu plan;
  std::optional<protocol::CensusGpu> before; ///< the census before any context
  std::optional<protocol::CensusGpu> after;  ///< beside the last timed work, once it has all begun
  bool waited_for_another_run = false;
  std::chrono::milliseconds lock_waited{0};
  /// Its turn did not come within the wait: nothing of this run was tested on it.
  bool turn_not_taken = false;
  /// Processes other than gpucheck's own seen on the GPU before or after the timed work.
  [[nodiscard]] std::vector<protocol::CensusProcess> other_processes() const;
};

class Scheduler : public process::ChildListener {
public:
  explicit Scheduler(SchedulerOptions options);
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;
  ~Scheduler() override;

  /// Run everything to the end (blocks); call once, on the engine's thread.
  void run();
  /// Any thread: the probes are over (the after_probes rule; paused jobs resume).
  void probes_over();
  /// Any thread: stop every child now.
  void cancel();
  /// Any thread: the user asked to stop (SIGINT): running long jobs are told to stop and report
  /// what they did; every other child is stopped; nothing more starts.
  void interrupt();
  /// Any thread: what the long level is doing now, for the progress line; nullopt outside it.
  struct Progress {
    std::string phase;    ///< "memory test", "burn"
    size_t gpus = 0;      ///< GPUs in this phase now
    double elapsed_s = 0; ///< since the phase's first go
    double total_s = 0;   ///< --duration
  };
  [[nodiscard]] std::optional<Progress> progress() const;
  /// Any thread: block until every job has built its context (or ended, or will not run), or
  /// `limit` passed. Returns whether they all had.
  bool await_contexts(std::chrono::milliseconds limit);

  /// Any thread: block until the plan exists (the census is in), or `limit` passed.
  bool await_plan(std::chrono::milliseconds limit);

  /// After run(): the jobs and GPUs.
  [[nodiscard]] const std::vector<JobReport>& jobs() const { return m_reports; }
  [[nodiscard]] const std::vector<GpuReport>& gpus() const { return m_gpu_reports; }
  [[nodiscard]] const Plan& plan() const { return m_plan; }

  // process::ChildListener
  void on_message(size_t child, std::string_view bytes) override;
  void on_finished(size_t child) override;
  void on_wake() override;

private:
  struct Job {
    Work work{};
    size_t gpu = 0;
    size_t slot = 0;               ///< its child (index into m_slots)
    std::optional<size_t> planned; ///< index into m_plan.jobs once planned
    JobState state = JobState::waiting_for_setup;
    bool started = false; ///< it left waiting_for_setup (its child worked on it)
    std::chrono::steady_clock::time_point anchor;              ///< when its own time last started
    std::optional<std::chrono::steady_clock::time_point> went; ///< its go
    std::optional<std::chrono::steady_clock::time_point> finished; ///< its done
    bool stop_sent = false; ///< told to stop (the run was interrupted)
  };
  /// One child process and the jobs it carries, in order (child_groups()).
  struct Slot {
    size_t gpu = 0;
    std::vector<size_t> jobs;      ///< indices into m_jobs
    std::optional<size_t> process; ///< its process in m_group, once spawned
    bool cancelled = false;        ///< stopped because the run was interrupted
  };

  /// The GPUs a slot's child uses: its own, or its spanning job's span once planned.
  [[nodiscard]] std::vector<size_t> gpus_of(const Slot& slot) const;
  /// The job of a slot that the child's messages are about: its first job not ended.
  Job* current_job(const Slot& slot);
  /// One slot (child) per GPU and group of works, and one over every GPU for the spanning works.
  void make_slots();
  /// What became of each job of a slot, from its child's outcome.
  void report_slot(const Slot& slot, const std::vector<process::ChildOutcome>& outcomes);
  /// Each GPU's report: its plan, its census before and after, its turn.
  void report_gpus();
  /// Why the jobs without an outcome have none: the run interrupted, a turn not taken, no
  /// memory, a busy GPU for the long level, the time limit.
  void explain_jobs_without_outcome();
  void make_plan_from_census(const protocol::Census& census);
  /// Take every GPU's turn (turns.hpp), before anything starts; blocks up to the turn wait.
  void take_turns();
  /// How a GPU is named in messages: its PCI bus id, else what names it to CUDA.
  [[nodiscard]] std::string gpu_label(size_t g) const;
  /// Why this run did not test GPU `g`: whose turn did not end within the wait.
  [[nodiscard]] std::string turn_not_taken_reason(size_t g) const;
  void spawn(Slot& slot);
  /// Whether no rule awaits the exit of the slot's last job (its result may be taken at once).
  [[nodiscard]] bool nothing_awaits_exit(const Slot& slot) const;
  /// Spawn the jobs whose turn to load libcuda has come (see spawn_due()).
  void spawn_due();
  /// Whether every per-GPU job has built its context (or ended, or waits on a serial GPU).
  [[nodiscard]] bool per_gpu_contexts_built() const;
  void arm_deadline(Job& job);
  [[nodiscard]] std::chrono::milliseconds timeout_of(const Job& job) const;
  void update_progress();
  /// One step of the engine after any event: the run's time limit, an interrupt, each job's
  /// setup, go or resume as its conditions allow, then turns, contexts and the census after.
  void advance();
  /// Past the GPU work's time limit: every child stopped.
  void check_work_limit();
  /// The run was interrupted: long works told to stop, every other child stopped.
  void stop_on_interrupt();
  /// Each job's next step (setup, go, resume) where its turn and the plan's conditions allow.
  void step_jobs(std::vector<JobState>& states, bool probes_over);
  /// Turns of GPUs whose jobs all ended released; contexts ready said; the census after started.
  void after_steps();
  void start_census_after();
  [[nodiscard]] std::vector<JobState> planned_states() const;

  SchedulerOptions m_options;
  process::ChildGroup m_group;
  std::optional<size_t> m_census_child;
  std::optional<size_t> m_census_after_child;
  std::optional<protocol::Census> m_census;
  std::optional<protocol::Census> m_census_after;
  Plan m_plan;
  bool m_planned = false;
  std::vector<Job> m_jobs;
  std::vector<Slot> m_slots;
  std::vector<size_t> m_slot_of_process; ///< process index -> slot index (or SIZE_MAX)
  Turns m_turns; ///< taken before anything starts (turns.hpp); read on the engine's thread only
  std::vector<JobReport> m_reports;
  std::vector<GpuReport> m_gpu_reports;

  std::atomic<bool> m_probes_over{false};
  std::atomic<bool> m_interrupted{false};
  mutable std::mutex m_progress_lock;
  std::optional<Progress> m_progress;                                 ///< under m_progress_lock
  std::optional<std::chrono::steady_clock::time_point> m_phase_start; ///< likewise
  std::atomic<bool> m_stop{false}; ///< cancel(), interrupt(): a wait for a turn gives up
  std::mutex m_lock;               ///< guards m_contexts_ready and m_plan_ready
  std::condition_variable m_changed;
  bool m_contexts_ready = false;
  bool m_plan_ready = false;  ///< under m_lock, for await_plan()
  bool m_turn_waited = false; ///< under m_lock: a wait for another run's turn began
  std::chrono::steady_clock::time_point m_work_deadline =
      std::chrono::steady_clock::time_point::max();
  bool m_over_limit = false; ///< the work limit passed: every child was stopped
};

} // namespace gpucheck::engine
