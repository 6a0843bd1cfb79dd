// Overlapping runs on one node, as a fleet sees them when a Prometheus timer, a Slurm prolog, a
// DaemonSet and an admin start gpucheck at once: rounds of 2 to 8 real gpucheck processes over
// 2, 4 or 8 fake GPUs, started at random offsets, whose GPU children (the test-gated child mode,
// through GPUCHECK_TEST_GPU_CHILD) speak the gate protocol and in some rounds crash or hang. Every
// process must exit within the run's documented bound with a complete, valid report, and, where
// the wait for turns allows every run to finish, none may say another run kept it from a GPU.
//
// GPUCHECK_STRESS_ROUNDS sets the number of rounds (default 200; 3 under a sanitizer, whose
// processes are several times slower); GPUCHECK_STRESS_SEED the first round's seed (each round's
// seed is printed with any failure, to replay it).

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cli/run_binary.hpp"
#include "support/fixture_tree.hpp"
#include "support/json_schema.hpp"
#include "support/sanitizer.hpp"

namespace gpucheck::testing {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

// The limits each run is given, and the bound they imply (docs/architecture.md, "Nothing waits
// forever"): 4 x probe timeout + turn wait + (3 x timeout + census 5 s) + 5 s + 30 s. Under a
// sanitizer, eight runs' children on two cores need far more than 5 s and 1 s: the test is
// there for what the sanitizer finds, not for the deadlines.
constexpr bool k_sanitized = k_sanitizer_slowdown > 1;
constexpr int k_probe_timeout_s = k_sanitized ? 60 : 5;
constexpr int k_timeout_s = k_sanitized ? 60 : 1;
constexpr int k_wait_turn_s = k_sanitized ? 600 : 60;
constexpr int k_default_rounds = k_sanitized ? 3 : 200;
constexpr auto k_bound =
    std::chrono::seconds(4 * k_probe_timeout_s + k_wait_turn_s + 3 * k_timeout_s + 5 + 5 + 30);

std::string bdf(int n) {
  return fmt::format("0000:{:02x}:00.0", 0x18 + 0x10 * n);
}

/// A healthy node with `gpus` GPUs whose UUIDs are this test's own (no other test's runs share
/// their turns).
void node_root(FixtureTree& tree, int gpus, const std::string& tag) {
  tree.file("/proc/driver/nvidia/version",
            "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.95.05  Release Build  "
            "(dvs-builder@U22)  Mon Oct  6 00:00:00 UTC 2025\n");
  tree.file("/sys/module/nvidia/version", "580.95.05\n");
  tree.dir("/sys/module/nvidia_uvm");
  tree.file("/dev/nvidiactl", "", 0666);
  tree.file("/dev/nvidia-uvm", "", 0666);
  tree.dir("/sys/bus/pci/drivers/nvidia");
  for (int i = 0; i < gpus; ++i) {
    tree.file("/dev/nvidia" + std::to_string(i), "", 0666);
    tree.file("/proc/driver/nvidia/gpus/" + bdf(i) + "/information",
              fmt::format("Model: \t\t NVIDIA H100 80GB HBM3\nGPU UUID: \t GPU-{}-{}\n", tag, i));
    const std::string dev = "/sys/bus/pci/devices/" + bdf(i);
    tree.file(dev + "/vendor", "0x10de\n");
    tree.file(dev + "/device", "0x2330\n");
    tree.file(dev + "/class", "0x030200\n");
    tree.symlink(dev + "/driver", "../../../bus/pci/drivers/nvidia");
  }
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

struct Started {
  pid_t pid = -1;
  std::string out_path;
  std::string err_path;
  Clock::time_point started;
  std::optional<Clock::duration> took;
  int exit_code = -1;
};

/// Starts gpucheck with exactly `env` and `args`, stdout and stderr into files.
Started start(const std::vector<std::string>& args, const std::map<std::string, std::string>& env,
              const std::string& dir, int index) {
  Started run;
  run.out_path = fmt::format("{}/run{}.out", dir, index);
  run.err_path = fmt::format("{}/run{}.err", dir, index);
  run.started = Clock::now();
  run.pid = cli_test::spawn_gpucheck({.args = args, .env = env, .inherit_env = false}, run.out_path,
                                     run.err_path);
  return run;
}

struct Round {
  int gpus = 2;
  int runs = 2;
  int crash_percent = 0;
  int hang_percent = 0;
  std::vector<int> offsets_ms;
};

Round draw_round(std::mt19937& random) {
  Round round;
  const int gpu_counts[] = {2, 4, 8};
  round.gpus = gpu_counts[random() % 3];
  round.runs = 2 + static_cast<int>(random() % 7);
  // One round in four has children that crash, one in eight children that hang.
  if (random() % 4 == 0) {
    round.crash_percent = 5;
  }
  if (random() % 8 == 0) {
    round.hang_percent = 3;
  }
  for (int r = 0; r < round.runs; ++r) {
    round.offsets_ms.push_back(static_cast<int>(random() % 150));
  }
  return round;
}

/// The GPU checks each run reports per GPU, and once for the node.
const std::set<std::string> k_per_gpu{"gpu.compute", "gpu.bandwidth", "gpu.cudnn"};
const std::set<std::string> k_spanning{"gpu.p2p"};

TEST(OverlappingRuns, EveryRunEndsInTimeWithACompleteReportAndTakesItsTurn) {
  const char* rounds_text = std::getenv("GPUCHECK_STRESS_ROUNDS");
  const int rounds = rounds_text != nullptr ? std::atoi(rounds_text) : k_default_rounds;
  const char* seed_text = std::getenv("GPUCHECK_STRESS_SEED");
  const unsigned first_seed =
      seed_text != nullptr ? static_cast<unsigned>(std::strtoul(seed_text, nullptr, 10)) : 1;
  size_t runs_seen = 0;
  size_t runs_that_waited = 0;
  Clock::duration slowest{0};
  for (int round_index = 0; round_index < rounds; ++round_index) {
    const unsigned seed = first_seed + static_cast<unsigned>(round_index);
    std::mt19937 random(seed);
    const Round round = draw_round(random);
    SCOPED_TRACE(fmt::format("round {} (GPUCHECK_STRESS_SEED={} GPUCHECK_STRESS_ROUNDS=1): {} "
                             "runs over {} GPUs, crash {}%, hang {}%",
                             round_index, seed, round.runs, round.gpus, round.crash_percent,
                             round.hang_percent));
    FixtureTree tree;
    const std::string tag = fmt::format("stress{}x{}", ::getpid(), seed);
    node_root(tree, round.gpus, tag);
    const std::string scenario_file = tree.root() + ".scenario";
    {
      std::ofstream scenario(scenario_file);
      scenario << "gpu.count=" << round.gpus << "\n";
      for (int g = 0; g < round.gpus; ++g) {
        scenario << fmt::format("gpu.{}.uuid=GPU-{}-{}\n", g, tag, g);
      }
    }
    const std::string child = fmt::format("test-gated 5 10 5 0 crash%={} hang%={}",
                                          round.crash_percent, round.hang_percent);
    const std::map<std::string, std::string> env{
        {"PATH", "/usr/bin:/bin"},
        {"HOME", tree.root()},
        {"SOURCE_DATE_EPOCH", "1790000000"},
        {"GPUCHECK_SYSROOT", tree.root()},
        {"FAKE_GPU_SCENARIO", scenario_file},
        {"LD_LIBRARY_PATH", GPUCHECK_FAKE_LIB_DIR},
        {"GPUCHECK_TEST_GPU_CHILD", child},
    };
    const std::vector<std::string> args{"--json",
                                        "--only",
                                        "gpu.compute,gpu.bandwidth,gpu.cudnn,gpu.p2p",
                                        "--probe-timeout",
                                        std::to_string(k_probe_timeout_s),
                                        "--timeout",
                                        std::to_string(k_timeout_s),
                                        "--wait-turn",
                                        std::to_string(k_wait_turn_s)};
    std::vector<Started> runs(static_cast<size_t>(round.runs));
    const auto round_start = Clock::now();
    std::vector<size_t> order(runs.size());
    for (size_t r = 0; r < runs.size(); ++r) {
      order[r] = r;
    }
    std::sort(order.begin(), order.end(),
              [&round](size_t a, size_t b) { return round.offsets_ms[a] < round.offsets_ms[b]; });
    for (const size_t r : order) {
      std::this_thread::sleep_until(round_start + std::chrono::milliseconds(round.offsets_ms[r]));
      runs[r] = start(args, env, tree.root(), static_cast<int>(r));
      ASSERT_GT(runs[r].pid, 0) << "cannot start gpucheck";
    }
    // Wait for every run, each up to the bound from its own start; one past it is killed and
    // fails the test (a hang must never hang the suite).
    size_t left = runs.size();
    while (left > 0) {
      for (Started& run : runs) {
        if (run.took) {
          continue;
        }
        int status = 0;
        const pid_t r = ::waitpid(run.pid, &status, WNOHANG);
        if (r == run.pid) {
          run.took = Clock::now() - run.started;
          run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
          --left;
        } else if (Clock::now() - run.started > k_bound) {
          ::kill(run.pid, SIGKILL);
          ::waitpid(run.pid, &status, 0);
          run.took = Clock::now() - run.started;
          run.exit_code = -1;
          --left;
          ADD_FAILURE() << "a run did not exit within the bound of " << k_bound.count() / 1e9
                        << " s; its stderr:\n"
                        << slurp(run.err_path);
        }
      }
      std::this_thread::sleep_for(5ms);
    }
    for (size_t r = 0; r < runs.size(); ++r) {
      const Started& run = runs[r];
      SCOPED_TRACE(fmt::format("run {}", r));
      ++runs_seen;
      slowest = std::max(slowest, *run.took);
      const std::string err = slurp(run.err_path);
      runs_that_waited += err.find("waiting up to") != std::string::npos ? 1 : 0;
      EXPECT_TRUE(run.exit_code == 0 || run.exit_code == 1) << "exit " << run.exit_code << "\n"
                                                            << err;
      const nlohmann::json report = nlohmann::json::parse(slurp(run.out_path), nullptr, false);
      ASSERT_FALSE(report.is_discarded()) << "stdout is not JSON; stderr:\n" << err;
      const std::vector<std::string> problems = report_schema().validate(report);
      EXPECT_TRUE(problems.empty()) << problems.front();
      std::map<std::string, int> results;
      for (const auto& result : report["results"]) {
        const std::string id = result["check_id"].get<std::string>();
        ++results[id];
        for (const auto& finding : result["findings"]) {
          // Every run could finish within the wait: none may say another run kept it out.
          EXPECT_NE(finding["code"], "gpu.other_run") << result.dump(1);
        }
        if (round.crash_percent == 0 && round.hang_percent == 0) {
          // The stand-in children's payloads are no GPU check's, so the checks judge them as
          // broken output; what matters is that each was run and got that far.
          EXPECT_NE(result["status"], "skip") << result.dump(1);
        }
      }
      for (const std::string& id : k_per_gpu) {
        EXPECT_EQ(results[id], round.gpus) << id;
      }
      for (const std::string& id : k_spanning) {
        EXPECT_EQ(results[id], 1) << id;
      }
    }
    fs::remove(scenario_file);
    if (::testing::Test::HasFailure()) {
      break; // one failing round says enough; its seed replays it
    }
  }
  std::printf("%zu runs in %d rounds; %zu waited for another run's turn; slowest %.1f s\n",
              runs_seen, rounds, runs_that_waited, std::chrono::duration<double>(slowest).count());
  EXPECT_GT(runs_that_waited, 0U) << "no run ever waited: the rounds did not overlap";
}

/// One run over two fake GPUs whose long-level work (the memory test) is `child`; a SIGINT at
/// 1.5 s and, when `twice`, another at 2 s. Returns the run and when it ended after the last
/// signal.
struct Interrupted {
  Started run;
  Clock::duration after_last_signal{};
  std::string out;
};

Interrupted interrupt_long_run(const std::string& child, bool twice) {
  FixtureTree tree;
  const std::string tag = fmt::format("interrupt{}{}", ::getpid(), twice ? "b" : "a");
  node_root(tree, 2, tag);
  const std::string scenario_file = tree.root() + ".scenario";
  std::ofstream(scenario_file) << fmt::format("gpu.count=2\ngpu.0.uuid=GPU-{0}-0\n"
                                              "gpu.1.uuid=GPU-{0}-1\n",
                                              tag);
  const std::map<std::string, std::string> env{{"PATH", "/usr/bin:/bin"},
                                               {"HOME", tree.root()},
                                               {"GPUCHECK_SYSROOT", tree.root()},
                                               {"FAKE_GPU_SCENARIO", scenario_file},
                                               {"LD_LIBRARY_PATH", GPUCHECK_FAKE_LIB_DIR},
                                               {"GPUCHECK_TEST_GPU_CHILD", child}};
  Interrupted result;
  result.run = start(
      {"--json", "--level", "long", "--duration", "1", "--only", "gpu.memtest", "--timeout", "120"},
      env, tree.root(), 0);
  // Under a sanitizer the run reaches its long work later.
  std::this_thread::sleep_until(result.run.started + 1500ms * k_sanitizer_slowdown);
  ::kill(result.run.pid, SIGINT);
  if (twice) {
    std::this_thread::sleep_until(result.run.started + 2000ms * k_sanitizer_slowdown);
    ::kill(result.run.pid, SIGINT);
  }
  const auto last = Clock::now();
  int status = 0;
  while (::waitpid(result.run.pid, &status, WNOHANG) == 0) {
    if (Clock::now() - last > 60s) {
      ::kill(result.run.pid, SIGKILL);
      ::waitpid(result.run.pid, &status, 0);
      break;
    }
    std::this_thread::sleep_for(5ms);
  }
  result.after_last_signal = Clock::now() - last;
  result.run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.out = slurp(result.run.out_path);
  fs::remove(scenario_file);
  return result;
}

// A first Ctrl-C lets a long work that ignores its stop finish its step (it keeps what it did);
// a second ends gpucheck at once, by the signal.
TEST(OverlappingRuns, ASecondInterruptQuitsAtOnce) {
  const Interrupted twice = interrupt_long_run("test-gated 5 60000 5 0", true);
  EXPECT_EQ(twice.run.exit_code, 128 + SIGINT);
  EXPECT_LT(twice.after_last_signal, 2s);
}

// The twin: one Ctrl-C, a long work that stops when told: the report of what ran is written
// and the exit code names the signal.
TEST(OverlappingRuns, OneInterruptWritesTheReport) {
  const Interrupted once = interrupt_long_run("test-gated 5 60000 5 0 stoppable", false);
  EXPECT_EQ(once.run.exit_code, 128 + SIGINT);
  EXPECT_LT(once.after_last_signal, 10s);
  const nlohmann::json report = nlohmann::json::parse(once.out, nullptr, false);
  ASSERT_FALSE(report.is_discarded()) << once.out;
  EXPECT_TRUE(report_schema().validate(report).empty());
}

} // namespace
} // namespace gpucheck::testing
