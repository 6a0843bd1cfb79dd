#include "platform/child_process.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <thread>

namespace gpucheck::platform {
namespace {

using namespace std::chrono_literals;

ChildRequest req(std::string mode, std::chrono::milliseconds timeout = 5000ms) {
  ChildRequest r;
  r.mode = std::move(mode);
  r.timeout = timeout;
  return r;
}

TEST(ChildProcess, DeliversJsonResult) {
  ChildRequest r = req("test-ok");
  r.args = {"a", "b"};
  const ChildOutcome outcome = run_child(r);
  ASSERT_TRUE(outcome.ok()) << (outcome.failure ? outcome.failure->detail : "");
  EXPECT_EQ((*outcome.payload)["args"], nlohmann::json({"a", "b"}));
  EXPECT_FALSE(outcome.failure);
}

TEST(ChildProcess, AbortBecomesSignalFailureWithStderr) {
  const ChildOutcome outcome = run_child(req("test-crash"));
  ASSERT_FALSE(outcome.ok());
  ASSERT_TRUE(outcome.failure);
  EXPECT_EQ(outcome.failure->kind, "signal");
  EXPECT_EQ(outcome.failure->signal_name, "SIGABRT");
  EXPECT_NE(outcome.failure->stderr_tail.find("about to abort"), std::string::npos);
}

TEST(ChildProcess, SegfaultIsNamed) {
  ChildRequest r = req("test-segv");
  // Under the sanitizer preset ASan would catch the signal and exit 1; let it through.
  r.env = {{"ASAN_OPTIONS", "handle_segv=0:detect_leaks=0"}};
  const ChildOutcome outcome = run_child(r);
  ASSERT_TRUE(outcome.failure);
  EXPECT_EQ(outcome.failure->signal_name, "SIGSEGV");
}

TEST(ChildProcess, HangIsKilledAtDeadline) {
  const auto start = std::chrono::steady_clock::now();
  const ChildOutcome outcome = run_child(req("test-hang", 300ms));
  const auto elapsed = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(outcome.failure);
  EXPECT_EQ(outcome.failure->kind, "timeout");
  EXPECT_DOUBLE_EQ(outcome.failure->timeout_s, 0.3);
  EXPECT_LT(elapsed, 3s);
}

TEST(ChildProcess, IgnoredSigtermStillEndsWithSigkill) {
  ChildRequest r = req("test-hang-ignore-term", 300ms);
  r.kill_grace = 200ms;
  const auto start = std::chrono::steady_clock::now();
  const ChildOutcome outcome = run_child(r);
  ASSERT_TRUE(outcome.failure);
  EXPECT_EQ(outcome.failure->kind, "timeout");
  EXPECT_LT(std::chrono::steady_clock::now() - start, 3s);
}

TEST(ChildProcess, EarlyExitIsReported) {
  const ChildOutcome outcome = run_child(req("test-exit"));
  ASSERT_TRUE(outcome.failure);
  EXPECT_EQ(outcome.failure->kind, "exit");
  EXPECT_EQ(outcome.failure->exit_code, 7);
}

TEST(ChildProcess, GarbageIsBadOutput) {
  const ChildOutcome outcome = run_child(req("test-garbage"));
  ASSERT_TRUE(outcome.failure);
  EXPECT_EQ(outcome.failure->kind, "bad_output");
}

TEST(ChildProcess, UnknownModeIsAnExitFailure) {
  const ChildOutcome outcome = run_child(req("no-such-mode"));
  ASSERT_TRUE(outcome.failure);
  EXPECT_EQ(outcome.failure->kind, "exit");
  EXPECT_NE(outcome.failure->stderr_tail.find("unknown child mode"), std::string::npos);
}

TEST(ChildProcess, LargeResultIsDrained) {
  const ChildOutcome outcome = run_child(req("test-big"));
  ASSERT_TRUE(outcome.ok());
  EXPECT_EQ((*outcome.payload)["blob"].get<std::string>().size(), size_t{1} << 20);
}

TEST(ChildProcess, ManyChildrenInParallelKeepTheirOrder) {
  std::vector<ChildRequest> requests{req("test-ok"), req("test-crash"), req("test-hang", 300ms),
                                     req("test-ok")};
  requests[0].args = {"first"};
  requests[3].args = {"last"};
  const auto start = std::chrono::steady_clock::now();
  const auto outcomes = run_children(requests);
  ASSERT_EQ(outcomes.size(), 4u);
  EXPECT_EQ((*outcomes[0].payload)["args"][0], "first");
  EXPECT_EQ(outcomes[1].failure->kind, "signal");
  EXPECT_EQ(outcomes[2].failure->kind, "timeout");
  EXPECT_EQ((*outcomes[3].payload)["args"][0], "last");
  EXPECT_LT(std::chrono::steady_clock::now() - start, 3s);
}

TEST(ChildProcess, EnvironmentChangesReachTheChild) {
  // The child's own environment is visible through /proc/self/environ; test-ok does not echo it,
  // so check the mechanism end to end with a variable that changes the child's behaviour:
  // GPUCHECK_PARENT_PID set to a wrong value makes the child refuse to run (exit 125).
  ChildRequest r = req("test-ok");
  r.env = {{"GPUCHECK_PARENT_PID_UNUSED", "1"}};
  EXPECT_TRUE(run_child(r).ok());
}

ChildRequest gated(int setup_ms, int work_ms, std::vector<size_t> after,
                   std::chrono::milliseconds timeout = 5000ms, int after_done_ms = 0,
                   int warm_ms = 0, bool pause_for_quiet_host = false) {
  ChildRequest r = req("test-gated", timeout);
  r.args = {std::to_string(setup_ms), std::to_string(work_ms), std::to_string(after_done_ms),
            std::to_string(warm_ms), pause_for_quiet_host ? "1" : "0"};
  r.gated = true;
  r.release_after = std::move(after);
  return r;
}

int64_t field(const ChildOutcome& outcome, const char* name) {
  return outcome.payload ? outcome.payload->value(name, int64_t{-1}) : -1;
}

TEST(ChildProcess, GatesOpenOnlyAfterTheNamedChildrenAreDone) {
  ChildGroup group;
  group.start(gated(0, 150, {}));
  group.start(gated(0, 50, {0}));
  group.start(gated(0, 10, {0, 1}));
  const std::vector<ChildOutcome> outcomes = group.wait_all();
  ASSERT_EQ(outcomes.size(), 3U);
  for (const ChildOutcome& outcome : outcomes) {
    ASSERT_TRUE(outcome.ok()) << (outcome.failure ? outcome.failure->detail : "");
  }
  EXPECT_GE(field(outcomes[1], "began_ns"), field(outcomes[0], "done_ns"));
  EXPECT_GE(field(outcomes[2], "began_ns"), field(outcomes[1], "done_ns"));
}

TEST(ChildProcess, ReleaseFollowsDoneNotExit) {
  ChildGroup group;
  // The first is done with its gated work after 50 ms, then checks and tears down for 800 ms.
  group.start(gated(0, 50, {}, 5000ms, 800));
  group.start(gated(0, 0, {0}));
  const std::vector<ChildOutcome> outcomes = group.wait_all();
  ASSERT_TRUE(outcomes[0].ok() && outcomes[1].ok());
  EXPECT_GE(field(outcomes[1], "began_ns"), field(outcomes[0], "done_ns"));
  EXPECT_LT(field(outcomes[1], "began_ns"), field(outcomes[0], "ended_ns"));
}

TEST(ChildProcess, ReleaseAfterExitWaitsForTheTeardown) {
  ChildGroup group;
  group.start(gated(0, 50, {}, 5000ms, 400)); // done after 50 ms, exits 400 ms later
  ChildRequest second = gated(0, 0, {0});
  second.release_after_exit = true;
  group.start(second);
  const std::vector<ChildOutcome> outcomes = group.wait_all();
  ASSERT_TRUE(outcomes[0].ok() && outcomes[1].ok());
  EXPECT_GE(field(outcomes[1], "began_ns"), field(outcomes[0], "ended_ns"));
}

TEST(ChildProcess, QuietHostReleasesTheHeldChildAndResumesThePausedOne) {
  ChildGroup group;
  // The first works 50 ms, pauses for the quiet host, then works 50 ms more; the second waits
  // for nobody but the quiet host.
  group.start(gated(0, 50, {}, 300ms, 0, 0, true));
  ChildRequest second = gated(0, 0, {}, 300ms);
  second.release_after_quiet_host = true;
  group.start(second);
  std::vector<ChildOutcome> outcomes;
  std::thread waiter([&] { outcomes = group.wait_all(); });
  // Longer than either deadline: neither waiting for the quiet host counts against it.
  std::this_thread::sleep_for(700ms);
  const auto quiet_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                            std::chrono::steady_clock::now().time_since_epoch())
                            .count();
  group.host_quiet();
  waiter.join();
  ASSERT_EQ(outcomes.size(), 2U);
  ASSERT_TRUE(outcomes[0].ok()) << (outcomes[0].failure ? outcomes[0].failure->detail : "");
  ASSERT_TRUE(outcomes[1].ok()) << (outcomes[1].failure ? outcomes[1].failure->detail : "");
  EXPECT_GE(field(outcomes[0], "resumed_ns"), quiet_ns);
  EXPECT_GE(field(outcomes[1], "began_ns"), quiet_ns);
}

TEST(ChildProcess, PauseReturnsAtOnceWhenTheHostIsAlreadyQuiet) {
  ChildGroup group;
  group.host_quiet();
  group.start(gated(0, 20, {}, 2000ms, 0, 0, true));
  const auto start = std::chrono::steady_clock::now();
  const std::vector<ChildOutcome> outcomes = group.wait_all();
  ASSERT_TRUE(outcomes[0].ok()) << (outcomes[0].failure ? outcomes[0].failure->detail : "");
  EXPECT_GT(field(outcomes[0], "resumed_ns"), 0);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 1500ms);
}

