#pragma once
/// Isolation: risky work (anything that loads libcuda, NVML, cuDNN, ...) runs in a child process,
/// `/proc/self/exe --child MODE ARGS...`, with a deadline (SIGTERM, then SIGKILL after a grace
/// period). The child writes one JSON value on fd 3. A crash, hang, early exit or garbage on the
/// pipe becomes a ChildFailure; the parent never dies with its child.

#include <nlohmann/json_fwd.hpp>

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpucheck/model/snapshot.hpp"

namespace gpucheck::process {

struct ChildRequest {
  std::string mode;              ///< a registered child mode (child_modes.hpp)
  std::vector<std::string> args; ///< passed after the mode
  /// Environment changes for the child: a value sets, nullopt unsets.
  std::vector<std::pair<std::string, std::optional<std::string>>> env;
  /// The child's time limit, counted from its start unless its owner arms the deadline itself
  /// (ChildGroup::set_deadline); the failure reported on expiry names this limit.
  std::chrono::milliseconds timeout{10000};
  std::chrono::milliseconds kill_grace{500}; ///< between SIGTERM and SIGKILL
  /// A control channel: a socket on fd 4 carrying single bytes both ways (ChildGroup::send(),
  /// ChildListener::on_message(); in the child control_send() / control_await()). What the
  /// bytes mean is the owner's business (src/protocol/messages.hpp for the GPU work).
  bool control_channel = false;
  /// No deadline runs until the owner arms one with ChildGroup::set_deadline().
  bool deadline_by_owner = false;
  /// The child writes one JSON value per line (write_result_line()) as its work goes on; the
  /// payload is the array of them, and a child that fails keeps the complete lines it wrote
  /// in ChildOutcome::partial.
  bool result_lines = false;
  /// The child's outcome is concluded as soon as its result is complete (its result pipe
  /// closed with a valid result), without waiting for its process to exit: a GPU child's exit
  /// (the kernel freeing its context and mappings) comes a noticeable time after it. The
  /// process is then neither waited for nor reported again; it dies with gpucheck at the latest.
  bool conclude_at_result = false;
};

struct ChildOutcome {
  std::shared_ptr<const nlohmann::json> payload; ///< set when the child exited 0 with valid JSON
  std::optional<ChildFailure> failure;           ///< set otherwise
  /// With ChildRequest::result_lines, when the child failed: the complete lines it had written
  /// (a JSON array, maybe empty).
  std::shared_ptr<const nlohmann::json> partial;
  std::string stderr_tail;              ///< last lines of the child's stderr and stdout
  std::chrono::milliseconds elapsed{0}; ///< from the start, or from ChildGroup::mark_start()

  [[nodiscard]] bool ok() const { return payload != nullptr; }
};

/// What a ChildGroup tells its owner while wait_all() runs, on wait_all()'s thread. The owner may
/// call send(), set_deadline() and mark_start() from these callbacks.
class ChildListener {
public:
  virtual ~ChildListener() = default;
  /// Bytes a child sent on its control channel, in order.
  virtual void on_message(size_t child, std::string_view bytes) = 0;
  /// The child has ended: reaped, its pipes drained (its control channel is closed too).
  virtual void on_finished(size_t child) = 0;
  /// After each round of events, and when another thread called ChildGroup::wake().
  virtual void on_wake() = 0;
};

struct Running;

/// Children started one by one and waited for together: the parent can do its own work (read
/// /proc, /sys) while they run. Each child has its own deadline. The group knows processes,
/// pipes and deadlines only; an owner that needs a protocol with its children speaks it over
/// their control channels through a ChildListener.
class ChildGroup {
public:
  ChildGroup();
  ~ChildGroup();
  ChildGroup(const ChildGroup&) = delete;
  ChildGroup& operator=(const ChildGroup&) = delete;

