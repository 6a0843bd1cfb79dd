#pragma once
/// The turn protocol between gpucheck runs on one host (docs/engine.md, "Turns"). A run
/// takes the turns of every GPU it tests before it starts anything on any of them (no child, no
/// census), in one order shared by every run (the locks' names, sorted), waiting for each while
/// it holds the ones before it; it gives a GPU's turn back once its last job there has gone and
/// never takes one again. A run that waits for a turn holds only turns earlier in the order, and
/// the holder of that turn waits, if at all, only for later ones: no cycle of waits can form, so
/// overlapping runs cannot deadlock, whatever GPUs each tests. Every wait is bounded
/// (Turns::take's limit); past it the GPUs not taken are tested by nobody in this run.

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "engine/gpu_lock.hpp"

namespace gpucheck::engine {

/// The order in which a run takes the turns named `names` (one per GPU; "" for a GPU that needs
/// none): the indices of the first GPU of each distinct name, sorted by name. Pure: the model
/// test (engine_turns_test.cpp) explores every interleaving of runs through it.
std::vector<size_t> turn_order(const std::vector<std::string>& names);

/// What became of one GPU's turn.
struct TurnOutcome {
  bool needed = false; ///< the GPU has a name to take a turn by
  bool held = false;   ///< taken (it may have been given back since)
  std::chrono::milliseconds waited{0};
  /// The process that held it while this run waited (0: one this process cannot see, in another
  /// PID namespace), when the kernel named one.
  std::optional<pid_t> other_pid;
};

/// A wait that begins: which GPU, who holds its turn, and for how long this run will wait.
struct TurnWait {
  size_t gpu = 0;
  std::optional<pid_t> holder;
  std::chrono::milliseconds limit{0};
};

class Turns {
public:
  Turns() = default;
  Turns(const Turns&) = delete;
  Turns& operator=(const Turns&) = delete;

  /// Take the turns of `names` in turn_order(), each waited for until `limit` has passed since
  /// this call (or `stop` is set); once that has passed, the rest are tried once without waiting.
  /// `on_wait` is called when a wait begins. Blocks; call once.
  void take(const std::vector<std::string>& names, std::chrono::milliseconds limit,
            const std::atomic<bool>* stop, const std::function<void(const TurnWait&)>& on_wait);
  /// Whether this run holds GPU `gpu`'s turn now (a GPU that needs none counts as held).
  [[nodiscard]] bool held(size_t gpu) const;
  /// Give GPU `gpu`'s turn back (its lock goes once every GPU sharing its name gave it back).
  void release(size_t gpu);
  [[nodiscard]] const TurnOutcome& outcome(size_t gpu) const { return m_outcomes.at(gpu); }
  [[nodiscard]] size_t size() const { return m_outcomes.size(); }

private:
  std::vector<size_t> m_lock_of; ///< GPU -> the GPU whose lock it shares (itself, usually)
  std::vector<GpuLock> m_locks;  ///< by GPU; only the first of a name holds one
  std::vector<bool> m_released;
  std::vector<TurnOutcome> m_outcomes;
};

/// A wait in words: "60 s", "0.5 s".
std::string wait_text(std::chrono::milliseconds wait);

/// How long a run waits for other runs' turns by default: long enough for several whole
/// standard runs on that many GPUs to go first (docs/engine.md, "Turns").
std::chrono::milliseconds default_turn_wait(size_t gpus);

} // namespace gpucheck::engine
