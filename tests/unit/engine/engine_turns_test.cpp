// The turn protocol between gpucheck runs (engine/turns.hpp): its order, the real locks, and a
// model of several runs explored over every interleaving of their steps, which must reach no
// state without a way out. The model takes its turns through the real turn_order(); two other
// protocols, which the model must find deadlocked, prove that the exploration can fail.

#include "engine/turns.hpp"

#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <deque>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace gpucheck::engine {
namespace {

using namespace std::chrono_literals;

std::string unique_name(const std::string& tag) {
  return "GPU-turns-" + tag + "-" + std::to_string(::getpid());
}

TEST(TurnOrder, SortsByNameAndTakesEachNameOnce) {
  EXPECT_EQ(turn_order({"GPU-b", "GPU-a", "GPU-c"}), (std::vector<size_t>{1, 0, 2}));
  // Two GPUs named alike (MIG instances of one GPU) share one turn; a GPU without a name needs
  // none.
  EXPECT_EQ(turn_order({"GPU-b", "", "GPU-a", "GPU-b"}), (std::vector<size_t>{2, 0}));
  EXPECT_TRUE(turn_order({}).empty());
  // The order does not depend on the order the run lists its GPUs in.
  const std::vector<std::string> one{"GPU-x", "GPU-y"};
  const std::vector<std::string> other{"GPU-y", "GPU-x"};
  EXPECT_EQ(one[turn_order(one).front()], other[turn_order(other).front()]);
}

TEST(GpuLock, NamesTheProcessThatHoldsIt) {
  const std::string name = unique_name("holder");
  EXPECT_FALSE(GpuLock::holder(name).has_value());
  GpuLock lock = GpuLock::try_acquire(name);
  ASSERT_TRUE(lock.held()) << lock.error();
  const std::optional<pid_t> holder = GpuLock::holder(name);
  ASSERT_TRUE(holder.has_value());
  EXPECT_EQ(*holder, ::getpid());
  const GpuLock refused = GpuLock::try_acquire(name);
  EXPECT_TRUE(refused.busy());
  lock.release();
  EXPECT_FALSE(GpuLock::holder(name).has_value());
}

TEST(Turns, WaitsForATurnInOrderAndNamesItsHolder) {
  const std::string a = unique_name("order-a");
  const std::string b = unique_name("order-b");
  auto other = std::make_unique<GpuLock>(GpuLock::try_acquire(b));
  ASSERT_TRUE(other->held());
  std::thread release([&other] {
    std::this_thread::sleep_for(200ms);
    other->release();
  });
  Turns turns;
  std::vector<TurnWait> waits;
  turns.take({b, a}, 5s, nullptr, [&waits](const TurnWait& wait) { waits.push_back(wait); });
  release.join();
  EXPECT_TRUE(turns.held(0));
  EXPECT_TRUE(turns.held(1));
  ASSERT_EQ(waits.size(), 1U);
  EXPECT_EQ(waits[0].gpu, 0U);
  ASSERT_TRUE(waits[0].holder.has_value());
  EXPECT_EQ(*waits[0].holder, ::getpid());
  EXPECT_GE(turns.outcome(0).waited, 150ms);
  turns.release(0);
  EXPECT_FALSE(turns.held(0));
  EXPECT_TRUE(GpuLock::try_acquire(b).held()); // given back
}

TEST(Turns, PastTheWaitTheRestAreTriedOnceAndTheHolderIsNamed) {
  const std::string a = unique_name("late-a");
  const std::string b = unique_name("late-b");
  const std::string c = unique_name("late-c");
  const GpuLock held_a = GpuLock::try_acquire(a);
  const GpuLock held_c = GpuLock::try_acquire(c);
  ASSERT_TRUE(held_a.held() && held_c.held());
  Turns turns;
  const auto start = std::chrono::steady_clock::now();
  turns.take({c, b, a}, 300ms, nullptr, {});
  // a waited 300 ms; then b (free) and c (held) were tried once each.
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
  EXPECT_FALSE(turns.held(2));
  EXPECT_TRUE(turns.held(1));
  EXPECT_FALSE(turns.held(0));
  ASSERT_TRUE(turns.outcome(0).other_pid.has_value());
  EXPECT_EQ(*turns.outcome(0).other_pid, ::getpid());
  EXPECT_TRUE(turns.outcome(0).needed && !turns.outcome(0).held);
}

TEST(Turns, AStopEndsTheWaitAtOnce) {
  const std::string a = unique_name("stop");
  const GpuLock held = GpuLock::try_acquire(a);
  ASSERT_TRUE(held.held());
  std::atomic<bool> stop{false};
  std::thread stopper([&stop] {
    std::this_thread::sleep_for(100ms);
    stop.store(true);
  });
  Turns turns;
  const auto start = std::chrono::steady_clock::now();
  turns.take({a}, 60s, &stop, {});
  stopper.join();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  EXPECT_FALSE(turns.held(0));
}

TEST(Turns, TwoRunsListingTheGpusInOppositeOrdersBothGetThem) {
  // The case that deadlocked when each run took its turns on its own: each now takes them in the
  // names' order, so one run waits for the other instead of each holding what the other needs.
  const std::string a = unique_name("opposite-a");
  const std::string b = unique_name("opposite-b");
  for (int round = 0; round < 20; ++round) {
    std::atomic<int> done{0};
    const auto run = [&done](std::vector<std::string> names) {
      Turns turns;
      turns.take(std::move(names), 10s, nullptr, {});
      if (turns.held(0) && turns.held(1)) {
        std::this_thread::sleep_for(2ms); // its work
        done.fetch_add(1);
      }
      turns.release(0);
      turns.release(1);
    };
    std::thread one(run, std::vector<std::string>{a, b});
    std::thread two(run, std::vector<std::string>{b, a});
    one.join();
    two.join();
    EXPECT_EQ(done.load(), 2) << "round " << round;
  }
}

// ---- The model: runs over GPUs, every interleaving of their steps ----

/// How runs take their turns, in the model.
enum class Protocol {
  ordered,        ///< gpucheck's: turn_order(), each waited for, all before any work
  own_order,      ///< each run in its own GPU order, holding what it has while it waits
  each_gpu_alone, ///< a waiter per GPU; a GPU's work starts with its turn (gpucheck before)
};

struct ModelRun {
  std::vector<std::string> gpus; ///< the GPUs' names, in the run's own order
};

/// One state of the whole system: for each run, what it holds, what it did.
struct ModelState {
  std::vector<int> owner;              ///< per GPU name: the run holding its turn, or -1
  std::vector<std::vector<bool>> held; ///< run -> its GPU (own index) -> held
  std::vector<std::vector<bool>> done; ///< run -> its GPU -> its work on it is done
  std::vector<bool> span_done;         ///< run -> its work over every GPU is done
  std::vector<std::vector<bool>> released;
  auto operator<=>(const ModelState&) const = default;
};

class Model {
public:
  Model(std::vector<std::string> names, std::vector<ModelRun> runs, Protocol protocol)
      : m_names(std::move(names)), m_runs(std::move(runs)), m_protocol(protocol) {}

