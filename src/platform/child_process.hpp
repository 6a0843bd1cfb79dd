#pragma once
/// Isolation: risky work (anything that loads libcuda, NVML, cuDNN, ...) runs in a child process,
/// `/proc/self/exe --child MODE ARGS...`, with a deadline (SIGTERM, then SIGKILL after a grace
/// period). The child writes one JSON value on fd 3. A crash, hang, early exit or garbage on the
/// pipe becomes a ChildFailure; the parent never dies with its child.

#include <nlohmann/json_fwd.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "gpucheck/model/snapshot.hpp"

namespace gpucheck::platform {

struct ChildRequest {
  std::string mode;              ///< a registered child mode (child_modes.hpp)
  std::vector<std::string> args; ///< passed after the mode
  /// Environment changes for the child: a value sets, nullopt unsets.
  std::vector<std::pair<std::string, std::optional<std::string>>> env;
  std::chrono::milliseconds timeout{10000};
  std::chrono::milliseconds kill_grace{500}; ///< between SIGTERM and SIGKILL
  /// Held at a gate (ChildGroup only): the child starts at once and does its setup, then
  /// gate_wait() blocks until the group releases it; `timeout` counts from the release.
  bool gated = false;
  /// For a gated child: release it once every child of the group with these indices (earlier
  /// starts) is done with its gated work (gate_done()) or has finished. Empty: release at once.
  std::vector<size_t> release_after;
  /// For a gated child: wait until those children have exited, not merely said they are done
  /// with their gated work: a context teardown on the GPU (about 0.1 s) slows copies and
  /// changes which cuDNN algorithm times fastest.
  bool release_after_exit = false;
  /// For a gated child: also wait until these children have built their context (or ended): a
  /// context being built on any GPU slows the copies being timed.
  std::vector<size_t> release_after_contexts;
  /// For a gated child: let it start its expensive setup (gate_setup()) once every child with
  /// these indices has built its context (gate_context_built()), waits at its gate, or has
  /// finished. Empty: at once.
  std::vector<size_t> setup_after;
  /// For a gated child: release it only once the group has been told that gpucheck's own host
  /// work is over (ChildGroup::host_quiet()): the probes' cuDNN children, loading cuDNN's
  /// libraries, slowed cuDNN's timed convolutions (docs/performance.md).
  bool release_after_quiet_host = false;
};

struct ChildOutcome {
  std::shared_ptr<const nlohmann::json> payload; ///< set when the child exited 0 with valid JSON
  std::optional<ChildFailure> failure;           ///< set otherwise
  std::string stderr_tail;                       ///< last lines of the child's stderr and stdout
  std::chrono::milliseconds elapsed{0};          ///< from the start, or from the release when gated

  [[nodiscard]] bool ok() const { return payload != nullptr; }
};

struct Running;

/// Children started one by one and waited for together: the parent can do its own work (read
/// /proc, /sys) while they run. Each child has its own deadline, counted from its start.
class ChildGroup {
public:
  ChildGroup();
  ~ChildGroup();
  ChildGroup(const ChildGroup&) = delete;
  ChildGroup& operator=(const ChildGroup&) = delete;

  /// Start a child now; returns its index for wait_all()'s result.
  size_t start(ChildRequest request);
  /// Wait for every started child (killing those past their deadline); outcomes in start order.
  /// Gated children are released as their `release_after` children finish.
  std::vector<ChildOutcome> wait_all();
  /// Safe from another thread while wait_all() runs: kill every unfinished child now; their
  /// outcomes are failures of kind "cancelled".
  void cancel();
  /// Safe from another thread while wait_all() runs: block until each gated child in `built`
  /// has built its context (gate_context_built()) or finished, and each child in `exited` has
  /// finished, or `limit` has passed. Returns whether they all had. Call only after every
  /// start().
  bool await_progress(const std::vector<size_t>& built, const std::vector<size_t>& exited,
                      std::chrono::milliseconds limit);
  /// Safe from another thread while wait_all() runs: gpucheck's own host work (the probes) is
  /// over. Releases the children held by ChildRequest::release_after_quiet_host and resumes
  /// those paused in gate_pause_for_quiet_host().
  void host_quiet();

private:
  /// Publish to await_contexts() the children that built their context or finished.
  void publish_contexts();

  std::vector<ChildRequest> m_requests;
  std::vector<std::unique_ptr<Running>> m_runs;
  std::atomic<bool> m_cancelled{false};
  std::atomic<bool> m_host_quiet{false};
  std::mutex m_contexts_lock;
  std::condition_variable m_contexts_changed;
  std::vector<bool> m_contexts_seen; ///< under m_contexts_lock
  std::vector<bool> m_exits_seen;    ///< under m_contexts_lock
  int m_wake[2] = {-1, -1}; ///< self-pipe: cancel() and host_quiet() wake wait_all()'s poll

  void wake();
};

/// In a child started with ChildRequest::gated: tell the parent it is ready and block until the
/// parent releases it (returns at once otherwise). A child whose parent went away exits quietly.
void gate_wait();

/// In a gated child, once its expensive setup (a CUDA context) is built: the parent may let the
/// next child start its own. Does nothing in a child that is not gated.
void gate_context_built();

/// In a gated child, after its last work that needs the GPU to itself: the parent may release
/// the next child while this one checks results and tears down. Idempotent; exiting implies it.
void gate_done();

/// In a gated child, before its expensive setup (a CUDA context): block until the parent allows
/// it (ChildRequest::setup_after). Returns at once in a child that is not gated.
void gate_setup();

/// In a gated child, in the middle of its gated work: block until gpucheck's own host work is
/// over (ChildGroup::host_quiet()), for a measurement that work disturbs. The wait does not
/// count against the child's deadline. Returns at once in a child that is not gated.
void gate_pause_for_quiet_host();

/// Run one child and wait for it (or its deadline).
ChildOutcome run_child(const ChildRequest& request);

/// Run several children at once; outcomes in request order. Each has its own deadline.
std::vector<ChildOutcome> run_children(std::span<const ChildRequest> requests);

/// The executable that children run; "/proc/self/exe" unless overridden (tests).
const std::string& self_executable();
void set_self_executable(std::string path);

/// Name of a signal, e.g. "SIGABRT" (or "signal 42").
std::string signal_name(int signal);

} // namespace gpucheck::platform
