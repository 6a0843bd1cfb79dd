// The long level in the GPU engine's plan: its works come after every standard job, the burns
// go together, GPUs that other processes use are left out unless forced. Checked over simulated
// runs with the scheduler's own decision functions, like engine_plan_test.cpp.

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "engine/plan.hpp"
#include "engine/scheduler.hpp"
#include "unit/engine/added_works.hpp"

namespace gpucheck::engine {
namespace {

std::vector<GpuFacts> idle_gpus(size_t count) {
  std::vector<GpuFacts> gpus;
  for (size_t i = 0; i < count; ++i) {
    GpuFacts f;
    f.free_bytes = 80 * k_gib;
    f.total_bytes = 80 * k_gib;
    gpus.push_back(f);
  }
  return gpus;
}

std::vector<Work> standard_and_long(size_t gpus) {
  std::vector<Work> works = all_works();
  if (gpus > 1) {
    works.push_back(copies_together());
  }
  for (const Work w : long_works()) {
    works.push_back(w);
  }
  return works;
}

/// A simulated run: every job takes a random time per phase, the parent steps jobs with
/// may_step() as the scheduler does. Returns the states seen at each step, or empty on deadlock.
std::vector<std::vector<JobState>> simulate_long_level(const Plan& plan, std::mt19937& rng) {
  std::uniform_int_distribution<int> ms(1, 30);
  const size_t n = plan.jobs.size();
  std::vector<JobState> states(n, JobState::waiting_for_setup);
  std::vector<int> next(n, -1);
  std::vector<std::vector<JobState>> seen;
  const auto advance_to = [&](size_t j, JobState s, int now) {
    states[j] = s;
    next[j] = s == JobState::ready || s == JobState::waiting_for_setup || s == JobState::ended
                  ? -1
                  : now + ms(rng);
  };
  for (int now = 0; now < 100000; ++now) {
    for (size_t j = 0; j < n; ++j) {
      if (next[j] != now) {
        continue;
      }
      switch (states[j]) {
      case JobState::setting_up:
        advance_to(j, JobState::preparing, now);
        break;
      case JobState::preparing:
        advance_to(j, JobState::ready, now);
        break;
      case JobState::running:
        advance_to(j, state_after_done(plan.jobs[j]), now);
        if (states[j] == JobState::ended) {
          // The next job of the child starts preparing on its context.
          for (size_t o = 0; o < n; ++o) {
            if (plan.jobs[o].after_in_child == j) {
              advance_to(o, state_after_setup(plan.jobs[o]), now);
            }
          }
        }
        break;
      case JobState::done:
        advance_to(j, JobState::ended, now);
        break;
      default:
        break;
      }
    }
    for (size_t j = 0; j < n; ++j) {
      if (states[j] == JobState::waiting_for_setup && !plan.jobs[j].after_in_child &&
          may_step(plan.jobs[j], Step::setup, states, true)) {
        advance_to(j, state_after_setup(plan.jobs[j]), now);
      } else if (states[j] == JobState::ready && may_step(plan.jobs[j], Step::go, states, true)) {
        advance_to(j, JobState::running, now);
      }
    }
    seen.push_back(states);
    if (std::all_of(states.begin(), states.end(),
                    [](JobState s) { return s == JobState::ended; })) {
      return seen;
    }
  }
  return {};
}

TEST(EngineLongLevel, LongWorksComeAfterEveryStandardJobAndBurnsGoTogether) {
  std::mt19937 rng(16);
  for (const size_t gpus : {1U, 2U, 4U}) {
    const Plan plan = make_plan(standard_and_long(gpus), idle_gpus(gpus));
    size_t long_jobs = 0;
    for (const PlannedJob& job : plan.jobs) {
      long_jobs += is_long(job.work) ? 1 : 0;
    }
    ASSERT_EQ(long_jobs, 2 * gpus);
    for (int run = 0; run < 40; ++run) {
      const auto seen = simulate_long_level(plan, rng);
      ASSERT_FALSE(seen.empty()) << gpus << " GPUs: the plan never finished (a deadlock)";
      for (const std::vector<JobState>& states : seen) {
        for (size_t j = 0; j < plan.jobs.size(); ++j) {
          if (!is_long(plan.jobs[j].work) || states[j] == JobState::waiting_for_setup) {
            continue;
          }
          // A long job builds its context only once every standard job has gone.
          for (size_t o = 0; o < plan.jobs.size(); ++o) {
            if (!is_long(plan.jobs[o].work)) {
              ASSERT_EQ(states[o], JobState::ended) << gpus << " GPUs, job " << o;
            }
          }
          // A burn runs only with every other burn prepared or further.
          if (plan.jobs[j].work == burn() && states[j] == JobState::running) {
            for (size_t o = 0; o < plan.jobs.size(); ++o) {
              if (plan.jobs[o].work == burn()) {
                EXPECT_GE(static_cast<int>(states[o]), static_cast<int>(JobState::ready));
              }
            }
          }
        }
      }
    }
  }
}

TEST(EngineLongLevel, MemtestAndBurnShareOneChildPerGpu) {
  const Plan plan = make_plan(standard_and_long(2), idle_gpus(2));
  for (size_t j = 0; j < plan.jobs.size(); ++j) {
    if (plan.jobs[j].work == burn()) {
      ASSERT_TRUE(plan.jobs[j].after_in_child.has_value());
      const PlannedJob& before = plan.jobs[*plan.jobs[j].after_in_child];
      EXPECT_EQ(before.work, memtest());
      EXPECT_EQ(before.gpu, plan.jobs[j].gpu);
    }
    if (is_long(plan.jobs[j].work)) {
      EXPECT_EQ(plan.jobs[j].allowance_bytes, 80 * k_gib); // sized by the child, not budgeted
    }
  }
  EXPECT_EQ(child_groups(long_works()), (std::vector<std::vector<Work>>{long_works()}));
  // A standard run plans none of them.
  const Plan standard = make_plan(all_works(), idle_gpus(2));
  EXPECT_TRUE(std::none_of(standard.jobs.begin(), standard.jobs.end(),
                           [](const PlannedJob& job) { return is_long(job.work); }));
}

TEST(EngineLongLevel, BusyGpusAreLeftOutUnlessForced) {
  std::vector<GpuFacts> gpus = idle_gpus(2);
  gpus[1].other_processes = {"4242 (python3)"};
  const Plan plan = make_plan(standard_and_long(2), gpus);
  EXPECT_TRUE(plan.gpus[0].long_skip_reason.empty());
  EXPECT_NE(plan.gpus[1].long_skip_reason.find("4242 (python3)"), std::string::npos);
  EXPECT_NE(plan.gpus[1].long_skip_reason.find("--force"), std::string::npos);
  for (const PlannedJob& job : plan.jobs) {
    if (is_long(job.work)) {
      EXPECT_EQ(job.gpu, 0U) << "a long job on the busy GPU";
    }
  }
  // The standard works still run there (they stay within 1 GiB and 10% of free memory).
  EXPECT_TRUE(std::any_of(plan.jobs.begin(), plan.jobs.end(), [](const PlannedJob& job) {
    return job.gpu == 1 && job.work == compute();
  }));
  const Plan forced = make_plan(standard_and_long(2), gpus, MemoryModel{}, true);
  EXPECT_TRUE(forced.gpus[1].long_skip_reason.empty());
  EXPECT_EQ(std::count_if(forced.jobs.begin(), forced.jobs.end(),
                          [](const PlannedJob& job) { return is_long(job.work); }),
            4);
  std::mt19937 rng(3);
  EXPECT_FALSE(simulate_long_level(plan, rng).empty());
}

TEST(EngineLongLevel, OnlyTheLongWorksSelected) {
  const Plan plan = make_plan({memtest()}, idle_gpus(2));
  ASSERT_EQ(plan.jobs.size(), 2U);
  EXPECT_TRUE(plan.jobs[0].conditions.empty());
  std::mt19937 rng(5);
  EXPECT_FALSE(simulate_long_level(make_plan({burn()}, idle_gpus(3)), rng).empty());
}

TEST(EngineLongLevel, Spellings) {
  EXPECT_EQ(check_id(memtest()), "gpu.memtest");
  EXPECT_EQ(check_id(burn()), "gpu.burn");
  EXPECT_EQ(work_for_check("gpu.burn"), burn());
  EXPECT_EQ(work_for_check("gpu.memtest"), memtest());
  EXPECT_EQ(child_mode(burn()), "gpu-burn");
  EXPECT_TRUE(is_long(memtest()));
  EXPECT_FALSE(is_long(cudnn()));
  const std::vector<Work> standard = all_works();
  EXPECT_EQ(std::count_if(standard.begin(), standard.end(), &is_long), 0);
}

} // namespace
} // namespace gpucheck::engine