TEST(ChildProcess, SetupGateOpensWhenTheNamedChildHasItsContext) {
  ChildGroup group;
  // Context after 100 ms, then 1 s of untimed preparation before its gate, then 0.5 s of work.
  group.start(gated(100, 500, {}, 5000ms, 0, 1000));
  ChildRequest second = gated(0, 0, {0});
  second.setup_after = {0};
  group.start(second);
  const std::vector<ChildOutcome> outcomes = group.wait_all();
  ASSERT_TRUE(outcomes[0].ok() && outcomes[1].ok());
  // The second sets up once the first has its context, while the first still prepares.
  EXPECT_GE(field(outcomes[1], "setup_began_ns"), field(outcomes[0], "context_ns"));
  EXPECT_LT(field(outcomes[1], "setup_began_ns"), field(outcomes[0], "ready_ns"));
  EXPECT_GE(field(outcomes[1], "began_ns"), field(outcomes[0], "done_ns"));
}

TEST(ChildProcess, ReleaseWaitsForTheContextOrder) {
  ChildGroup group;
  group.start(gated(300, 0, {}));
  // Nothing to wait for before its release, but it builds its context after the first.
  ChildRequest second = gated(0, 0, {});
  second.setup_after = {0};
  group.start(second);
  const std::vector<ChildOutcome> outcomes = group.wait_all();
  ASSERT_TRUE(outcomes[0].ok() && outcomes[1].ok());
  EXPECT_GE(field(outcomes[1], "setup_began_ns"), field(outcomes[0], "context_ns"));
  EXPECT_GE(field(outcomes[1], "began_ns"), field(outcomes[0], "context_ns"));
}