  /// Explores every interleaving from the start; returns the number of states with no way out
  /// that are not the end (every run done), and counts the states seen.
  size_t deadlocks(size_t& states_seen) const {
    ModelState start;
    start.owner.assign(m_names.size(), -1);
    for (const ModelRun& run : m_runs) {
      start.held.emplace_back(run.gpus.size(), false);
      start.done.emplace_back(run.gpus.size(), false);
      start.released.emplace_back(run.gpus.size(), false);
      start.span_done.push_back(run.gpus.size() < 2); // one GPU: no work over several
    }
    std::set<ModelState> seen{start};
    std::deque<ModelState> queue{start};
    size_t stuck = 0;
    while (!queue.empty()) {
      const ModelState state = queue.front();
      queue.pop_front();
      const std::vector<ModelState> next = successors(state);
      if (next.empty() && !finished(state)) {
        ++stuck;
      }
      for (const ModelState& n : next) {
        if (seen.insert(n).second) {
          queue.push_back(n);
        }
      }
    }
    states_seen = seen.size();
    return stuck;
  }

private:
  [[nodiscard]] size_t name_index(const std::string& name) const {
    return static_cast<size_t>(std::find(m_names.begin(), m_names.end(), name) - m_names.begin());
  }

  [[nodiscard]] bool finished(const ModelState& s) const {
    for (size_t r = 0; r < m_runs.size(); ++r) {
      if (std::find(s.released[r].begin(), s.released[r].end(), false) != s.released[r].end()) {
        return false;
      }
    }
    return true;
  }

  /// The GPUs (own indices) run `r` may try to take a turn of now.
  [[nodiscard]] std::vector<size_t> wanted(const ModelState& s, size_t r) const {
    const ModelRun& run = m_runs[r];
    std::vector<size_t> order;
    if (m_protocol == Protocol::ordered) {
      order = turn_order(run.gpus); // the real code's order
    } else {
      for (size_t i = 0; i < run.gpus.size(); ++i) {
        order.push_back(i);
      }
    }
    std::vector<size_t> next;
    for (const size_t i : order) {
      if (s.held[r][i] || s.released[r][i]) {
        continue;
      }
      next.push_back(i);
      if (m_protocol != Protocol::each_gpu_alone) {
        break; // one at a time, in order: it waits for this one
      }
    }
    return next;
  }

