#pragma once
/// The active GPU checks' children, started ahead and run in a fixed order (docs/checks.md,
/// "How the GPU checks are scheduled").
///
/// Each child pays about 0.2 s for cuInit and its context before any work. GpuWork starts every
/// child at once, while the probes still run; each builds its context when its turn comes (one
/// per GPU at a time), does its untimed preparation (gpucheck's kernels, pinned host memory,
/// cuDNN's small verified cases) and then waits at its gate. The gates open so that no timed
/// work shares a GPU with another check's timed work: compute, then streams on each GPU; then
/// the copy-bandwidth children, one GPU after the other, with no other check released anywhere
/// and no context being built; then cuDNN's timed convolutions. A child tells the parent when its
/// gated work is done, so the next one starts while it checks results and tears down. The
/// device-local copies and cuDNN's timed work also wait until the probes are over
/// (host_quiet()). Before its gate a child holds only small device allocations (cuDNN's small
/// cases: under 64 MiB), so the memory budget holds.

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "gpucheck/runner.hpp"
#include "platform/child_process.hpp"

namespace gpucheck::checks {

/// The child modes of the active GPU checks in the order their gates open on one GPU:
/// compute, streams, bandwidth (exclusive: no other check released on any GPU), cuDNN.
std::vector<std::string> gpu_work_modes();

/// One child of the plan: its mode and GPU, the jobs (indices into the plan) that must be done
/// with their gated work before it is released, and the job whose context it waits for before
/// building its own.
struct PlannedGpuJob {
  std::string mode;
  int ordinal = 0;
  std::vector<size_t> release_after;
  std::vector<size_t> setup_after;
  /// Released only once the jobs of release_after have exited (their teardown included).
  bool after_exit = false;
  /// Released only once these jobs (on any GPU) have built their contexts.
  std::vector<size_t> after_contexts;
  /// Released only once the probes are over (GpuWork::host_quiet()).
  bool after_quiet_host = false;
};

/// The gates of the selected modes on `ordinals` (docs/checks.md, "How the GPU checks are
/// scheduled"): on each GPU compute, then streams; once all of those are done, every bandwidth
/// job, one after the other; then cuDNN on each GPU once its GPU's jobs and every bandwidth job
/// are done. Contexts are built one at a time per GPU: cuDNN, compute, streams, bandwidth.
std::vector<PlannedGpuJob> plan_gpu_jobs(const std::vector<std::string>& modes,
                                         const std::vector<int>& ordinals);

/// The child mode of an active GPU check id ("gpu.cudnn" -> "gpu-cudnn"); empty for others.
std::string gpu_work_mode_for(std::string_view check_id);

/// CUDA ordinals the driver will most likely show, read before probing: one per
/// /proc/driver/nvidia/gpus entry under `sysroot`, cut to the entries CUDA_VISIBLE_DEVICES lets
/// through. A wrong guess costs nothing but speed: run_per_gpu() runs what the guess missed.
std::vector<int> expected_cuda_ordinals(const std::string& sysroot,
                                        const std::optional<std::string>& visible_devices);

class GpuWork;

/// Start the selected active GPU checks' children ahead of the probes, for the GPUs that
/// expected_cuda_ordinals() guesses; nullptr when there is nothing to start.
std::unique_ptr<GpuWork> start_gpu_work(const Selection& selection, const std::string& sysroot,
                                        std::chrono::milliseconds timeout);

class GpuWork {
public:
  /// Starts one child per (mode, ordinal) now and a thread that opens their gates in order.
  GpuWork(const std::vector<std::string>& modes, const std::vector<int>& ordinals,
          std::chrono::milliseconds timeout);
  GpuWork(const GpuWork&) = delete;
  GpuWork& operator=(const GpuWork&) = delete;
  /// Stops every unfinished child and waits for the thread.
  ~GpuWork();

  /// The outcome of `mode` on `ordinal`, waiting for all the scheduled work to finish; nullopt
  /// when that pair was not scheduled.
  std::optional<platform::ChildOutcome> outcome(const std::string& mode, int ordinal);

  /// The work is not needed (no GPU to test after all): stop every child now.
  void cancel();

  /// Block until every child has built its context (or ended), or `limit` has passed. The
  /// probes call it before loading cuDNN in their children: beside a context creation that load
  /// makes the context take three times as long. (Waiting for the copies too made the probes
  /// overlap cuDNN's timed convolutions instead, 14% slower; docs/performance.md.)
  void await_contexts(std::chrono::milliseconds limit);

  /// The probes are over: cuDNN's timed work may start, and the bandwidth children may time
  /// their device-local copies (the probes' cuDNN loading slowed both; docs/performance.md).
  void host_quiet();

private:
  struct Job {
    std::string mode;
    int ordinal = 0;
  };
  std::vector<Job> m_jobs;
  platform::ChildGroup m_group;
  std::vector<platform::ChildOutcome> m_outcomes;
  std::once_flag m_joined;
  std::thread m_thread;

  void join();
};

} // namespace gpucheck::checks
