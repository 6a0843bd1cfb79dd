// The scheduler against real child processes that stand in for the GPU checks (the test-gated
// child mode speaks the gate protocol with sleeps for its context, preparation and work; the
// other test modes crash, hang, exit early or send garbage), with a census given by the test.

#include "engine/scheduler.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <map>
#include <thread>

#include "unit/engine/added_works.hpp"

namespace gpucheck::engine {
namespace {

using namespace std::chrono_literals;

std::string unique_uuid(const std::string& tag) {
  return "GPU-test-" + tag + "-" + std::to_string(::getpid());
}

SchedulerOptions options_for(int gpus, uint64_t free_bytes, const std::string& tag) {
  SchedulerOptions options;
  options.works = all_works();
  protocol::Census census;
  for (int g = 0; g < gpus; ++g) {
    protocol::VisibleGpu gpu;
    gpu.gpu.uuid = unique_uuid(tag + std::to_string(g));
    gpu.gpu.bus_id = "0000:1" + std::to_string(g) + ":00.0";
    gpu.visible_devices = gpu.gpu.uuid;
    options.gpus.push_back(gpu);
    protocol::CensusGpu c;
    c.uuid = gpu.gpu.uuid;
    c.bus_id = gpu.gpu.bus_id;
    c.free_bytes = free_bytes;
    c.total_bytes = 80 * k_gib;
    census.gpus.push_back(c);
  }
  options.census_override = census;
  options.timeout = 5000ms;
  // setup, work, after-done, preparation (ms)
  options.job_override = {{compute(), {"test-gated", "20", "40", "10", "0"}},
                          {streams(), {"test-gated", "20", "40", "10", "0"}},
                          {bandwidth(), {"test-gated", "20", "60", "30", "0"}},
                          {cudnn(), {"test-gated", "20", "40", "10", "80"}},
                          {engine::peers(), {"test-gated", "20", "40", "10", "0"}},
                          {engine::nccl(), {"test-gated", "20", "40", "10", "0"}}};
  return options;
}

/// Each job's report by its work (a run on one GPU).
std::map<Work, const JobReport*> reports_by_work(const Scheduler& scheduler) {
  std::map<Work, const JobReport*> by_work;
  for (const JobReport& job : scheduler.jobs()) {
    by_work[job.work] = &job;
  }
  return by_work;
}

int64_t field(const JobReport& job, const char* name) {
  if (!job.outcome || !job.outcome->payload) {
    return -1;
  }
  return job.outcome->payload->value(name, int64_t{-1});
}

TEST(EngineScheduler, RunsEveryJobKeepingTheCopiesAlone) {
  Scheduler scheduler(options_for(2, 80 * k_gib, "order"));
  std::thread probes([&scheduler] {
    std::this_thread::sleep_for(150ms);
    scheduler.probes_over();
  });
  scheduler.run();
  probes.join();
  const std::vector<JobReport>& jobs = scheduler.jobs();
  ASSERT_EQ(
      jobs.size(),
      8U + 2 * added()); // three works and the added ones on each GPU; peers and NCCL over both
  for (const JobReport& job : jobs) {
    ASSERT_TRUE(job.outcome && job.outcome->ok())
        << check_id(job.work) << " on GPU " << job.gpu << ": "
        << (job.outcome && job.outcome->failure ? job.outcome->failure->detail : job.skip_reason);
  }
  for (const JobReport& copies : jobs) {
    if (copies.work != bandwidth()) {
      continue;
    }
    for (const JobReport& other : jobs) {
      if (&other == &copies) {
        continue;
      }
      // No other job's gated work overlaps the copies.
      const bool before = field(other, "done_ns") <= field(copies, "began_ns");
      const bool after = field(other, "began_ns") >= field(copies, "done_ns");
      EXPECT_TRUE(before || after) << check_id(other.work) << " on GPU " << other.gpu
                                   << " worked while GPU " << copies.gpu << " copied";
      if (other.gpu == copies.gpu && other.work == cudnn()) {
        EXPECT_GE(field(other, "began_ns"), field(copies, "ended_ns"));
      }
    }
  }
  // Every work of a GPU runs in one child (one context: the same setup), one after another.
  EXPECT_EQ(scheduler.plan().gpus[0].mode, GpuMode::run);
  for (size_t g = 0; g < 2; ++g) {
    std::map<Work, const JobReport*> of;
    for (const JobReport& job : jobs) {
      if (job.gpu == g) {
        of[job.work] = &job;
      }
    }
    EXPECT_EQ(field(*of[compute()], "setup_began_ns"), field(*of[bandwidth()], "setup_began_ns"));
    EXPECT_EQ(field(*of[compute()], "setup_began_ns"), field(*of[cudnn()], "setup_began_ns"));
    EXPECT_GE(field(*of[streams()], "began_ns"), field(*of[compute()], "done_ns"));
    EXPECT_GE(field(*of[bandwidth()], "began_ns"), field(*of[streams()], "done_ns"));
    EXPECT_GE(field(*of[local_copies()], "began_ns"), field(*of[bandwidth()], "done_ns"));
    EXPECT_GE(field(*of[cudnn()], "began_ns"), field(*of[local_copies()], "done_ns"));
  }
}

TEST(EngineScheduler, PeerCopiesRunInOneChildAfterEveryOtherChildHasGone) {
  // 20 GiB free: 10% of it has no room for the child beside the rest (span_beside_on_idle_gpus).
  Scheduler scheduler(options_for(2, 20 * k_gib, "peers"));
  scheduler.probes_over();
  scheduler.run();
  const JobReport* peers = nullptr;
  for (const JobReport& job : scheduler.jobs()) {
    if (job.work == engine::peers()) {
      peers = &job;
    }
  }
  ASSERT_NE(peers, nullptr);
  ASSERT_TRUE(peers->outcome && peers->outcome->ok()) << peers->skip_reason;
  for (const JobReport& other : scheduler.jobs()) {
    if (&other != peers && !spans_gpus(other.work)) { // NCCL follows it in its own child
      // Its context is built once every other child's process is gone.
      EXPECT_GE(field(*peers, "setup_began_ns"), field(other, "ended_ns"))
          << check_id(other.work) << " on GPU " << other.gpu;
      // Its process (its cuInit over every GPU) is spawned only once every other job has been
      // sent its go: never beside a context being built or a preparation. The child's own
      // began_ns comes after it reads the go, which a loaded machine may delay past the spawn;
      // ready_ns comes before the parent could send the go.
      EXPECT_GE(field(*peers, "started_ns"), field(other, "ready_ns"))
          << check_id(other.work) << " on GPU " << other.gpu;
    }
  }
  // Another process on a GPU (nccl_on_idle_gpus): the peer copies run, the all-reduce's line
  // says why it did not.
  SchedulerOptions shared = options_for(2, 80 * k_gib, "peers-busy");
  shared.census_override->gpus[1].processes = {{4242, "python3", 8 * k_gib}};
  Scheduler busy(shared);
  busy.probes_over();
  busy.run();
  bool saw_nccl = false;
  for (const JobReport& job : busy.jobs()) {
    if (job.work == engine::peers()) {
      EXPECT_TRUE(job.outcome && job.outcome->ok()) << job.skip_reason;
    }
    if (job.work == engine::nccl()) {
      saw_nccl = true;
      EXPECT_FALSE(job.outcome);
      EXPECT_NE(job.skip_reason.find("4242 (python3)"), std::string::npos) << job.skip_reason;
      EXPECT_NE(job.skip_reason.find("NCCL's own buffers"), std::string::npos) << job.skip_reason;
    }
  }
  EXPECT_TRUE(saw_nccl);
  // Idle GPUs with room: its contexts once the others' are built, its timed copies once every
  // other child has gone.
  Scheduler beside(options_for(2, 80 * k_gib, "peers-beside"));
  beside.probes_over();
  beside.run();
  const JobReport* early = nullptr;
  for (const JobReport& job : beside.jobs()) {
    early = job.work == engine::peers() ? &job : early;
  }
  ASSERT_NE(early, nullptr);
  ASSERT_TRUE(early->outcome && early->outcome->ok()) << early->skip_reason;
  bool beside_one = false;
  for (const JobReport& other : beside.jobs()) {
    if (&other == early || spans_gpus(other.work)) {
      continue;
    }
    EXPECT_GE(field(*early, "began_ns"), field(other, "ended_ns"))
        << check_id(other.work) << " on GPU " << other.gpu;
    if (field(other, "context_ns") > 0) {
      EXPECT_GE(field(*early, "setup_began_ns"), field(other, "context_ns"))
          << check_id(other.work) << " on GPU " << other.gpu;
    }
    beside_one = beside_one || field(*early, "setup_began_ns") < field(other, "ended_ns");
  }
  EXPECT_TRUE(beside_one) << "the spanning child prepared after every other child had gone";
  // One GPU: no peer job, nothing else changes.
  Scheduler one(options_for(1, 80 * k_gib, "peers-one"));
  one.probes_over();
  one.run();
  EXPECT_EQ(one.jobs().size(), 3U + added());
}

/// The options with the long level's works too (memtest then burn in one child per GPU).
SchedulerOptions long_options(int gpus, const std::string& tag, const char* work_ms) {
  SchedulerOptions options = options_for(gpus, 80 * k_gib, tag);
  for (const Work w : long_works()) {
    options.works.push_back(w);
    options.job_override[w] = {"test-gated", "20", work_ms, "10", "0", "stoppable"};
  }
  return options;
}

TEST(EngineScheduler, TheLongLevelRunsAfterEverythingElseAndBurnsTogether) {
  Scheduler scheduler(long_options(2, "long", "60"));
  scheduler.probes_over();
  scheduler.run();
  int64_t last_standard_end = 0;
  std::vector<int64_t> burn_starts;
  for (const JobReport& job : scheduler.jobs()) {
    if (!is_long(job.work)) {
      last_standard_end = std::max(last_standard_end, field(job, "ended_ns"));
    }
  }
  for (const JobReport& job : scheduler.jobs()) {
    if (!is_long(job.work)) {
      continue;
    }
    ASSERT_TRUE(job.outcome && job.outcome->ok()) << check_id(job.work) << " " << job.skip_reason;
    EXPECT_GE(field(job, "setup_began_ns"), last_standard_end) << check_id(job.work);
    if (job.work == burn()) {
      burn_starts.push_back(field(job, "began_ns"));
    }
  }
  ASSERT_EQ(burn_starts.size(), 2U);
  // Released in one step (the two go messages a few ms apart at most).
  EXPECT_LT(std::llabs(burn_starts[0] - burn_starts[1]), 30'000'000);
}

TEST(EngineScheduler, AnInterruptStopsTheLongWorkWhichStillReports) {
  SchedulerOptions options = long_options(1, "interrupt", "20000");
  options.long_duration = 20000ms;
  Scheduler scheduler(options);
  scheduler.probes_over();
  std::thread user([&scheduler] {
    for (int i = 0; i < 400 && !(scheduler.progress() && scheduler.progress()->gpus > 0); ++i) {
      std::this_thread::sleep_for(10ms);
    }
    const std::optional<Scheduler::Progress> progress = scheduler.progress();
    EXPECT_TRUE(progress && progress->phase == "memory test") << "no progress of the long level";
    scheduler.interrupt();
  });
  const auto start = std::chrono::steady_clock::now();
  scheduler.run();
  user.join();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 10s); // not the 20 s of the memory test
  for (const JobReport& job : scheduler.jobs()) {
    if (job.work == memtest()) {
      ASSERT_TRUE(job.outcome && job.outcome->payload) << job.skip_reason;
      EXPECT_TRUE(job.outcome->payload->value("stopped", false));
    } else if (job.work == burn()) {
      // The child's next work got its go and the stop at once: it reports, stopped at once.
      ASSERT_TRUE(job.outcome && job.outcome->payload) << job.skip_reason;
      EXPECT_TRUE(job.outcome->payload->value("stopped", false));
    } else {
      EXPECT_TRUE(job.outcome && job.outcome->ok()) << check_id(job.work);
    }
  }
}

TEST(EngineScheduler, CopiesTogetherStartTogetherAfterEveryGpusOwn) {
  SchedulerOptions options = options_for(2, 80 * k_gib, "together");
  options.works.push_back(copies_together());
  Scheduler scheduler(options);
  scheduler.probes_over();
  scheduler.run();
  std::map<std::pair<size_t, Work>, const JobReport*> of;
  for (const JobReport& job : scheduler.jobs()) {
    ASSERT_TRUE(job.outcome && job.outcome->ok()) << check_id(job.work) << " on GPU " << job.gpu;
    of[{job.gpu, job.work}] = &job;
  }
  ASSERT_EQ(of.size(),
            10U +
                2 * added()); // four works and the added ones on each GPU; peers and NCCL over both
  const JobReport& first = *of[{0, copies_together()}];
  const JobReport& second = *of[{1, copies_together()}];
  EXPECT_EQ(first.outcome->payload->value("work", ""), "copies_together");
  for (size_t g = 0; g < 2; ++g) {
    // After both GPUs' own copies, and before either GPU's cuDNN timing.
    for (const JobReport* part : {&first, &second}) {
      EXPECT_GE(field(*part, "began_ns"), field(*of[{g, bandwidth()}], "done_ns"));
      EXPECT_LE(field(*part, "done_ns"), field(*of[{g, cudnn()}], "began_ns"));
    }
  }
  // Released in one step: each began before the other was done.
  EXPECT_LT(field(first, "began_ns"), field(second, "done_ns"));
  EXPECT_LT(field(second, "began_ns"), field(first, "done_ns"));
}

TEST(EngineScheduler, CrashHangEarlyExitAndGarbageEndAsOutcomes) {
  // The shared child crashes at once: compute's is the failure, the works after it never ran.
  SchedulerOptions options = options_for(1, 80 * k_gib, "faults");
  options.timeout = 400ms;
  options.job_override = {{compute(), {"test-crash"}}};
  Scheduler scheduler(options);
  scheduler.probes_over();
  const auto start = std::chrono::steady_clock::now();
  scheduler.run();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  std::map<Work, const JobReport*> by_work = reports_by_work(scheduler);
  ASSERT_TRUE(by_work[compute()]->outcome);
  EXPECT_EQ(by_work[compute()]->outcome->failure->kind, ChildFailureKind::signal);
  for (const Work later : {streams(), bandwidth(), cudnn()}) {
    EXPECT_FALSE(by_work[later]->outcome) << check_id(later);
    EXPECT_EQ(by_work[later]->skip, JobReport::Skip::stopped);
    EXPECT_NE(by_work[later]->skip_reason.find("crashed"), std::string::npos)
        << by_work[later]->skip_reason;
    EXPECT_NE(by_work[later]->skip_reason.find("gpu.compute"), std::string::npos)
        << by_work[later]->skip_reason;
  }
}

TEST(EngineScheduler, AChildThatDiesWhileCudnnPreparesBesideAWorkIsCudnnsFailure) {
  // The shared child dies in streams while cuDNN's lane still prepares: cuDNN's libraries are
  // the likelier culprit, so gpu.cudnn carries the crash and streams did not finish.
  SchedulerOptions options = options_for(1, 80 * k_gib, "lane");
  options.job_override[compute()] = {"test-gated", "10", "20", "0", "0", "lane=60000", "die=1"};
  Scheduler scheduler(options);
  scheduler.probes_over();
  scheduler.run();
  std::map<Work, const JobReport*> by_work = reports_by_work(scheduler);
  ASSERT_TRUE(by_work[compute()]->outcome);
  EXPECT_TRUE(by_work[compute()]->outcome->ok());
  EXPECT_FALSE(by_work[streams()]->outcome);
  EXPECT_NE(by_work[streams()]->skip_reason.find("while cuDNN prepared beside this check"),
            std::string::npos)
      << by_work[streams()]->skip_reason;
  EXPECT_NE(by_work[bandwidth()]->skip_reason.find("gpu.cudnn's preparation beside gpu.streams"),
            std::string::npos)
      << by_work[bandwidth()]->skip_reason;
  ASSERT_TRUE(by_work[cudnn()]->outcome);
  ASSERT_TRUE(by_work[cudnn()]->outcome->failure);
  EXPECT_EQ(by_work[cudnn()]->outcome->failure->kind, ChildFailureKind::signal);
  EXPECT_NE(
      by_work[cudnn()]->outcome->failure->detail.find("while cuDNN prepared beside gpu.streams"),
      std::string::npos)
      << by_work[cudnn()]->outcome->failure->detail;
}

TEST(EngineScheduler, AWorkReportedBeforeTheSharedChildDiedKeepsItsResult) {
  // The shared child finishes compute, then dies on streams; garbage and out-of-order messages
  // on its channel change nothing.
  SchedulerOptions options = options_for(1, 80 * k_gib, "midway");
  options.job_override[compute()] = {"test-gated", "10", "20", "0", "0", "0", "noisy", "die=1"};
  Scheduler scheduler(options);
  scheduler.probes_over();
  scheduler.run();
  std::map<Work, const JobReport*> by_work = reports_by_work(scheduler);
  ASSERT_TRUE(by_work[compute()]->outcome);
  ASSERT_TRUE(by_work[compute()]->outcome->ok()) << by_work[compute()]->outcome->failure->detail;
  EXPECT_EQ(by_work[compute()]->outcome->payload->value("work", ""), "compute");
  ASSERT_TRUE(by_work[streams()]->outcome);
  EXPECT_EQ(by_work[streams()]->outcome->failure->kind, ChildFailureKind::signal)
      << by_work[streams()]->outcome->failure->detail;
  EXPECT_FALSE(by_work[bandwidth()]->outcome);
  EXPECT_NE(by_work[bandwidth()]->skip_reason.find("during gpu.streams"), std::string::npos)
      << by_work[bandwidth()]->skip_reason;
  EXPECT_FALSE(by_work[cudnn()]->outcome);
  EXPECT_EQ(by_work[cudnn()]->skip, JobReport::Skip::stopped);
}

TEST(EngineScheduler, AHangInTheSharedChildIsItsCurrentWorksTimeout) {
  SchedulerOptions options = options_for(1, 80 * k_gib, "hang");
  options.timeout = 400ms;
  options.job_override[compute()] = {"test-hang"};
  Scheduler scheduler(options);
  scheduler.probes_over();
  scheduler.run();
  for (const JobReport& job : scheduler.jobs()) {
    if (job.work == compute()) {
      ASSERT_TRUE(job.outcome);
      EXPECT_EQ(job.outcome->failure->kind, ChildFailureKind::timeout);
    } else {
      EXPECT_EQ(job.skip, JobReport::Skip::stopped) << check_id(job.work);
    }
  }
}

TEST(EngineScheduler, WaitingAtTheGateIsNotTheChildsOwnTime) {
  // The cuDNN job waits at its gate for the probes much longer than its deadline.
  SchedulerOptions options = options_for(1, 80 * k_gib, "wait");
  options.timeout = 600ms;
  Scheduler scheduler(options);
  std::thread probes([&scheduler] {
    std::this_thread::sleep_for(1500ms);
    scheduler.probes_over();
  });
  scheduler.run();
  probes.join();
  for (const JobReport& job : scheduler.jobs()) {
    ASSERT_TRUE(job.outcome);
    EXPECT_TRUE(job.outcome->ok()) << check_id(job.work) << ": " << job.outcome->failure->detail;
  }
}

TEST(EngineScheduler, NoRoomOnTheGpuSkipsWithTheReason) {
  // 98% of an 80 GiB GPU held: 1.6 GiB free, gpucheck may take 10% of it.
  Scheduler scheduler(options_for(1, 80 * k_gib / 50, "full"));
  scheduler.probes_over();
  scheduler.run();
  ASSERT_EQ(scheduler.jobs().size(), 3U + added());
  for (const JobReport& job : scheduler.jobs()) {
    EXPECT_FALSE(job.outcome.has_value());
    EXPECT_EQ(job.skip, JobReport::Skip::no_memory);
    EXPECT_NE(job.skip_reason.find("MiB"), std::string::npos) << job.skip_reason;
  }
  EXPECT_EQ(scheduler.gpus()[0].plan.mode, GpuMode::skip);
}

TEST(EngineScheduler, AnotherRunsTurnThatDoesNotEndSkipsTheGpu) {
  SchedulerOptions options = options_for(1, 80 * k_gib, "held");
  options.turn_wait = 300ms;
  const GpuLock other = GpuLock::try_acquire(options.gpus[0].gpu.uuid);
  ASSERT_TRUE(other.held()) << other.error();
  Scheduler scheduler(options);
  scheduler.probes_over();
  scheduler.run();
  for (const JobReport& job : scheduler.jobs()) {
    EXPECT_FALSE(job.outcome.has_value());
    EXPECT_TRUE(job.skip_is_contention);
    EXPECT_EQ(job.skip, JobReport::Skip::other_run);
    EXPECT_NE(job.skip_reason.find("another gpucheck run"), std::string::npos) << job.skip_reason;
    // The kernel names the holder: this test's process.
    EXPECT_NE(job.skip_reason.find(fmt::format("(pid {})", ::getpid())), std::string::npos)
        << job.skip_reason;
  }
  EXPECT_GE(scheduler.gpus()[0].lock_waited, 250ms);
  EXPECT_TRUE(scheduler.gpus()[0].turn_not_taken);
}

TEST(EngineScheduler, AGpuWhoseTurnDoesNotComeLeavesTheOtherTestedAndNothingHangs) {
  // Another run holds GPU 1 for good: GPU 0 is tested in full, GPU 1 and the work over both are
  // not, and the run ends soon after its wait (it hung for ever when GPU 0's jobs waited at
  // their gates for GPU 1's, which never came).
  SchedulerOptions options = options_for(2, 80 * k_gib, "one-held");
  options.turn_wait = 300ms;
  const GpuLock other = GpuLock::try_acquire(options.gpus[1].gpu.uuid);
  ASSERT_TRUE(other.held());
  Scheduler scheduler(options);
  scheduler.probes_over();
  const auto start = std::chrono::steady_clock::now();
  scheduler.run();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  for (const JobReport& job : scheduler.jobs()) {
    if (job.gpu == 0 && !spans_gpus(job.work)) {
      ASSERT_TRUE(job.outcome && job.outcome->ok())
          << check_id(job.work) << ": " << job.skip_reason;
    } else {
      EXPECT_FALSE(job.outcome.has_value()) << check_id(job.work);
      EXPECT_EQ(job.skip, JobReport::Skip::other_run) << check_id(job.work);
    }
  }
  EXPECT_FALSE(scheduler.gpus()[0].turn_not_taken);
  EXPECT_TRUE(scheduler.gpus()[1].turn_not_taken);
}

TEST(EngineScheduler, TwoRunsListingTheGpusInOppositeOrdersBothTestEverything) {
  // Two runs at once over the same two GPUs, each listing them in the other's reverse order:
  // one waits for the other's turns and then tests everything; neither skips a GPU.
  SchedulerOptions one = options_for(2, 80 * k_gib, "opposite");
  SchedulerOptions two = one;
  std::swap(two.gpus[0], two.gpus[1]);
  one.turn_wait = two.turn_wait = 20s;
  Scheduler first(one);
  Scheduler second(two);
  first.probes_over();
  second.probes_over();
  const auto start = std::chrono::steady_clock::now();
  std::thread other([&second] { second.run(); });
  first.run();
  other.join();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 15s);
  for (const Scheduler* scheduler : {&first, &second}) {
    for (const JobReport& job : scheduler->jobs()) {
      ASSERT_TRUE(job.outcome && job.outcome->ok())
          << check_id(job.work) << ": " << job.skip_reason;
    }
  }
  // One of them waited for the other.
  EXPECT_TRUE(first.gpus()[0].waited_for_another_run || first.gpus()[1].waited_for_another_run ||
              second.gpus()[0].waited_for_another_run || second.gpus()[1].waited_for_another_run);
}