  [[nodiscard]] std::vector<ModelState> successors(const ModelState& s) const {
    std::vector<ModelState> out;
    for (size_t r = 0; r < m_runs.size(); ++r) {
      const ModelRun& run = m_runs[r];
      const size_t count = run.gpus.size();
      // Take a turn that is free.
      for (const size_t i : wanted(s, r)) {
        const size_t n = name_index(run.gpus[i]);
        if (s.owner[n] == -1) {
          ModelState next = s;
          next.owner[n] = static_cast<int>(r);
          next.held[r][i] = true;
          out.push_back(std::move(next));
        }
      }
      const bool all_held = std::find(s.held[r].begin(), s.held[r].end(), false) == s.held[r].end();
      // Work on one GPU: gpucheck's once every turn is held; before, as soon as its own was.
      for (size_t i = 0; i < count; ++i) {
        const bool may = m_protocol == Protocol::each_gpu_alone ? s.held[r][i] : all_held;
        if (may && !s.done[r][i]) {
          ModelState next = s;
          next.done[r][i] = true;
          out.push_back(std::move(next));
        }
      }
      // The work over every GPU (peer copies, NCCL), after each GPU's own.
      const bool all_done = std::find(s.done[r].begin(), s.done[r].end(), false) == s.done[r].end();
      if (all_held && all_done && !s.span_done[r]) {
        ModelState next = s;
        next.span_done[r] = true;
        out.push_back(std::move(next));
      }
      // A GPU's turn goes back once every job using it is over.
      for (size_t i = 0; i < count; ++i) {
        if (s.held[r][i] && s.done[r][i] && s.span_done[r]) {
          ModelState next = s;
          next.held[r][i] = false;
          next.released[r][i] = true;
          next.owner[name_index(run.gpus[i])] = -1;
          out.push_back(std::move(next));
        }
      }
    }
    return out;
  }

  std::vector<std::string> m_names;
  std::vector<ModelRun> m_runs;
  Protocol m_protocol;
};

/// Every list of distinct names from `names` (each order, each subset but the empty one).
std::vector<std::vector<std::string>> all_lists(const std::vector<std::string>& names) {
  std::vector<std::vector<std::string>> lists;
  const size_t n = names.size();
  for (unsigned mask = 1; mask < (1U << n); ++mask) {
    std::vector<std::string> subset;
    for (size_t i = 0; i < n; ++i) {
      if ((mask & (1U << i)) != 0) {
        subset.push_back(names[i]);
      }
    }
    std::sort(subset.begin(), subset.end());
    do {
      lists.push_back(subset);
    } while (std::next_permutation(subset.begin(), subset.end()));
  }
  return lists;
}

size_t deadlocks_over(const std::vector<std::string>& names, size_t runs, Protocol protocol,
                      size_t& combinations, size_t& states) {
  const std::vector<std::vector<std::string>> lists = all_lists(names);
  std::vector<size_t> pick(runs, 0);
  size_t stuck = 0;
  combinations = 0;
  states = 0;
  for (;;) {
    std::vector<ModelRun> model_runs;
    for (const size_t p : pick) {
      model_runs.push_back({lists[p]});
    }
    size_t seen = 0;
    stuck += Model(names, model_runs, protocol).deadlocks(seen);
    states += seen;
    ++combinations;
    size_t k = 0;
    while (k < runs && ++pick[k] == lists.size()) {
      pick[k++] = 0;
    }
    if (k == runs) {
      break;
    }
  }
  return stuck;
}

TEST(TurnModel, TwoRunsOverTwoGpusNeverReachAStateWithoutAWayOut) {
  size_t combinations = 0;
  size_t states = 0;
  // Each run tests GPU A, B or both, in either order: 4 x 4 pairs of runs.
  EXPECT_EQ(deadlocks_over({"GPU-A", "GPU-B"}, 2, Protocol::ordered, combinations, states), 0U);
  EXPECT_EQ(combinations, 16U);
  EXPECT_GT(states, 100U);
}

TEST(TurnModel, ThreeRunsOverThreeGpusNeverReachAStateWithoutAWayOut) {
  size_t combinations = 0;
  size_t states = 0;
  // Every subset and order of three GPUs for each of three runs: 15^3 systems.
  EXPECT_EQ(deadlocks_over({"GPU-A", "GPU-B", "GPU-C"}, 3, Protocol::ordered, combinations, states),
            0U);
  EXPECT_EQ(combinations, 15U * 15U * 15U);
}

TEST(TurnModel, TheExplorationFindsTheDeadlocksOfOtherProtocols) {
  size_t combinations = 0;
  size_t states = 0;
  // Each run in its own order, holding what it has: runs listing A, B and B, A deadlock.
  EXPECT_GT(deadlocks_over({"GPU-A", "GPU-B"}, 2, Protocol::own_order, combinations, states), 0U);
  size_t seen = 0;
  EXPECT_EQ(
      Model({"GPU-A", "GPU-B"}, {{{"GPU-A", "GPU-B"}}, {{"GPU-B", "GPU-A"}}}, Protocol::own_order)
          .deadlocks(seen),
      1U);
  // A waiter per GPU, each GPU's work with its own turn (gpucheck until this protocol): two runs
  // over the same two GPUs deadlock even when they list them alike, each holding one GPU until
  // its work over both is done.
  EXPECT_GT(Model({"GPU-A", "GPU-B"}, {{{"GPU-A", "GPU-B"}}, {{"GPU-A", "GPU-B"}}},
                  Protocol::each_gpu_alone)
                .deadlocks(seen),
            0U);
}

} // namespace
} // namespace gpucheck::engine