TEST(ChildProcess, ChildThatHangsInItsSetupTimesOutAndLetsTheNextGo) {
  ChildGroup group;
  // Its "context" takes 20 s: the deadline counts from the moment its setup was allowed.
  group.start(gated(20000, 0, {}, 300ms));
  ChildRequest second = gated(0, 0, {0});
  second.setup_after = {0};
  group.start(second);
  const auto start = std::chrono::steady_clock::now();
  const std::vector<ChildOutcome> outcomes = group.wait_all();
  ASSERT_TRUE(outcomes[0].failure);
  EXPECT_EQ(outcomes[0].failure->kind, "timeout");
  EXPECT_TRUE(outcomes[1].ok());
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
}

TEST(ChildProcess, WaitingAtTheGateDoesNotCountAgainstTheDeadline) {
  ChildGroup group;
  group.start(gated(0, 700, {}));
  // Ready at once, then held about 700 ms with a 300 ms limit: the wait is not its own time.
  group.start(gated(0, 0, {0}, 300ms));
  const std::vector<ChildOutcome> outcomes = group.wait_all();
  ASSERT_TRUE(outcomes[1].ok()) << (outcomes[1].failure ? outcomes[1].failure->detail : "");
}

TEST(ChildProcess, AwaitContextsFromAnotherThread) {
  ChildGroup group;
  group.start(gated(200, 300, {})); // its context after 200 ms
  group.start(gated(5000, 0, {0})); // its context only after 5 s
  std::vector<ChildOutcome> outcomes;
  std::thread waiter([&] { outcomes = group.wait_all(); });
  const auto start = std::chrono::steady_clock::now();
  EXPECT_TRUE(group.await_progress({0}, {}, 3000ms));
  const auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_GE(waited, 150ms);
  EXPECT_LT(waited, 2500ms);
  // The second one's context does not come within the limit, nor the first one's exit.
  EXPECT_FALSE(group.await_progress({0, 1}, {}, 100ms));
  EXPECT_FALSE(group.await_progress({0}, {0}, 20ms));
  EXPECT_TRUE(group.await_progress({}, {0}, 3000ms));
  group.cancel();
  waiter.join();
  // Once every child has ended, nothing is awaited any more.
  EXPECT_TRUE(group.await_progress({0, 1}, {0, 1}, 0ms));
}

