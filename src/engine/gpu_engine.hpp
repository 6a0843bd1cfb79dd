#pragma once
/// The GPU engine's face to the rest of gpucheck: started by the CLI before the probes, asked
/// by the active checks for their children's outcomes. One path: the engine starts at once on
/// the GPUs the driver lists under /proc/driver/nvidia/gpus; where it lists none (WSL2, a
/// sysroot fixture) it starts on the checks' own targets the first time one asks, through the
/// same plan and scheduler.

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
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

class GpuEngine {
public:
  GpuEngine(std::vector<Work> works, std::string sysroot,
            std::optional<std::string> cuda_visible_devices, std::chrono::milliseconds timeout);
  GpuEngine(const GpuEngine&) = delete;
  GpuEngine& operator=(const GpuEngine&) = delete;
  /// Stops every unfinished child and waits for the engine's thread.
  ~GpuEngine();

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
  /// Block until the engine has its plan (its NVML census is in), or `limit` passed: the probes
  /// start after it, since beside the probes' own NVML and CUDA children the census took 0.27 s
  /// on one H200 and 0.44 s on two, on the critical path (docs/performance.md).
  void await_plan(std::chrono::milliseconds limit);
  /// Block until no GPU child builds a context, or `limit` passed (the probes' cuDNN children).
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

private:
  void start(std::vector<protocol::VisibleGpu> gpus);
  void join();

  SchedulerOptions m_options;
  std::string m_sysroot;
  std::optional<std::string> m_visible;
  std::unique_ptr<Scheduler> m_scheduler;
  std::thread m_thread;
  std::once_flag m_joined;
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
std::unique_ptr<GpuEngine> make_gpu_engine(const Selection& selection, const std::string& sysroot,
                                           std::chrono::milliseconds timeout,
                                           const LongLevel& long_level = {});

} // namespace gpucheck::engine
