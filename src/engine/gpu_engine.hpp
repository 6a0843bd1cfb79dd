#pragma once
/// The GPU engine's face to the rest of gpucheck: started by the CLI before the probes, asked
/// by the active checks for their children's outcomes. One path: the engine starts at once on
/// the GPUs the driver lists under /proc/driver/nvidia/gpus; where it lists none (WSL2, a
/// sysroot fixture) it starts on the checks' own targets the first time one asks, through the
/// same plan and scheduler.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "engine/plan.hpp"
#include "engine/scheduler.hpp"
#include "gpucheck/selection.hpp"
#include "protocol/census.hpp"

namespace gpucheck::engine {

/// A GPU as the checks know it (from the snapshot's CUDA devices).
struct TargetKey {
  int ordinal = 0;
  std::string bus_id; ///< any case; empty when unknown
};

/// What one check needs to judge one GPU.
struct JobView {
  JobReport job;
  GpuReport gpu;
};

/// What a check of a spanning work (peers) needs: its one job and every GPU of the run.
struct SpanView {
  JobReport job;
  std::vector<GpuReport> gpus; ///< every GPU of the run, in the engine's order
};

/// What the probes are handed while the GPU work runs around them.
struct ProbeHooks {
  /// Called before the probes' cuDNN children start: returns once no GPU child builds a context
  /// (at most 1.5 s), since cuDNN loading beside them makes the contexts three times slower.
  std::function<void()> before_cudnn_children;
};

class GpuEngine {
public:
  GpuEngine(std::vector<Work> works, std::string sysroot,
            std::optional<std::string> cuda_visible_devices, std::chrono::milliseconds timeout);
  GpuEngine(const GpuEngine&) = delete;
  GpuEngine& operator=(const GpuEngine&) = delete;
  /// Stops every unfinished child and waits for the engine's thread.
  ~GpuEngine();

  /// Run `probes` (handed the ProbeHooks) with the GPU work started around them, and return
  /// what they return: the GPU children first, the probes once the census is in and the first
  /// contexts are built (their NVML and CUDA children would slow those, on the critical path);
  /// when the probes use the GPU themselves (framework imports), the GPU work after them. The
  /// probes are over when it returns (docs/engine.md, "The start").
  template <typename Probes> auto around_probes(bool probes_use_gpu, Probes&& probes) {
    const ProbeHooks hooks = begin_probes(probes_use_gpu);
    auto result = std::forward<Probes>(probes)(hooks);
    end_probes(probes_use_gpu);
    return result;
  }
  /// Start on the GPUs the driver lists; false (nothing started) when it lists none.
  bool start_early();
  /// The outcome of `work` on `target`, waiting for the whole run; starts the engine on
  /// `targets` first when it has not started. nullopt when the engine did not plan that pair.
  std::optional<JobView> result(Work work, const TargetKey& target,
                                const std::vector<TargetKey>& targets);
  /// The outcome of a spanning work (one job over every GPU), waiting for the whole run;
  /// starts the engine on `targets` first when it has not started. nullopt when the engine has
  /// no such job (one GPU, or the work was not selected).
  std::optional<SpanView> spanning_result(Work work, const std::vector<TargetKey>& targets);
  /// around_probes()'s steps: the start before the probes, and their end.
  ProbeHooks begin_probes(bool probes_use_gpu);
  void end_probes(bool probes_use_gpu);
  /// Block until the engine has its plan (its NVML census is in), or `limit` passed.
  void await_plan(std::chrono::milliseconds limit);
  /// Block until no GPU child builds a context, or `limit` passed.
  void await_contexts(std::chrono::milliseconds limit);
  /// The probes are over.
  void probes_over();
  /// Stop every child now (no GPU to test after all).
  void cancel();
  /// The user stopped the run (SIGINT): long works report what they did, the rest stop.
  void interrupt();
  /// What the long level does now (the progress line); nullopt outside it.
  [[nodiscard]] std::optional<Scheduler::Progress> progress() const;
  /// Test seam: options for the scheduler before it starts.
  SchedulerOptions& options() { return m_options; }
  /// --wait-turn: how long to wait for other runs' turns (default: default_turn_wait() of the
  /// run's GPU count).
  void set_turn_wait(std::chrono::milliseconds wait) { m_turn_wait = wait; }
  /// The longest the engine can take from its start to its results: the turn wait, the GPU
  /// work's limit and a grace for stopping its children (`gpus`: the count to assume before it
  /// has started).
  [[nodiscard]] std::chrono::milliseconds time_bound(size_t gpus) const;

private:
  void start(std::vector<protocol::VisibleGpu> gpus);
  /// Wait for the engine's thread, up to time_bound() from its start; past it the engine is
  /// cancelled, and after a grace it is left behind: false (its results are lost).
  bool finish();
  /// The view a check gets when the engine did not finish (finish() is false).
  [[nodiscard]] JobReport unfinished_job(Work work) const;

  SchedulerOptions m_options;
  std::string m_sysroot;
  std::optional<std::string> m_visible;
  std::unique_ptr<Scheduler> m_scheduler;
  std::thread m_thread;
  std::optional<std::chrono::milliseconds> m_turn_wait;
  std::chrono::steady_clock::time_point m_started;
  std::atomic<size_t> m_gpu_count{0}; ///< the GPUs it started on (the watchdog reads it)
  /// Whether the engine's thread has returned; shared with it, so that a thread left behind
  /// (finish() false) never touches a destroyed engine.
  struct Finish {
    std::mutex lock;
    std::condition_variable changed;
    bool finished = false; ///< under lock
  };
  std::shared_ptr<Finish> m_finish = std::make_shared<Finish>();
  bool m_abandoned = false; ///< it did not return in time
  bool m_probes_over = false;
  std::atomic<bool> m_cancelled{false};
  std::atomic<bool> m_interrupted{false};
  /// Guards m_scheduler's creation against interrupt() and progress(), which other threads call
  /// (the signal watch, the progress line) while the engine may start late on the main thread.
  mutable std::mutex m_scheduler_lock;
};

/// The long level's settings (`--level long`, `--duration`, `--force`).
struct LongLevel {
  bool enabled = false;
  std::chrono::milliseconds duration{60000};
  bool force = false;
};

/// The engine for the selected active checks, or nullptr when none is selected.
/// `turn_wait`: --wait-turn (nullopt: default_turn_wait() of the run's GPU count).
std::unique_ptr<GpuEngine>
make_gpu_engine(const Selection& selection, const std::string& sysroot,
                std::chrono::milliseconds timeout, const LongLevel& long_level = {},
                std::optional<std::chrono::milliseconds> turn_wait = std::nullopt);

} // namespace gpucheck::engine
