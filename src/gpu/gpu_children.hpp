#pragma once
/// Child-mode handlers of the active GPU checks (registered in child_dispatch/child_modes.cpp).
/// Each runs in `gpucheck --child MODE ORDINAL [OPTIONS]`, works on one device and returns the JSON
/// described in child.hpp; the checks of src/gpu_checks/ judge it.

#include <nlohmann/json_fwd.hpp>

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpu/work_lane.hpp"
#include "protocol/works.hpp"

namespace gpucheck::gpu {

// Declared only: this header is the children's entry (child_dispatch/child_modes.cpp), which needs
// no CUDA header. The works' own files include gpu/session.hpp and gpu/kernel_module.hpp.
class DeviceSession;
class KernelModule;

/// One work of the GPU children on a session and the kernel module its child loaded: it waits
/// at its gate, does its gated work, says done_with_gpu(), and checks its results.
using GpuWork = void (*)(DeviceSession& session, const KernelModule& module, nlohmann::json& out);

/// How a work of the table (protocol::work_row(): its name, mode and check) runs in gpucheck's own
/// GPU children, in gpu-device and in its own child mode.
struct WorkRunner {
  protocol::Work work;
  GpuWork run;
  bool needs_kernels; ///< it runs gpucheck's kernels (the copies do not)
  /// Its timed work needs the GPU to itself: in the shared child, cuDNN's preparation beside it
  /// is over before it says ready (the copies: a kernel or a copy beside them skews the figure,
  /// and cuDNN's calls beside the copies' spin-kernel gate held each series until the gate's
  /// timeout: docs/performance.md).
  bool alone;
  /// A lane's work (its row's WorkRow::lane): in the shared child it prepares on a thread of its
  /// own from the start and comes last (gpu/work_lane.hpp); `run` is then nullptr.
  LaneWork lane = nullptr;
  /// The hardware queues its context needs (CUDA_DEVICE_MAX_CONNECTIONS); a shared child takes
  /// the most of its works'.
  int connections = 1;
  /// Its child mode where it takes more than an ordinal (gpu-cudnn ORDINAL full); nullptr: a
  /// session, the kernels and `run` (run_single_work()).
  nlohmann::json (*own_child)(const std::vector<std::string>& args) = nullptr;
  /// Frees what its work kept for the next work of its check (gpu.bandwidth's host buffers, for
  /// its copies on every GPU at once): the shared child calls it before any work that is not
  /// `on_kept`, so that later works may use the whole budget. nullptr: it keeps nothing.
  void (*release_kept)() = nullptr;
  /// It runs on what the work before it kept (release_kept is not called before it).
  bool on_kept = false;
};

/// The runners that checks of their own folders added (add_work_runner()); peers and nccl run
/// in gpu-peers.
std::span<const WorkRunner> work_runners();
/// Add a check's own runner at start-up, before any child mode runs (its work's row first:
/// protocol::add_work()). Throws std::logic_error for a work that has a runner already.
void add_work_runner(const WorkRunner& runner);

/// The runner of the work whose child mode is `mode` ("gpu-compute", ...); nullptr for any other
/// mode.
const WorkRunner* runner_of_mode(std::string_view mode);

/// A child of one work (its mode): its session, its kernel module, then the work (or the
/// module's failure when the work needs gpucheck's kernels and they did not load).
nlohmann::json run_single_work(const std::vector<std::string>& args, const WorkRunner& work);

/// gpu-devices: protocol::DeviceListing ({"init", "init_name", "devices": [{"ordinal", "name"}]},
/// or {"error"} without a usable libcuda).
/// Used only when the snapshot carries no driver-API facts.
nlohmann::json child_gpu_devices(const std::vector<std::string>& args);

class PeerSession; // gpu/peer_session.hpp

/// What a spanning work knows of its place in the child over every GPU.
struct SpanStep {
  bool sweep = false; ///< the long level's (gpu.p2p: every size of the peer copies)
  /// Nothing follows it in this child: what it holds may be left to the process's exit.
  bool last = false;
  /// The next work's preparation (SpanRunner::prepare), to run once this work's buffers are
  /// taken and before its gate, off the timed path; empty: none.
  std::function<void()> before_gate;
};

/// How a work of the child over every GPU (its row's WorkChild::spanning) runs there.
struct SpanRunner {
  protocol::Work work;
  void (*run)(PeerSession& session, const SpanStep& step, nlohmann::json& out) = nullptr;
  /// Before the session opens, touching no GPU (gpu.nccl: its library, which is large); nullptr:
  /// nothing. Not called when the plan leaves the work out (WorkRow::beyond_budget).
  void (*load)() = nullptr;
  /// On the open session, during the work before it, before that work's gate (gpu.nccl's
  /// ncclCommInitAll); nullptr: nothing. Its failure is its own work's, reported when it runs.
  void (*prepare)(PeerSession& session) = nullptr;
};

/// The spanning works' runners (add_span_runner()), in the order added.
std::span<const SpanRunner> span_runners();
/// Add a spanning check's runner at start-up (its work's row first: protocol::add_work()). Throws
/// std::logic_error for a work that has a runner already.
void add_span_runner(const SpanRunner& runner);

/// gpu-peers ORDINALS [WORKS] [sweep]: one process on every GPU listed ("0,1") that does the
/// spanning works named ("peers,nccl"), one after another (span_child.cpp).
nlohmann::json child_gpu_peers(const std::vector<std::string>& args);

/// gpu-device ORDINAL WORKS: the works named ("compute,streams,bandwidth,cudnn", in that order)
/// one after another on one context (engine rule same_child); a lane's work (cuDNN's) prepares
/// on its thread from the start. Each work's result is written as a
/// line of its own as soon as it is over ({"work": NAME, ...the work's JSON...}, or {"work":
/// NAME, "not_run": REASON} when an earlier failure left the context unusable); the last line
/// holds the child's timeline.
nlohmann::json child_gpu_device(const std::vector<std::string>& args);

} // namespace gpucheck::gpu