  /// Start a child now; returns its index for wait_all()'s result.
  size_t start(ChildRequest request);
  /// Wait for every started child (killing those past their deadline); outcomes in start order.
  std::vector<ChildOutcome> wait_all(ChildListener* listener = nullptr);
  /// Safe from another thread while wait_all() runs: kill every unfinished child now; their
  /// outcomes are failures of kind "cancelled".
  void cancel();
  /// Kill one unfinished child now (its outcome: "cancelled" with `reason`). wait_all()'s thread.
  void cancel_one(size_t child, std::string reason);
  /// Safe from another thread: make wait_all() call the listener's on_wake() soon.
  void wake();
  /// Send bytes on a child's control channel (nothing if it has none or it is gone).
  void send(size_t child, std::string_view bytes);
  /// The outcome of a child that has finished (after its on_finished()); nullopt before.
  [[nodiscard]] std::optional<ChildOutcome> outcome(size_t child) const;
  /// The child's deadline from now on (nullopt: none runs). wait_all()'s thread only.
  void set_deadline(size_t child, std::optional<std::chrono::steady_clock::time_point> deadline);
  /// From now on, conclude the child's outcome as soon as its result is complete
  /// (ChildRequest::conclude_at_result). wait_all()'s thread only.
  void conclude_at_result(size_t child);
  /// The child's elapsed time is counted from now (e.g. its release). wait_all()'s thread only.
  void mark_start(size_t child);
  /// The child's process id (-1 when it could not be started).
  [[nodiscard]] int pid(size_t child) const;
  [[nodiscard]] size_t size() const { return m_runs.size(); }
  /// Whether interrupt_children() ends this group's children (the default). An owner that stops
  /// its children itself on a signal (the GPU engine: its long works report what they did)
  /// turns it off before starting any.
  void follow_interrupts(bool follow) { m_follow_interrupts = follow; }

private:
  /// wait_all()'s poll set: each descriptor, whose it is, and when to look again at the latest.
  struct PollSet;
  /// One child in a round of wait_all(): concluded once it finished (true); else its
  /// cancellation, interrupt and deadline served and its descriptors added to `set`.
  bool tend(size_t child, ChildListener* listener, bool cancelled, int interrupted, PollSet& set);
  /// What poll found ready in `set`: results, stderr text, control messages, the wake pipe.
  void serve(const PollSet& set, ChildListener* listener);

  std::vector<ChildRequest> m_requests;
  std::vector<std::unique_ptr<Running>> m_runs;
  std::atomic<bool> m_cancelled{false};
  bool m_follow_interrupts = true;
  int m_wake[2] = {-1, -1}; ///< self-pipe: cancel() and wake() wake wait_all()'s poll
};

/// In a child started with ChildRequest::control_channel: send one byte to the parent.
/// Returns false when there is no channel.
bool control_send(char byte);
/// In such a child: block until `wanted` arrives (other bytes are skipped). A parent that closed
/// the channel or died makes the child exit quietly (its work is no longer wanted). Returns at
/// once, false, when there is no channel.
bool control_await(char wanted);
/// In such a child: whether `wanted` arrived since the last call (other bytes are dropped), or
/// the parent closed the channel; never blocks. False when there is no channel.
bool control_poll(char wanted);
/// In such a child: the bytes up to the next newline (at most 64; the newline is dropped). A
/// closed channel ends the child quietly, as in control_await().
std::string control_read_line();
/// In a child started with ChildRequest::result_lines: write one JSON value as a line of its
/// result, now (a result written so is kept even if the child dies later).
void write_result_line(const nlohmann::json& value);
/// In such a child: close the channel (the parent sees it end). Idempotent.
void control_close();
/// Whether this process has a control channel.
bool control_channel_open();

/// gpucheck was interrupted (SIGINT, SIGTERM): every child of this process ends now instead of at
/// its deadline. Each running child's process group (the child and whatever it started: an
/// interpreter's own subprocesses) gets `signo`, then SIGKILL after the child's kill grace;
/// children started from now on are not started. Their outcomes are failures of kind
/// "cancelled" whose detail names the signal. run_capture's helper commands end the same way.
/// Safe from any thread (not from a signal handler). Groups with follow_interrupts(false) are
/// left to their owner.
void interrupt_children(int signo);

/// The signal interrupt_children() was given, or 0.
int children_interrupted();

/// Test seam: forget an interrupt_children() (a test process runs many "runs").
void reset_children_interrupt();

/// Run one child and wait for it (or its deadline).
ChildOutcome run_child(const ChildRequest& request);

/// Run several children at once; outcomes in request order. Each has its own deadline.
std::vector<ChildOutcome> run_children(std::span<const ChildRequest> requests);

/// The executable that children run; "/proc/self/exe" unless overridden (tests).
const std::string& self_executable();
void set_self_executable(std::string path);

/// Name of a signal, e.g. "SIGABRT" (or "signal 42").
std::string signal_name(int signal);

} // namespace gpucheck::process