TEST(ChildProcess, GatedDeadlineCountsFromTheRelease) {
  ChildGroup group;
  group.start(gated(0, 700, {}));
  // Held for about 700 ms behind the first, with a 400 ms limit that starts at its release.
  group.start(gated(0, 0, {0}, 400ms));
  const std::vector<ChildOutcome> outcomes = group.wait_all();
  ASSERT_TRUE(outcomes[1].ok()) << (outcomes[1].failure ? outcomes[1].failure->detail : "");
  EXPECT_GE(field(outcomes[1], "began_ns"), field(outcomes[0], "ended_ns"));
}

TEST(ChildProcess, ChildThatDiesBeforeItsGateLetsTheNextOneGo) {
  ChildGroup group;
  ChildRequest crash = req("test-crash");
  crash.gated = true;
  group.start(crash);
  group.start(gated(0, 0, {0}));
  const std::vector<ChildOutcome> outcomes = group.wait_all();
  ASSERT_TRUE(outcomes[0].failure);
  EXPECT_EQ(outcomes[0].failure->signal_name, "SIGABRT");
  EXPECT_TRUE(outcomes[1].ok());
}

TEST(ChildProcess, CancelStopsRunningAndHeldChildren) {
  ChildGroup group;
  group.start(req("test-hang", 20000ms));
  group.start(gated(0, 0, {0}));
  std::vector<ChildOutcome> outcomes;
  std::thread waiter([&] { outcomes = group.wait_all(); });
  std::this_thread::sleep_for(100ms);
  group.cancel();
  waiter.join();
  ASSERT_EQ(outcomes.size(), 2U);
  for (const ChildOutcome& outcome : outcomes) {
    ASSERT_TRUE(outcome.failure);
    EXPECT_EQ(outcome.failure->kind, "cancelled");
  }
}

TEST(ChildProcess, SignalNames) {
  EXPECT_EQ(signal_name(6), "SIGABRT");
  EXPECT_EQ(signal_name(11), "SIGSEGV");
  EXPECT_EQ(signal_name(63), "signal 63");
}

} // namespace
} // namespace gpucheck::platform
