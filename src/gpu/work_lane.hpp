#pragma once
/// A lane of the shared child (gpu-device): a work that prepares on a thread of its own from the
/// start, beside the works on the main thread, and does its timed work when its turn comes, as
/// the last work of the child (cuDNN's: the slowest preparation of any work). The engine knows
/// such a work by its row (protocol::WorkRow::lane) and the child by its runner
/// (WorkRunner::lane, gpu_children.hpp).

#include <nlohmann/json_fwd.hpp>

#include <functional>
#include <memory>

#include "protocol/works.hpp"

namespace gpucheck::gpu {

class DeviceSession;
class KernelModule;

/// What a lane's work calls between its preparation and its timed work: prepared() once nothing
/// of it runs on the GPU until its turn, then turn(), which returns when its turn has come (and
/// throws when it never will: the works before it did not finish).
struct LaneSteps {
  std::function<void()> prepared;
  std::function<void()> turn;
};

/// A lane's work on the child's session and kernels: its fields go into `out`, which is its
/// result line, also when it throws (its failure is then added).
using LaneWork = void (*)(DeviceSession& session, const KernelModule& module, nlohmann::json& out,
                          const LaneSteps& steps);

/// A lane whose thread runs its work: it writes a line saying it prepares ({"work": NAME,
/// "lane": "preparing"}: should the child die meanwhile, the engine blames the lane's check
/// rather than the work on the main thread), then one when it is prepared.
class WorkLane {
public:
  WorkLane() = default;
  WorkLane(const WorkLane&) = delete;
  WorkLane& operator=(const WorkLane&) = delete;
  WorkLane(WorkLane&&) = delete;
  WorkLane& operator=(WorkLane&&) = delete;
  /// Stops a lane whose turn never came (its thread ends at its turn) and joins it.
  virtual ~WorkLane() = default;
  /// Block until its preparation is over (or it ended): nothing of it then runs on the GPU
  /// until its turn.
  virtual void wait_prepared() = 0;
  /// Its turn: its timed work; blocks until it is over and returns its line ({"work": NAME,
  /// ...its fields...}).
  virtual nlohmann::json finish() = 0;
};

/// Start `work`'s lane on `session`, whose context exists, with the kernels the child loaded.
std::unique_ptr<WorkLane> start_lane(protocol::Work work, LaneWork run, DeviceSession& session,
                                     const KernelModule& module);

} // namespace gpucheck::gpu