TEST(EngineScheduler, TheWorkLimitEndsARunThatSomethingHoldsUp) {
  // Each child's own deadline is long; the whole run's limit is short: the run ends at it, and
  // the work it cut says so.
  SchedulerOptions options = options_for(1, 80 * k_gib, "limit");
  options.timeout = 60s;
  options.work_limit = 600ms;
  options.job_override[compute()] = {"test-gated", "20", "30000", "10", "0"};
  Scheduler scheduler(options);
  scheduler.probes_over();
  const auto start = std::chrono::steady_clock::now();
  scheduler.run();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  bool cut = false;
  for (const JobReport& job : scheduler.jobs()) {
    const std::string why =
        job.outcome && job.outcome->failure ? job.outcome->failure->detail : job.skip_reason;
    cut = cut || why.find("time limit") != std::string::npos;
    EXPECT_FALSE(job.outcome && job.outcome->ok()) << check_id(job.work);
  }
  EXPECT_TRUE(cut);
}

TEST(EngineScheduler, TakesItsTurnWhenTheOtherRunEnds) {
  SchedulerOptions options = options_for(1, 80 * k_gib, "turn");
  options.turn_wait = 5000ms;
  auto other = std::make_unique<GpuLock>(GpuLock::try_acquire(options.gpus[0].gpu.uuid));
  ASSERT_TRUE(other->held());
  std::thread release([&other] {
    std::this_thread::sleep_for(200ms);
    other->release();
  });
  Scheduler scheduler(options);
  scheduler.probes_over();
  scheduler.run();
  release.join();
  for (const JobReport& job : scheduler.jobs()) {
    ASSERT_TRUE(job.outcome);
    EXPECT_TRUE(job.outcome->ok());
  }
  EXPECT_TRUE(scheduler.gpus()[0].waited_for_another_run);
  EXPECT_GE(scheduler.gpus()[0].lock_waited, 150ms);
}

