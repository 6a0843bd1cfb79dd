// The plan's invariants, checked over simulated runs (random durations, random crashes, random
// end of the probes) driven by the scheduler's own decision functions (may_step, after_message),
// rather than by pinning the plan's condition lists.

#include "engine/plan.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

#include "engine/scheduler.hpp"
#include "gpu/gpu_children.hpp"
#include "unit/engine/added_works.hpp"

namespace gpucheck::engine {
namespace {

constexpr uint64_t k_mib = 1ULL << 20;

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

/// The first job of the child that carries `job` (same_child).
size_t head_of(const Plan& plan, size_t job) {
  while (plan.jobs[job].after_in_child) {
    job = *plan.jobs[job].after_in_child;
  }
  return job;
}

Trace simulate_plan(const Plan& plan, std::mt19937& rng, int probes_end_ms, double crash_chance) {
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
        // The process dies: every job it carries ends with it.
        for (size_t o = 0; o < sims.size(); ++o) {
          if (head_of(plan, o) == head_of(plan, j)) {
            sims[o].state = JobState::ended;
            sims[o].next_event_at = -1;
          }
        }
        continue;
      }
      switch (s.state) {
      case JobState::setting_up:
        s.state = after_message(s.state, protocol::GateMessage::context_built);
        s.next_event_at = now + s.prepare_ms;
        break;
      case JobState::preparing:
        s.state = after_message(s.state, protocol::GateMessage::ready);
        break;
      case JobState::running:
        s.state = after_message(s.state, protocol::GateMessage::done);
        if (s.state == JobState::done) {
          s.state = state_after_done(plan.jobs[j]);
        }
        if (s.state == JobState::done) {
          s.next_event_at = now + s.teardown_ms;
        }
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
        s.state = state_after_setup(plan.jobs[j]);
        s.next_event_at = now + (s.state == JobState::setting_up ? s.setup_ms : s.prepare_ms);
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
  // No context is built and nothing prepares on any GPU while copies are timed
  // (docs/engine.md); cuDNN's lanes prepare before any copy by the children's own doing.
  for (size_t t = 0; t < trace.snapshots.size(); ++t) {
    const std::vector<JobState>& st = trace.snapshots[t];
    // Memory: what the plan counts for every job alive on a GPU stays within its budget.
    // The per-GPU jobs within the budget; with the spanning child, within the courtesy.
    std::vector<uint64_t> held(plan.gpus.size(), 0);
    std::vector<uint64_t> held_per_gpu(plan.gpus.size(), 0);
    for (size_t j = 0; j < st.size(); ++j) {
      // A spanning job holds its context and buffers on every GPU of its span.
      const PlannedJob& job = plan.jobs[j];
      for (size_t g = 0; g < plan.gpus.size(); ++g) {
        if (uses_gpu(job, g)) {
          held[g] += modelled_bytes(job, static_cast<int>(st[j]), memory);
          if (job.span.empty()) {
            held_per_gpu[g] += modelled_bytes(job, static_cast<int>(st[j]), memory);
          }
        }
      }
    }
    for (size_t g = 0; g < held.size(); ++g) {
      EXPECT_LE(held[g], plan.gpus[g].courtesy_bytes)
          << what << " t=" << t << ": GPU " << g << " over gpucheck's courtesy";
      EXPECT_LE(held_per_gpu[g], plan.gpus[g].budget_bytes)
          << what << " t=" << t << ": GPU " << g << "'s own jobs over its budget";
      EXPECT_TRUE(plan.span_beside || held[g] == held_per_gpu[g] || held_per_gpu[g] == 0)
          << what << " t=" << t << ": the spanning job beside others without span_beside";
      {
        std::string alive_jobs;
        for (size_t j = 0; j < st.size(); ++j) {
          if (plan.jobs[j].gpu == g &&
              modelled_bytes(plan.jobs[j], static_cast<int>(st[j]), memory) != 0) {
            alive_jobs += fmt::format(" {}:{}", check_id(plan.jobs[j].work), to_string(st[j]));
          }
        }
        EXPECT_LE(held_per_gpu[g], plan.gpus[g].budget_bytes)
            << what << " t=" << t << ": GPU " << g << " over its budget ("
            << to_string(plan.gpus[g].mode) << "):" << alive_jobs;
      }
    }
    for (size_t j = 0; j < st.size(); ++j) {
      const PlannedJob& job = plan.jobs[j];
      // Copies are timed alone: no other gated work anywhere, no context being built anywhere,
      // nothing else alive on their GPU but a job parked at its gate.
      const bool copies =
          job.work == bandwidth() || job.work == copies_together() || job.work == local_copies();
      if (copies && working(st[j])) {
        for (size_t o = 0; o < st.size(); ++o) {
          if (o == j) {
            continue;
          }
          if (job.work == plan.jobs[o].work &&
              (job.work == copies_together() || job.work == local_copies())) {
            continue; // the copies together, and every GPU's local copies, run together
          }
          if (!plan.jobs[o].span.empty() && plan.span_beside && !working(st[o])) {
            // The spanning child's contexts and NCCL's initialisation beside the host copies;
            // the device-local copies only once it is prepared (its first job ready, the one
            // after it in its child still waiting for it) or gone (a crash).
            EXPECT_TRUE(job.work != local_copies() || st[o] == JobState::ready ||
                        st[o] == JobState::ended ||
                        (st[o] == JobState::waiting_for_setup && plan.jobs[o].after_in_child))
                << what << " t=" << t << ": local copies beside the spanning child's "
                << to_string(st[o]);
            continue;
          }
          EXPECT_FALSE(working(st[o]))
              << what << " t=" << t << ": job " << o << " works while job " << j << " times copies";
          EXPECT_NE(st[o], JobState::setting_up)
              << what << " t=" << t << ": a context is built while job " << j << " copies";
          // cuDNN's job in a shared child prepared on its lane before any copies, and the local
          // copies take their buffers after their gate (nothing to prepare: prepare_mib 0):
          // their preparing state is only their way to their gate.
          const bool on_lane = plan.jobs[o].work == cudnn() && plan.jobs[o].after_in_child;
          const bool nothing_to_prepare = work_row(plan.jobs[o].work).prepare_mib == 0;
          EXPECT_TRUE(st[o] != JobState::preparing || on_lane || nothing_to_prepare)
              << what << " t=" << t << ": job " << o << " prepares while job " << j << " copies";
          if (plan.jobs[o].gpu == job.gpu) {
            EXPECT_TRUE(st[o] == JobState::ended || st[o] == JobState::ready ||
                        st[o] == JobState::waiting_for_setup)
                << what << " t=" << t << ": job " << o << " is " << to_string(st[o])
                << " on the GPU whose copies are timed";
          }
        }
      }
      // Peer-to-peer copies (a spanning job): nothing else of gpucheck's alive on any of its
      // GPUs while it builds its contexts, prepares or copies (no GPU's own copies disturbed);
      // beside the per-GPU work (span_beside) while it copies, and its contexts are built when
      // no other context is built on its GPUs.
      if (!job.span.empty() && plan.span_beside &&
          (st[j] == JobState::setting_up || st[j] == JobState::preparing)) {
        for (size_t o = 0; o < st.size(); ++o) {
          const Work other = plan.jobs[o].work;
          for (const size_t g : job.span) {
            if (o == j || !uses_gpu(plan.jobs[o], g)) {
              continue;
            }
            EXPECT_NE(st[o], JobState::setting_up)
                << what << " t=" << t << ": job " << o << " builds a context on GPU " << g
                << " beside the spanning child's";
            // Only host copies are timed beside its contexts and NCCL's initialisation.
            EXPECT_FALSE(working(st[o]) && other != bandwidth() && other != copies_together())
                << what << " t=" << t << ": " << check_id(other) << " timed on GPU " << g
                << " while the spanning child prepares";
          }
        }
      }
      if (!job.span.empty() && (plan.span_beside ? working(st[j]) : alive(st[j]))) {
        for (size_t o = 0; o < st.size(); ++o) {
          if (o == j || head_of(plan, o) == head_of(plan, j)) {
            continue;
          }
          for (const size_t g : job.span) {
            EXPECT_FALSE(uses_gpu(plan.jobs[o], g) && alive(st[o]))
                << what << " t=" << t << ": job " << o << " is " << to_string(st[o]) << " on GPU "
                << g << " beside the peer copies";
          }
        }
      }
      // cuDNN's timed work and the device-local copies: after the probes.
      if ((job.work == cudnn() || job.work == local_copies()) && working(st[j])) {
        EXPECT_TRUE(trace.probes_over_at_snapshot[t] != 0)
            << what << ": " << work_name(job.work) << " timed early";
      }
      // cuDNN's timed work: with every copy over.
      if (job.work == cudnn() && working(st[j])) {
        for (size_t o = 0; o < st.size(); ++o) {
          if (plan.jobs[o].work == bandwidth() || plan.jobs[o].work == copies_together() ||
              plan.jobs[o].work == local_copies()) {
            EXPECT_TRUE(st[o] == JobState::ended || st[o] == JobState::waiting_for_setup)
                << what << " t=" << t << ": cuDNN times beside copies";
          }
        }
      }
      // The copies together: every GPU's at once, none before every GPU's own copies are over;
      // the local copies likewise, after every host copy.
      if ((job.work == copies_together() || job.work == local_copies()) && working(st[j])) {
        for (size_t o = 0; o < st.size(); ++o) {
          if (plan.jobs[o].work == bandwidth() ||
              (job.work == local_copies() && plan.jobs[o].work == copies_together())) {
            EXPECT_NE(st[o], JobState::ready)
                << what << " t=" << t << ": " << work_name(job.work) << " before every host copy";
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
      // A job that follows another in its child builds no context.
      if (job.after_in_child) {
        EXPECT_NE(st[j], JobState::setting_up) << what << ": a second context in one child";
      }
      // Memory: one context built at a time on a GPU. The jobs of one child live one after
      // another, in order.
      for (size_t o = j + 1; o < st.size(); ++o) {
        if (plan.jobs[o].gpu != job.gpu) {
          continue;
        }
        const bool same_child = head_of(plan, o) == head_of(plan, j);
        if (alive(st[j]) && alive(st[o])) {
          EXPECT_FALSE(same_child) << what << " t=" << t << ": two works of one child at once";
        }
        if (same_child && plan.jobs[o].after_in_child == j) {
          EXPECT_FALSE(alive(st[o]) && st[j] != JobState::ended)
              << what << " t=" << t << ": a work began before the one before it in its child";
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
      {80 * k_gib},                                     // one idle GPU: the 1 GiB cap
      {8 * k_gib, 80 * k_gib},                          // a smaller budget beside the cap
      {80 * k_gib, 80 * k_gib},                         // two
      {80 * k_gib, 2 * k_gib, 80 * k_gib},              // one nearly full: skipped
      {80 * k_gib, 80 * k_gib, 80 * k_gib, 80 * k_gib}, // four
  };
  MemoryModel small; // a model whose contexts are small: the overlapping plan fits
  small.context_bytes = 64 * k_mib;
  small.context_build_extra_bytes = 16 * k_mib;
  for (const bool tenant : {false, true}) {
    for (const auto& free : machines) {
      for (const MemoryModel& memory : {MemoryModel{}, small}) {
        std::vector<Work> works = all_works();
        if (free.size() > 1) {
          works.push_back(copies_together()); // as the engine does with several GPUs
        }
        // A tenant on the last GPU: the spanning child comes after all (not span_beside).
        std::vector<GpuFacts> facts = gpus_with_free(free);
        if (tenant) {
          facts.back().other_processes = {"4242 (python3)"};
        }
        const Plan plan = make_plan(works, facts, memory);
        for (int run = 0; run < 40; ++run) {
          const int probes_end = std::uniform_int_distribution<int>(0, 400)(rng);
          const Trace trace = simulate_plan(plan, rng, probes_end, run % 3 == 0 ? 0.3 : 0.0);
          check_invariants(plan, trace,
                           fmt::format("{} GPUs, {} plan, tenant {}, run {}", free.size(),
                                       to_string(plan.gpus[0].mode), tenant, run),
                           memory);
          if (::testing::Test::HasFailure()) {
            return;
          }
        }
      }
    }
  }
}

TEST(EnginePlan, SubsetsOfTheChecksAlsoKeepTheInvariants) {
  std::mt19937 rng(7);
  const std::vector<std::vector<Work>> subsets{
      {bandwidth()}, {cudnn()}, {compute(), cudnn()}, {streams(), bandwidth(), cudnn()}};
  for (const auto& works : subsets) {
    const Plan plan = make_plan(works, gpus_with_free({80 * k_gib, 80 * k_gib}));
    EXPECT_EQ(plan.jobs.size(), 2 * works.size());
    for (int run = 0; run < 30; ++run) {
      check_invariants(plan, simulate_plan(plan, rng, run * 10, 0.2), "subset");
    }
  }
}

TEST(EnginePlan, MemoryDecidesTheMode) {
  // Idle H200: the 1 GiB cap holds the child's context, cuDNN's lane and the works' buffers.
  Plan plan = make_plan(all_works(), gpus_with_free({140 * k_gib}));
  EXPECT_EQ(plan.gpus[0].mode, GpuMode::run);
  EXPECT_EQ(plan.gpus[0].budget_bytes, k_gib);
  const MemoryModel model;
  EXPECT_EQ(plan.gpus[0].allowance_bytes,
            k_gib - model.context_bytes - model.prepare_bytes(cudnn()));
  EXPECT_EQ(plan.jobs.size(), 3U + added());
  for (const PlannedJob& job : plan.jobs) {
    // cuDNN's timed work once the works before it have freed theirs: all but the context.
    EXPECT_EQ(job.allowance_bytes,
              job.work == cudnn() ? k_gib - model.context_bytes : plan.gpus[0].allowance_bytes);
    EXPECT_EQ(job.lane_bytes, job.work == cudnn() ? 0 : model.prepare_bytes(cudnn()));
    EXPECT_LE(modelled_bytes(job, static_cast<int>(JobState::running), model), k_gib);
  }
  // Without cuDNN: no lane.
  plan = make_plan({compute(), streams(), bandwidth()}, gpus_with_free({140 * k_gib}));
  EXPECT_EQ(plan.gpus[0].mode, GpuMode::run);
  EXPECT_EQ(plan.gpus[0].allowance_bytes, k_gib - model.context_bytes);
  // 8 GiB free: 819 MiB still holds the one child.
  plan = make_plan(all_works(), gpus_with_free({8 * k_gib}));
  EXPECT_EQ(plan.gpus[0].mode, GpuMode::run);
  EXPECT_EQ(plan.gpus[0].budget_bytes, 8 * k_gib / 10);
  // 98% held by a tenant: 1.6 GiB free, 10% of it is 164 MiB: not even one context.
  plan = make_plan(all_works(), gpus_with_free({80 * k_gib / 50}));
  EXPECT_EQ(plan.gpus[0].mode, GpuMode::skip);
  EXPECT_TRUE(plan.jobs.empty());
  EXPECT_NE(plan.gpus[0].reason.find("MiB"), std::string::npos) << plan.gpus[0].reason;
  // Free memory unknown (no NVML): the cap alone.
  plan = make_plan(all_works(), {GpuFacts{}});
  EXPECT_EQ(plan.gpus[0].budget_bytes, k_gib);
}

TEST(EnginePlan, CopiesTogetherGoInOneStepAfterEveryGpusOwnCopies) {
  std::vector<Work> works = all_works();
  works.push_back(copies_together());
  const Plan plan = make_plan(works, gpus_with_free({140 * k_gib, 140 * k_gib, 140 * k_gib}));
  std::mt19937 rng(11);
  for (int run = 0; run < 40; ++run) {
    const Trace trace = simulate_plan(plan, rng, run * 7, 0.0);
    ASSERT_FALSE(trace.deadlock);
    // Once any GPU's part goes, every GPU's part is going (no crash here): they start together.
    bool seen = false;
    for (const std::vector<JobState>& st : trace.snapshots) {
      size_t working_parts = 0;
      size_t parts = 0;
      for (size_t j = 0; j < st.size(); ++j) {
        if (plan.jobs[j].work == copies_together()) {
          ++parts;
          working_parts += working(st[j]) || st[j] == JobState::ended ? 1 : 0;
        }
      }
      if (working_parts > 0 && !seen) {
        EXPECT_EQ(working_parts, parts) << "run " << run << ": the parts did not start together";
        seen = true;
      }
    }
    EXPECT_TRUE(seen);
    check_invariants(plan, trace, fmt::format("together, run {}", run));
  }
}

TEST(EnginePlan, EveryWorkOfAGpuSharesOneChildInOrder) {
  const Plan plan = make_plan(all_works(), gpus_with_free({140 * k_gib, 140 * k_gib}));
  for (size_t g = 0; g < 2; ++g) {
    std::map<Work, size_t> of;
    for (size_t j = 0; j < plan.jobs.size(); ++j) {
      if (plan.jobs[j].gpu == g && plan.jobs[j].span.empty()) {
        of[plan.jobs[j].work] = j;
      }
    }
    ASSERT_EQ(of.size(), 3U + added());
    EXPECT_FALSE(plan.jobs[of[compute()]].after_in_child);
    // The added works (compute, then streams, ...) follow one another in the table's order, and
    // the copies follow them; the lane (cuDNN's) comes last.
    Work before = compute();
    for (const WorkRow& row : work_table()) {
      if (row.work != compute() && row.child == WorkChild::shared && row.lane.empty() &&
          row.copies == Copies::none) {
        EXPECT_EQ(plan.jobs[of[row.work]].after_in_child, of[before]) << row.name;
        before = row.work;
      }
    }
    EXPECT_EQ(work_name(plan.jobs[*plan.jobs[of[bandwidth()]].after_in_child].work), "memory_pool");
    EXPECT_EQ(plan.jobs[of[bandwidth()]].after_in_child, of[before]);
    EXPECT_EQ(plan.jobs[of[local_copies()]].after_in_child, of[bandwidth()]);
    EXPECT_EQ(plan.jobs[of[cudnn()]].after_in_child, of[local_copies()]);
    EXPECT_TRUE(plan.jobs[of[compute()]].followed_in_child);
    EXPECT_TRUE(plan.jobs[of[bandwidth()]].followed_in_child);
    EXPECT_FALSE(plan.jobs[of[cudnn()]].followed_in_child);
    // cuDNN's timed work once every GPU's copies are over.
    for (size_t j = 0; j < plan.jobs.size(); ++j) {
      if (plan.jobs[j].work == bandwidth()) {
        EXPECT_TRUE(std::any_of(
            plan.jobs[of[cudnn()]].conditions.begin(), plan.jobs[of[cudnn()]].conditions.end(),
            [j](const Condition& c) {
              return c.rule == "cudnn_after_copies" && c.step == Step::go && c.job == j;
            }))
            << "GPU " << g << " job " << j;
      }
    }
  }
  EXPECT_EQ(child_groups({cudnn(), bandwidth(), compute()}),
            (std::vector<std::vector<Work>>{{compute(), bandwidth(), cudnn()}}));
  EXPECT_EQ(child_groups({cudnn()}), (std::vector<std::vector<Work>>{{cudnn()}}));
  EXPECT_EQ(child_groups({cudnn(), memtest()}),
            (std::vector<std::vector<Work>>{{cudnn()}, {memtest()}}));
  EXPECT_EQ(work_named("streams"), streams());
  EXPECT_EQ(work_name(bandwidth()), "bandwidth");
  EXPECT_FALSE(work_named("gpu-streams").has_value());
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
  EXPECT_EQ(child_mode(cudnn()), "gpu-cudnn");
  EXPECT_EQ(check_id(bandwidth()), "gpu.bandwidth");
  // gpu.bandwidth's further parts: judged by its check, run by its first work's mode.
  EXPECT_EQ(work_for_check("gpu.bandwidth"), bandwidth());
  EXPECT_EQ(check_id(copies_together()), "gpu.bandwidth");
  EXPECT_EQ(check_id(local_copies()), "gpu.bandwidth");
  EXPECT_EQ(child_mode(copies_together()), "");
  EXPECT_EQ(child_mode(bandwidth()), "gpu-bandwidth");
  EXPECT_EQ(copies_of(bandwidth()), Copies::host_alone);
  EXPECT_EQ(copies_of(copies_together()), Copies::host_together);
  EXPECT_EQ(copies_of(local_copies()), Copies::device_local);
  EXPECT_EQ(copies_of(compute()), Copies::none);
  EXPECT_EQ(work_for_check("gpu.streams"), streams());
  EXPECT_FALSE(work_for_check("gpu.ecc").has_value());
  EXPECT_EQ(all_works().size(), 5U + added());
  EXPECT_EQ(child_mode(engine::peers()), ""); // both run in the child over every GPU
  EXPECT_EQ(spanning_child_mode(), "gpu-peers");
  EXPECT_TRUE(work_row(engine::nccl()).beyond_budget);
  EXPECT_FALSE(work_row(engine::peers()).beyond_budget);
  EXPECT_EQ(work_for_check("gpu.nccl"), engine::nccl());
  EXPECT_TRUE(spans_gpus(engine::nccl()));
  EXPECT_EQ(spanning_works(all_works()), (std::vector<Work>{engine::peers(), engine::nccl()}));
  EXPECT_EQ(work_for_check("gpu.p2p"), engine::peers());
  EXPECT_TRUE(spans_gpus(engine::peers()));
  EXPECT_FALSE(spans_gpus(bandwidth()));
}

TEST(EnginePlan, EveryWorkHasOneRowAndTheChildrenKnowItsName) {
  std::vector<Work> seen;
  for (const WorkRow& row : work_table()) { // the works the checks of their own folders added
    EXPECT_EQ(std::count(seen.begin(), seen.end(), row.work), 0) << row.name;
    seen.push_back(row.work);
    EXPECT_EQ(work_named(row.name), row.work) << row.name; // names are unique
    EXPECT_GE(row.wanted_mib, row.min_mib) << row.name;
  }
  for (const Work w : {compute(), streams(), bandwidth(), copies_together(), local_copies(),
                       cudnn(), engine::peers(), engine::nccl(), memtest(), burn()}) {
    EXPECT_EQ(std::count(seen.begin(), seen.end(), w), 1) << work_name(w); // every one, once
  }
  // Every work of a shared or long-level child has one runner in the GPU children
  // (gpu/gpu_children.hpp), found by its mode where it has one; none spans GPUs. cuDNN's is the
  // shared child's lane.
  for (const WorkRow& row : work_table()) {
    const auto runners = gpu::work_runners();
    const auto count =
        std::count_if(runners.begin(), runners.end(),
                      [&row](const gpu::WorkRunner& r) { return r.work == row.work; });
    const bool in_device_child =
        row.child == WorkChild::shared || row.child == WorkChild::long_level;
    EXPECT_EQ(count, in_device_child ? 1 : 0) << row.name;
    // A spanning work has one runner in the child over every GPU instead.
    const auto spans = gpu::span_runners();
    EXPECT_EQ(std::count_if(spans.begin(), spans.end(),
                            [&row](const gpu::SpanRunner& r) { return r.work == row.work; }),
              in_device_child ? 0 : 1)
        << row.name;
    const auto runner =
        std::find_if(runners.begin(), runners.end(),
                     [&row](const gpu::WorkRunner& r) { return r.work == row.work; });
    if (count == 1) {
      EXPECT_EQ(runner->lane != nullptr, row.work == cudnn()) << row.name;
      EXPECT_EQ(runner->run == nullptr, runner->lane != nullptr) << row.name;
    }
    if (count == 1 && runner->lane == nullptr && !row.mode.empty()) {
      ASSERT_NE(gpu::runner_of_mode(row.mode), nullptr) << row.name;
      EXPECT_EQ(gpu::runner_of_mode(row.mode)->work, row.work) << row.name;
    }
  }
  // cuDNN's own mode takes "full" after the ordinal: its runner's own child.
  ASSERT_NE(gpu::runner_of_mode("gpu-cudnn"), nullptr);
  EXPECT_NE(gpu::runner_of_mode("gpu-cudnn")->own_child, nullptr);
  EXPECT_EQ(work_row(cudnn()).child, WorkChild::shared);
}

TEST(EnginePlan, NcclRunsOnlyWhereNoOtherProcessUsesAGpuOfItsSpan) {
  std::vector<GpuFacts> gpus = gpus_with_free({140 * k_gib, 140 * k_gib});
  EXPECT_EQ(make_plan(all_works(), gpus).nccl_skip_reason, "");
  gpus[1].other_processes = {"4242 (python3)"};
  const Plan busy = make_plan(all_works(), gpus);
  // The job stays planned (its child writes its line as not run); the peer copies still run.
  ASSERT_EQ(busy.jobs.size(), 8U + 2 * added());
  EXPECT_EQ(busy.jobs[7 + 2 * added()].work, engine::nccl());
  EXPECT_EQ(busy.nccl_skip_reason,
            "other processes use these GPUs (4242 (python3)): NCCL's own buffers take more than "
            "gpucheck's 1 GiB budget on each GPU (1.6 GiB on four H100s), which could take memory "
            "they need; --level long --force runs it anyway");
  // --level long --force runs it; without NCCL selected, or with one GPU, nothing to say.
  EXPECT_EQ(make_plan(all_works(), gpus, MemoryModel{}, true).nccl_skip_reason, "");
  EXPECT_EQ(make_plan({engine::peers()}, gpus).nccl_skip_reason, "");
  gpus.pop_back();
  gpus[0].other_processes = {"4242 (python3)"};
  EXPECT_EQ(make_plan(all_works(), gpus).nccl_skip_reason, "");
}

TEST(EnginePlan, PeerCopiesSpanEveryTestableGpuAfterEverythingElse) {
  // One GPU: no job over GPUs at all (the one-GPU run is unchanged).
  Plan plan = make_plan(all_works(), gpus_with_free({140 * k_gib}));
  EXPECT_EQ(plan.jobs.size(), 3U + added());
  for (const PlannedJob& job : plan.jobs) {
    EXPECT_FALSE(spans_gpus(job.work));
  }
  // Two GPUs with too little free memory for it to prepare beside the rest (20 GiB: 2 GiB is
  // 10%): one child over both (the peer copies, then NCCL in it), after every other job on them
  // has gone; its buffers may take each GPU's budget but its context.
  plan = make_plan(all_works(), gpus_with_free({20 * k_gib, 20 * k_gib}));
  EXPECT_FALSE(plan.span_beside);
  EXPECT_EQ(plan.gpus[0].courtesy_bytes, plan.gpus[0].budget_bytes);
  ASSERT_EQ(plan.jobs.size(), 8U + 2 * added());
  const PlannedJob& peers = plan.jobs[6 + 2 * added()];
  const PlannedJob& nccl = plan.jobs[7 + 2 * added()];
  EXPECT_EQ(nccl.work, engine::nccl());
  EXPECT_EQ(nccl.after_in_child, 6U + 2 * added());
  EXPECT_TRUE(peers.followed_in_child);
  EXPECT_EQ(nccl.span, peers.span);
  ASSERT_EQ(nccl.conditions.size(), 1U);
  EXPECT_EQ(nccl.conditions[0].rule, "same_child");
  EXPECT_EQ(peers.work, engine::peers());
  EXPECT_EQ(peers.span, (std::vector<size_t>{0, 1}));
  EXPECT_EQ(peers.gpu, 0U);
  EXPECT_EQ(peers.allowance_bytes, k_gib - MemoryModel{}.context_bytes);
  size_t awaited = 0;
  for (const Condition& c : peers.conditions) {
    EXPECT_EQ(c.rule, "peers_after_all");
    EXPECT_EQ(c.step, Step::setup);
    EXPECT_EQ(c.await, Await::exited);
    ++awaited;
  }
  EXPECT_EQ(awaited, 6U + 2 * added());
  // A GPU too busy to test is left out of the span; with one testable GPU left, no peer job.
  plan = make_plan(all_works(), gpus_with_free({140 * k_gib, 80 * k_gib / 50, 140 * k_gib}));
  EXPECT_EQ(plan.jobs.back().span, (std::vector<size_t>{0, 2}));
  EXPECT_EQ(plan.jobs.back().work, engine::nccl());
  plan = make_plan(all_works(), gpus_with_free({140 * k_gib, 80 * k_gib / 50}));
  for (const PlannedJob& job : plan.jobs) {
    EXPECT_FALSE(spans_gpus(job.work));
  }
  // Alone (--only gpu.p2p): the job has no condition and takes the budget but a context.
  plan = make_plan({engine::peers()}, gpus_with_free({140 * k_gib, 8 * k_gib}));
  ASSERT_EQ(plan.jobs.size(), 1U);
  EXPECT_TRUE(plan.jobs[0].conditions.empty());
  EXPECT_EQ(plan.jobs[0].allowance_bytes,
            gpu_budget_bytes(8 * k_gib) - MemoryModel{}.context_bytes);
  std::mt19937 rng(15);
  for (int run = 0; run < 30; ++run) {
    check_invariants(plan, simulate_plan(plan, rng, run * 5, 0.2), "peers alone");
  }
}

TEST(EnginePlan, OnIdleGpusWithRoomThePeersChildPreparesBesideThePerGpuWork) {
  // Two idle H200s: its contexts once each GPU's own are built, its copies after all has gone.
  std::vector<GpuFacts> gpus = gpus_with_free({140 * k_gib, 140 * k_gib});
  Plan plan = make_plan(all_works(), gpus);
  ASSERT_TRUE(plan.span_beside);
  EXPECT_EQ(plan.gpus[1].courtesy_bytes, 14 * k_gib);
  EXPECT_EQ(plan.gpus[1].budget_bytes, k_gib);
  ASSERT_EQ(plan.jobs.size(), 8U + 2 * added());
  const PlannedJob& peers = plan.jobs[6 + 2 * added()];
  ASSERT_EQ(peers.work, engine::peers());
  // Its contexts as its child starts (counted from then on), NCCL's in the same child.
  EXPECT_TRUE(peers.contexts_at_start);
  EXPECT_FALSE(plan.jobs[7 + 2 * added()].contexts_at_start);
  EXPECT_EQ(modelled_bytes(peers, 0, MemoryModel{}), MemoryModel{}.context_bytes);
  size_t before = 0;
  size_t gone = 0;
  for (const Condition& c : peers.conditions) {
    const Work other = plan.jobs[*c.job].work;
    if (c.step == Step::setup) {
      // It prepares once the kernels' timed work is over (compute, streams, the memory pool:
      // the copies then take their pinned buffers), beside the host copies.
      EXPECT_EQ(c.rule, "span_beside_on_idle_gpus");
      EXPECT_NE(other, cudnn());
      EXPECT_EQ(c.await, other == bandwidth() ? Await::context_built : Await::exited)
          << check_id(other);
      ++before;
    } else {
      // Its timed work once the others have handed in their results, not once the kernel has
      // freed their processes.
      EXPECT_EQ(c.rule, "peers_after_all");
      EXPECT_EQ(c.await, Await::concluded);
      ++gone;
    }
  }
  EXPECT_EQ(before, 2U + 2 * added());
  EXPECT_EQ(gone, 6U + 2 * added());
  // The device-local copies and cuDNN's timed work once the spanning child is prepared.
  for (const PlannedJob& job : plan.jobs) {
    if (job.work == cudnn() || job.work == local_copies()) {
      const size_t peers_job = 6U + 2 * added();
      EXPECT_TRUE(std::any_of(job.conditions.begin(), job.conditions.end(),
                              [peers_job](const Condition& c) {
                                return c.rule == "span_beside_on_idle_gpus" && c.step == Step::go &&
                                       c.await == Await::ready && c.job == peers_job;
                              }))
          << work_name(job.work);
    }
  }
  std::mt19937 rng(33);
  for (int run = 0; run < 40; ++run) {
    check_invariants(plan, simulate_plan(plan, rng, run * 9, run % 2 == 0 ? 0.2 : 0.0), "beside");
  }
  // A tenant on one GPU: the 1 GiB budget holds there, so the child comes after all.
  gpus[1].other_processes = {"4242 (python3)"};
  plan = make_plan(all_works(), gpus);
  EXPECT_FALSE(plan.span_beside);
  EXPECT_FALSE(plan.jobs[plan.jobs.size() - 2].contexts_at_start);
  for (const Condition& c : plan.jobs.back().conditions) {
    EXPECT_EQ(c.rule, "same_child");
  }
  for (const Condition& c : plan.jobs[plan.jobs.size() - 2].conditions) {
    EXPECT_EQ(c.step, Step::setup);
    EXPECT_EQ(c.rule, "peers_after_all");
  }
  // Free memory unknown: not beside either.
  plan = make_plan(all_works(), {GpuFacts{}, GpuFacts{}});
  EXPECT_FALSE(plan.span_beside);
}

} // namespace
} // namespace gpucheck::engine
