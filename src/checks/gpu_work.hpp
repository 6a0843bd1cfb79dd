#pragma once
/// The active GPU checks' children, started ahead and run in a fixed order (docs/checks.md,
/// "How the GPU checks are scheduled").
///
/// Each child pays about 0.2 s for cuInit and its context before any work. GpuWork starts every
/// child at once, while the probes still run; each does its setup (cuInit, context, gpucheck's
/// kernels, cuDNN's libraries and handle) and then waits at its gate. The gates open so that each
/// GPU runs one check at a time (compute, streams, cuDNN) and the copy-bandwidth children run
/// last, one GPU after the other, alone on the machine: no measured figure shares the GPU, the
/// PCIe link or host memory with another check's work. Device memory is allocated only after
/// the gate opens, so the memory budget holds one check at a time.

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

/// The child modes of the active GPU checks in the order their gates open on one GPU.
/// Bandwidth is last and exclusive.
std::vector<std::string> gpu_work_modes();

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