TEST(EngineScheduler, ContextsAreReportedToAnotherThread) {
  Scheduler scheduler(options_for(1, 80 * k_gib, "contexts"));
  bool built = false;
  std::thread waiter([&] { built = scheduler.await_contexts(10s); });
  scheduler.probes_over();
  scheduler.run();
  waiter.join();
  EXPECT_TRUE(built);
}

TEST(EngineScheduler, MessagesCountOnlyWhereTheProtocolAllowsThem) {
  EXPECT_EQ(after_message(JobState::waiting_for_setup, protocol::GateMessage::done),
            JobState::waiting_for_setup);
  EXPECT_EQ(after_message(JobState::waiting_for_setup, protocol::GateMessage::ready),
            JobState::waiting_for_setup);
  EXPECT_EQ(after_message(JobState::setting_up, protocol::GateMessage::context_built),
            JobState::preparing);
  EXPECT_EQ(after_message(JobState::setting_up, protocol::GateMessage::ready), JobState::ready);
  EXPECT_EQ(after_message(JobState::running, protocol::GateMessage::context_built),
            JobState::running);
  EXPECT_EQ(after_message(JobState::running, protocol::GateMessage::paused), JobState::paused);
  EXPECT_EQ(after_message(JobState::paused, protocol::GateMessage::done), JobState::done);
  EXPECT_EQ(after_message(JobState::ready, protocol::GateMessage::paused), JobState::ready);
  EXPECT_EQ(after_message(JobState::done, protocol::GateMessage::go), JobState::done);
}

