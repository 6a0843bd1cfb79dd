// The plan's invariants, checked over simulated runs (random durations, random crashes, random
// end of the probes) driven by the scheduler's own decision functions (may_step, after_message),
// rather than by pinning the plan's condition lists.

#include "engine/plan.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "engine/scheduler.hpp"

namespace gpucheck::engine {
namespace {

constexpr uint64_t k_mib = 1ULL << 20;
constexpr uint64_t k_gib = 1ULL << 30;

/// One simulated child: how long each phase takes and where it may crash.
struct Sim {
  int setup_ms = 0;   ///< context
  int prepare_ms = 0; ///< before its gate
  int work_ms = 0;    ///< gated work
  int teardown_ms = 0;
  std::optional<JobState> crash_in; ///< the child dies in this state
  JobState state = JobState::waiting_for_setup;
  int next_event_at = -1; ///< when the current phase ends (ms), -1: waiting on the parent
};

/// A timeline of (time, job, state) and every state vector seen, for the invariant checks.
struct Trace {
  std::vector<std::vector<JobState>> snapshots;
  std::vector<int> probes_over_at_snapshot;
  int end_ms = 0;
  bool deadlock = false;
};

Trace simulate(const Plan& plan, std::mt19937& rng, int probes_end_ms, double crash_chance) {
  std::uniform_int_distribution<int> ms(1, 60);
  std::uniform_real_distribution<double> unit(0, 1);
  std::vector<Sim> sims(plan.jobs.size());
  for (Sim& s : sims) {
    s.setup_ms = ms(rng);
    s.prepare_ms = ms(rng);
    s.work_ms = ms(rng);
    s.teardown_ms = ms(rng);
    if (unit(rng) < crash_chance) {
      const std::array<JobState, 4> states{JobState::setting_up, JobState::preparing,
                                           JobState::running, JobState::done};
      s.crash_in = states[std::uniform_int_distribution<size_t>(0, 3)(rng)];
    }
  }
  Trace trace;
  std::vector<JobState> states(plan.jobs.size(), JobState::waiting_for_setup);
  for (int now = 0; now < 100000; ++now) {
    const bool probes_over = now >= probes_end_ms;
    // Children: phases end.
    for (size_t j = 0; j < sims.size(); ++j) {
      Sim& s = sims[j];
      if (s.next_event_at != now) {
        continue;
      }
      s.next_event_at = -1;
      if (s.crash_in && *s.crash_in == s.state) {
        s.state = JobState::ended;
        continue;
      }
      switch (s.state) {
      case JobState::setting_up:
        s.state = after_message(s.state, GateMessage::context_built);
        s.next_event_at = now + s.prepare_ms;
        break;
      case JobState::preparing:
        s.state = after_message(s.state, GateMessage::ready);
        break;
      case JobState::running:
        s.state = after_message(s.state, GateMessage::done);
        s.next_event_at = now + s.teardown_ms;
        break;
      case JobState::done:
        s.state = JobState::ended;
        break;
      default:
        break;
      }
    }
    for (size_t j = 0; j < sims.size(); ++j) {
      states[j] = sims[j].state;
    }
    // The scheduler's decisions, in plan order, as Scheduler::advance() takes them.
    for (size_t j = 0; j < sims.size(); ++j) {
      Sim& s = sims[j];
      if (s.state == JobState::waiting_for_setup &&
          may_step(plan.jobs[j], Step::setup, states, probes_over)) {
        s.state = JobState::setting_up;
        s.next_event_at = now + s.setup_ms;
      } else if (s.state == JobState::ready &&
                 may_step(plan.jobs[j], Step::go, states, probes_over)) {
        s.state = JobState::running;
        s.next_event_at = now + s.work_ms;
      }
      states[j] = s.state;
    }
    trace.snapshots.push_back(states);
    trace.probes_over_at_snapshot.push_back(probes_over ? 1 : 0);
    if (std::all_of(states.begin(), states.end(),
                    [](JobState st) { return st == JobState::ended; })) {
      trace.end_ms = now;
      return trace;
    }
  }
  trace.deadlock = true;
  return trace;
}

bool alive(JobState s) {
  return s != JobState::waiting_for_setup && s != JobState::ended;
}
bool working(JobState s) {
  return s == JobState::running || s == JobState::paused;
}

/// Every invariant the rules exist for; `what` names the case in failures.
void check_invariants(const Plan& plan, const Trace& trace, const std::string& what,
                      const MemoryModel& memory = {}) {
  ASSERT_FALSE(trace.deadlock) << what << ": the plan never finished (a deadlock)";
  // With every GPU overlapping, no context is built and nothing prepares on any GPU while copies
  // are timed; a serial GPU builds its later contexts after its own copies, beside another
  // GPU's (docs/architecture.md).
  const bool all_overlap = std::all_of(plan.gpus.begin(), plan.gpus.end(),
                                       [](const auto& g) { return g.mode != GpuMode::serial; });
  for (size_t t = 0; t < trace.snapshots.size(); ++t) {
    const std::vector<JobState>& st = trace.snapshots[t];
    // Memory: what the plan counts for every job alive on a GPU stays within its budget.
    std::vector<uint64_t> held(plan.gpus.size(), 0);
    for (size_t j = 0; j < st.size(); ++j) {
      held[plan.jobs[j].gpu] += modelled_bytes(plan.jobs[j], static_cast<int>(st[j]), memory);
    }
    for (size_t g = 0; g < held.size(); ++g) {
      if (plan.gpus[g].mode != GpuMode::overlap) {
        std::string alive_jobs;
        for (size_t j = 0; j < st.size(); ++j) {
          if (plan.jobs[j].gpu == g &&
              modelled_bytes(plan.jobs[j], static_cast<int>(st[j]), memory) != 0) {
            alive_jobs += fmt::format(" {}:{}", check_id(plan.jobs[j].work), to_string(st[j]));
          }
        }
        EXPECT_LE(held[g], plan.gpus[g].budget_bytes)
            << what << " t=" << t << ": GPU " << g << " over its budget ("
            << to_string(plan.gpus[g].mode) << "):" << alive_jobs;
      }
    }
    for (size_t j = 0; j < st.size(); ++j) {
      const PlannedJob& job = plan.jobs[j];
      const GpuMode mode = plan.gpus[job.gpu].mode;
      // Copies are timed alone: no other gated work anywhere, no context being built anywhere,
      // nothing else alive on their GPU but a job parked at its gate.
      if (job.work == Work::bandwidth && working(st[j])) {
        for (size_t o = 0; o < st.size(); ++o) {
          if (o == j) {
            continue;
          }
          EXPECT_FALSE(working(st[o]))
              << what << " t=" << t << ": job " << o << " works while job " << j << " times copies";
          if (all_overlap || plan.jobs[o].gpu == job.gpu) {
            EXPECT_NE(st[o], JobState::setting_up)
                << what << " t=" << t << ": a context is built while job " << j << " copies";
            EXPECT_NE(st[o], JobState::preparing)
                << what << " t=" << t << ": job " << o << " prepares while job " << j << " copies";
          }
          if (plan.jobs[o].gpu == job.gpu) {
            EXPECT_TRUE(st[o] == JobState::ended || st[o] == JobState::ready ||
                        st[o] == JobState::waiting_for_setup)
                << what << " t=" << t << ": job " << o << " is " << to_string(st[o])
                << " on the GPU whose copies are timed";
          }
        }
      }
      // cuDNN's timed work: after the probes, with every copy over.
      if (job.work == Work::cudnn && working(st[j])) {
        EXPECT_TRUE(trace.probes_over_at_snapshot[t] != 0) << what << ": cuDNN timed early";
        for (size_t o = 0; o < st.size(); ++o) {
          if (plan.jobs[o].work == Work::bandwidth) {
            EXPECT_TRUE(st[o] == JobState::ended || st[o] == JobState::waiting_for_setup)
                << what << " t=" << t << ": cuDNN times beside copies";
          }
        }
      }
      // Timed work on one GPU, one job at a time.
      if (working(st[j])) {
        for (size_t o = 0; o < st.size(); ++o) {
          if (o != j && plan.jobs[o].gpu == job.gpu) {
            EXPECT_FALSE(working(st[o])) << what << ": two jobs work on one GPU";
          }
        }
      }
      // Memory: a serial GPU holds one child at a time; an overlapping one builds one context
      // at a time.
      for (size_t o = j + 1; o < st.size(); ++o) {
        if (plan.jobs[o].gpu != job.gpu) {
          continue;
        }
        if (mode == GpuMode::serial && alive(st[j]) && alive(st[o])) {
          // One child at a time, but for a context built beside the previous one's teardown.
          EXPECT_TRUE(st[j] == JobState::done || st[o] == JobState::done)
              << what << " t=" << t << ": two children at work on a serial GPU";
        }
        EXPECT_FALSE(st[j] == JobState::setting_up && st[o] == JobState::setting_up)
            << what << ": two contexts built at once on one GPU";
      }
    }
  }
}

std::vector<GpuFacts> gpus_with_free(std::vector<uint64_t> free) {
  std::vector<GpuFacts> facts;
  for (const uint64_t f : free) {
    facts.push_back({f, 80 * k_gib});
  }
  return facts;
}

TEST(EnginePlan, InvariantsHoldOverRandomRuns) {
  std::mt19937 rng(20261123);
  const std::vector<std::vector<uint64_t>> machines{
      {80 * k_gib},                                     // one idle GPU: beside under the 1 GiB cap
      {8 * k_gib, 80 * k_gib},                          // serial and beside
      {80 * k_gib, 80 * k_gib},                         // two
      {80 * k_gib, 2 * k_gib, 80 * k_gib},              // one nearly full: skipped
      {80 * k_gib, 80 * k_gib, 80 * k_gib, 80 * k_gib}, // four
  };
  MemoryModel small; // a model whose contexts are small: the overlapping plan fits
  small.context_bytes = 64 * k_mib;
  small.context_build_extra_bytes = 16 * k_mib;
  for (const auto& free : machines) {
    for (const MemoryModel& memory : {MemoryModel{}, small}) {
      const Plan plan = make_plan(all_works(), gpus_with_free(free), memory);
      for (int run = 0; run < 60; ++run) {
        const int probes_end = std::uniform_int_distribution<int>(0, 400)(rng);
        const Trace trace = simulate(plan, rng, probes_end, run % 3 == 0 ? 0.3 : 0.0);
        check_invariants(
            plan, trace,
            fmt::format("{} GPUs, {} plan, run {}", free.size(), to_string(plan.gpus[0].mode), run),
            memory);
        if (::testing::Test::HasFailure()) {
          return;
        }
      }
    }
  }
}

TEST(EnginePlan, SubsetsOfTheChecksAlsoKeepTheInvariants) {
  std::mt19937 rng(7);
  const std::vector<std::vector<Work>> subsets{{Work::bandwidth},
                                               {Work::cudnn},
                                               {Work::compute, Work::cudnn},
                                               {Work::streams, Work::bandwidth, Work::cudnn}};
  for (const auto& works : subsets) {
    const Plan plan = make_plan(works, gpus_with_free({80 * k_gib, 80 * k_gib}));
    EXPECT_EQ(plan.jobs.size(), 2 * works.size());
    for (int run = 0; run < 30; ++run) {
      check_invariants(plan, simulate(plan, rng, run * 10, 0.2), "subset");
    }
  }
}

TEST(EnginePlan, MemoryDecidesTheMode) {
  // Idle H200: 1 GiB cap; four contexts of ~290 MiB do not fit at once, cuDNN's beside one
  // other does.
  Plan plan = make_plan(all_works(), gpus_with_free({140 * k_gib}));
  EXPECT_EQ(plan.gpus[0].mode, GpuMode::beside);
  // Without cuDNN: one at a time.
  plan = make_plan({Work::compute, Work::streams, Work::bandwidth}, gpus_with_free({140 * k_gib}));
  EXPECT_EQ(plan.gpus[0].mode, GpuMode::serial);
  // 8 GiB free: 819 MiB, one at a time.
  plan = make_plan(all_works(), gpus_with_free({8 * k_gib}));
  EXPECT_EQ(plan.gpus[0].mode, GpuMode::serial);
  plan = make_plan(all_works(), gpus_with_free({140 * k_gib}));
  EXPECT_EQ(plan.gpus[0].budget_bytes, k_gib);
  EXPECT_LE(plan.gpus[0].allowance_bytes + MemoryModel{}.context_bytes +
                MemoryModel{}.context_build_extra_bytes,
            k_gib);
  EXPECT_EQ(plan.jobs.size(), 4U);
  // 98% held by a tenant: 1.6 GiB free, 10% of it is 164 MiB: not even one context.
  plan = make_plan(all_works(), gpus_with_free({80 * k_gib / 50}));
  EXPECT_EQ(plan.gpus[0].mode, GpuMode::skip);
  EXPECT_TRUE(plan.jobs.empty());
  EXPECT_NE(plan.gpus[0].reason.find("MiB"), std::string::npos) << plan.gpus[0].reason;
  // Free memory unknown (no NVML): the cap alone.
  plan = make_plan(all_works(), {GpuFacts{}});
  EXPECT_EQ(plan.gpus[0].budget_bytes, k_gib);
  // Small contexts: everything fits at once.
  MemoryModel small;
  small.context_bytes = 32 * k_mib;
  small.context_build_extra_bytes = 0;
  plan = make_plan(all_works(), gpus_with_free({140 * k_gib}), small);
  EXPECT_EQ(plan.gpus[0].mode, GpuMode::overlap);
}

TEST(EnginePlan, BudgetIsTheSmallerOfTheCapAndATenth) {
  EXPECT_EQ(gpu_budget_bytes(80 * k_gib), k_gib);
  EXPECT_EQ(gpu_budget_bytes(5 * k_gib), k_gib / 2);
  EXPECT_EQ(gpu_budget_bytes(0), 0U);
}

TEST(EnginePlan, EveryConditionNamesItsRule) {
  const Plan plan = make_plan(all_works(), gpus_with_free({80 * k_gib, 80 * k_gib}));
  for (const PlannedJob& job : plan.jobs) {
    for (const Condition& c : job.conditions) {
      EXPECT_FALSE(c.rule.empty());
      if (c.await != Await::probes_over) {
        ASSERT_TRUE(c.job.has_value());
        EXPECT_NE(*c.job, static_cast<size_t>(&job - plan.jobs.data()));
      }
    }
  }
}

TEST(EnginePlan, WorkSpellings) {
  EXPECT_EQ(child_mode(Work::cudnn), "gpu-cudnn");
  EXPECT_EQ(check_id(Work::bandwidth), "gpu.bandwidth");
  EXPECT_EQ(work_for_check("gpu.streams"), Work::streams);
  EXPECT_FALSE(work_for_check("gpu.ecc").has_value());
  EXPECT_EQ(all_works().size(), 4U);
}

} // namespace
} // namespace gpucheck::engine