TEST(EngineScheduler, AConcludedChildIsOneWhoseResultIsIn) {
  // Await::concluded holds once the job has ended, which a child concluded at its result does
  // before its process exits; a job still checking or tearing down (done) does not satisfy it.
  const Condition concluded{"test", Step::go, Await::concluded, 0};
  EXPECT_FALSE(condition_met(concluded, {JobState::running}, true));
  EXPECT_FALSE(condition_met(concluded, {JobState::done}, true));
  EXPECT_TRUE(condition_met(concluded, {JobState::ended}, false));
}

TEST(GpuLock, TwoProcessesTakeTurns) {
  const std::string uuid = unique_uuid("two-processes");
  int to_parent[2];
  ASSERT_EQ(::pipe(to_parent), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    GpuLock lock = GpuLock::try_acquire(uuid);
    const char held = lock.held() ? 'y' : 'n';
    [[maybe_unused]] auto n = ::write(to_parent[1], &held, 1);
    std::this_thread::sleep_for(300ms);
    ::_exit(0); // the lock dies with its holder, without a release
  }
  char held = 0;
  ASSERT_EQ(::read(to_parent[0], &held, 1), 1);
  EXPECT_EQ(held, 'y');
  const GpuLock refused = GpuLock::try_acquire(uuid);
  EXPECT_FALSE(refused.held());
  EXPECT_NE(refused.error().find("another gpucheck run"), std::string::npos);
  const auto start = std::chrono::steady_clock::now();
  const GpuLock taken = GpuLock::acquire(uuid, 5s);
  EXPECT_TRUE(taken.held());
  EXPECT_LT(std::chrono::steady_clock::now() - start, 4s);
  ::waitpid(child, nullptr, 0);
  ::close(to_parent[0]);
  ::close(to_parent[1]);
}

TEST(GpuLock, GivesUpWhenAsked) {
  const std::string uuid = unique_uuid("stop");
  const GpuLock held = GpuLock::try_acquire(uuid);
  ASSERT_TRUE(held.held());
  std::atomic<bool> stop{true};
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(GpuLock::acquire(uuid, 10s, &stop).held());
  EXPECT_LT(std::chrono::steady_clock::now() - start, 1s);
}

} // namespace
} // namespace gpucheck::engine
