#include "child_dispatch/child_modes.hpp"

#include <sys/prctl.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>

#include "gpu/gpu_children.hpp"
#include "platform/probes_child.hpp"
#include "platform/python_child.hpp"
#include "process/child_process.hpp"
#include "protocol/messages.hpp"
#include "protocol/payloads.hpp"

namespace gpucheck::child_dispatch {

namespace {

// Test modes: they let the runner's own tests (and `gpucheck --child test-...` by hand) prove
// that a crash, a hang, garbage or an early exit become failures, not a broken report.
nlohmann::json test_ok(const std::vector<std::string>& args) {
  return nlohmann::json{{"ok", true}, {"args", args}};
}
nlohmann::json test_crash(const std::vector<std::string>&) {
  std::fputs("about to abort\n", stderr);
  std::abort();
}
nlohmann::json test_segv(const std::vector<std::string>&) {
  std::raise(SIGSEGV);
  return nullptr;
}
nlohmann::json test_hang(const std::vector<std::string>&) {
  for (;;) {
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
}
/// test-hang-ignore-term: ignores SIGTERM, says so with 'r' on its control channel (when it has
/// one: its owner can then arm the deadline, whatever the start-up took), and hangs.
nlohmann::json test_hang_ignore_term(const std::vector<std::string>& args) {
  std::signal(SIGTERM, SIG_IGN);
  process::control_send('r');
  return test_hang(args);
}
/// Writes `pid` to the file named by args[0], if any: whole or absent for its reader.
void write_pid_file(const std::vector<std::string>& args, pid_t pid) {
  if (args.empty()) {
    return;
  }
  const std::string partial = args[0] + ".partial";
  if (FILE* out = std::fopen(partial.c_str(), "w")) {
    std::fprintf(out, "%d\n", static_cast<int>(pid));
    std::fclose(out);
    std::rename(partial.c_str(), args[0].c_str());
  }
}

/// test-spawn-hang PIDFILE: starts a process of its own (as an interpreter's subprocess: no
/// parent-death signal), writes that grandchild's pid to PIDFILE, then hangs. Stopping the child
/// must end the grandchild too.
nlohmann::json test_spawn_hang(const std::vector<std::string>& args) {
  const pid_t grandchild = ::fork();
  if (grandchild == 0) {
    for (;;) {
      ::pause();
    }
  }
  write_pid_file(args, grandchild);
  return test_hang(args);
}
/// test-escape-hang PIDFILE: starts a process that leaves its process group (setsid) with the
/// child's output pipes open, writes its pid to PIDFILE, then hangs: killing the child's group
/// leaves that process holding the pipes, and the parent must still not wait for ever.
nlohmann::json test_escape_hang(const std::vector<std::string>& args) {
  const pid_t escaped = ::fork();
  if (escaped == 0) {
    ::setsid();
    for (;;) {
      ::pause();
    }
  }
  write_pid_file(args, escaped);
  return test_hang(args);
}

nlohmann::json test_exit(const std::vector<std::string>&) {
  std::_Exit(7);
}
nlohmann::json test_garbage(const std::vector<std::string>&) {
  static constexpr char k_garbage[] = "{not json";
  [[maybe_unused]] auto n = ::write(3, k_garbage, sizeof k_garbage - 1);
  std::_Exit(0);
}
/// test-lines N [crash|linger]: writes N result lines ({"line": i}), then aborts ("crash"), or
/// returns its last line and, with "linger", stays alive 2 s after closing its result.
nlohmann::json test_lines(const std::vector<std::string>& args) {
  const int n = args.empty() ? 0 : std::atoi(args[0].c_str());
  for (int i = 0; i < n; ++i) {
    process::write_result_line(nlohmann::json{{"line", i}});
  }
  const std::string then = args.size() > 1 ? args[1] : "";
  if (then == "crash") {
    std::abort();
  }
  if (then == "linger") {
    // Close the result and stay: as a GPU child whose exit (its context freed) is slow.
    const std::string last = nlohmann::json{{"last", true}}.dump() + "\n";
    [[maybe_unused]] auto w = ::write(3, last.data(), last.size());
    ::close(3);
    std::this_thread::sleep_for(std::chrono::seconds(2));
    std::_Exit(0);
  }
  return nlohmann::json{{"last", true}};
}
/// test-flood: writes to its result pipe without end (a child gone wrong); the parent must stop it.
nlohmann::json test_flood(const std::vector<std::string>&) {
  static const std::string k_chunk(1 << 16, 'x');
  for (;;) {
    if (::write(3, k_chunk.data(), k_chunk.size()) <= 0) {
      std::_Exit(0);
    }
  }
}

nlohmann::json test_big(const std::vector<std::string>&) {
  // Larger than a pipe buffer, to prove the parent drains while the child writes.
  return nlohmann::json{{"blob", std::string(1 << 20, 'x')}};
}

/// test-gated SETUP_MS WORK_MS [AFTER_MS [WARM_MS]]: wait for leave to set up, sleep (its
/// "context"), say the context is built, sleep WARM_MS (untimed preparation), wait at the gate,
/// sleep WORK_MS (its gated work), say it is done, sleep AFTER_MS (checking and teardown);
/// reports the monotonic times of each step, so tests can prove the gates open in order. A sixth
/// argument "noisy" also sends garbage and out-of-order messages on the control channel.
/// A trailing "works=a,b,c" argument makes test-gated stand for a shared child: it does each
/// work's gate, work and done in turn on its one "context", and writes each work's times as a
/// line of its result ({"work": NAME, ...}), as gpu-device does. With "cudnn" among them it has
/// cuDNN's lane, as gpu-device: a thread that says preparing once the context is built and
/// prepared "lane=MS" later (0 by default), which the copies' gates wait for.
namespace {
/// test-gated's arguments: the five times, "noisy", and the named options.
struct GatedOptions {
  std::vector<std::string> args;
  std::vector<std::string> works;
  int die_after = -1;     // "die=N": abort after N works (a shared child that crashes midway)
  bool stoppable = false; // "stoppable": the work ends early at the parent's stop (long works)
  int crash_percent = 0;  // "crash%=P": with P% chance, abort at a random step (stress tests)
  int hang_percent = 0;   // "hang%=P": with P% chance, hang at a random step
  int lane_ms = 0;        // "lane=MS": cuDNN's lane prepares this long

  explicit GatedOptions(const std::vector<std::string>& all_args) {
    for (const std::string& arg : all_args) {
      if (arg.starts_with("lane=")) {
        lane_ms = std::atoi(arg.c_str() + 5);
      } else if (arg.starts_with("crash%=")) {
        crash_percent = std::atoi(arg.c_str() + 7);
      } else if (arg.starts_with("hang%=")) {
        hang_percent = std::atoi(arg.c_str() + 6);
      } else if (arg == "stoppable") {
        stoppable = true;
      } else if (arg.starts_with("die=")) {
        die_after = std::atoi(arg.c_str() + 4);
      } else if (arg.starts_with("works=")) {
        const std::string list = arg.substr(6);
        for (size_t from = 0; from <= list.size();) {
          const size_t comma = std::min(list.find(',', from), list.size());
          works.push_back(list.substr(from, comma - from));
          from = comma + 1;
        }
      } else {
        args.push_back(arg);
      }
    }
  }
  [[nodiscard]] std::chrono::milliseconds ms(size_t i) const {
    return std::chrono::milliseconds(args.size() > i ? std::atoi(args[i].c_str()) : 0);
  }
  [[nodiscard]] bool noisy() const { return args.size() > 5 && args[5] == "noisy"; }
};

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// The gated work of one work of test-gated: sleeps WORK_MS (or until the parent's stop when
/// stoppable), pauses for the quiet host and works as long again when PAUSE_MS is set. Returns
/// when it resumed (-1: no pause) and whether it was stopped.
std::pair<int64_t, bool> gated_sleep(const GatedOptions& o) {
  bool stopped = false;
  if (o.stoppable) {
    const auto until = std::chrono::steady_clock::now() + o.ms(1);
    while (std::chrono::steady_clock::now() < until && !stopped) {
      stopped = protocol::gate::stop_requested();
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  } else {
    std::this_thread::sleep_for(o.ms(1));
  }
  int64_t resumed = -1;
  if (o.ms(4).count() != 0) { // pause for the quiet host, then work as long again
    protocol::gate::pause_for_quiet_host();
    resumed = now_ns();
    std::this_thread::sleep_for(o.ms(1));
  }
  return {resumed, stopped};
}

/// With "cudnn" among the works, cuDNN's lane as gpu-device has it: preparing now, prepared
/// lane_ms later on a thread of its own; else no thread.
std::thread start_lane(const GatedOptions& o) {
  if (std::find(o.works.begin(), o.works.end(), "cudnn") == o.works.end()) {
    return {};
  }
  process::write_result_line(
      {{"work", "cudnn"}, {"lane", std::string(protocol::k_lane_preparing)}});
  return std::thread([lane_ms = o.lane_ms] {
    std::this_thread::sleep_for(std::chrono::milliseconds(lane_ms));
    process::write_result_line(
        {{"work", "cudnn"}, {"lane", std::string(protocol::k_lane_prepared)}});
  });
}

/// The work or its child's last: work_done() while more works follow, else done() and then
/// `after_last` (its checking and teardown).
void say_done(bool more, std::chrono::milliseconds after_last = {}) {
  if (more) {
    protocol::gate::work_done();
  } else {
    protocol::gate::done();
    std::this_thread::sleep_for(after_last);
  }
}
} // namespace

nlohmann::json test_gated(const std::vector<std::string>& all_args) {
  const GatedOptions o(all_args);
  if (o.noisy()) {
    // Garbage and messages out of order: the parent must ignore them.
    for (const char byte : std::string("xZ\x01dr")) {
      process::control_send(byte);
    }
  }
  const int64_t started = now_ns(); // its process runs ("cuInit")
  // A misbehaving child at a random step: 0 before its setup, 1 after its context, 2 at work.
  std::minstd_rand random(static_cast<unsigned>(::getpid()) ^ static_cast<unsigned>(started));
  const int roll = static_cast<int>(random() % 100);
  const int bad_step = static_cast<int>(random() % 3);
  const auto misbehave = [&](int step) {
    if (step != bad_step) {
      return;
    }
    if (roll < o.crash_percent) {
      std::abort();
    }
    if (roll < o.crash_percent + o.hang_percent) {
      for (;;) {
        ::pause(); // until its deadline's SIGTERM
      }
    }
  };
  misbehave(0);
  protocol::gate::await_setup();
  const int64_t setup_began = now_ns();
  std::this_thread::sleep_for(o.ms(0));
  const int64_t context = now_ns();
  protocol::gate::context_built();
  misbehave(1);
  std::thread lane = start_lane(o);
  nlohmann::json times;
  const size_t count = std::max<size_t>(o.works.size(), 1);
  for (size_t w = 0; w < count; ++w) {
    if (static_cast<int>(w) == o.die_after) {
      std::abort();
    }
    const std::string work = w < o.works.size() ? o.works[w] : std::string();
    // As gpu-peers: the plan left the all-reduce out (GPUCHECK_NCCL_NOT_RUN), so its line says
    // why and it never reaches its gate.
    if (const char* not_run = std::getenv("GPUCHECK_NCCL_NOT_RUN");
        work == "nccl" && not_run != nullptr && *not_run != '\0') {
      process::write_result_line({{"work", work}, {"not_run", not_run}});
      say_done(w + 1 < count);
      continue;
    }
    std::this_thread::sleep_for(o.ms(3));
    const std::optional<protocol::Work> known = protocol::work_named(work);
    const auto alone = [&known](const gpu::WorkRunner& r) {
      return known && r.work == *known && (r.alone || r.lane != nullptr);
    };
    if (lane.joinable() &&
        std::any_of(gpu::work_runners().begin(), gpu::work_runners().end(), alone)) {
      lane.join(); // as gpu-device: nothing of the lane beside the copies
    }
    const int64_t ready = now_ns();
    protocol::gate::ready_and_wait();
    const int64_t began = now_ns();
    misbehave(2);
    if (o.noisy()) {
      process::control_send('c'); // a repeat after the go
    }
    const auto [resumed, stopped] = gated_sleep(o);
    const int64_t done = now_ns();
    say_done(w + 1 < count, o.ms(2));
    times = nlohmann::json{{"started_ns", started}, {"setup_began_ns", setup_began},
                           {"context_ns", context}, {"ready_ns", ready},
                           {"began_ns", began},     {"resumed_ns", resumed},
                           {"done_ns", done},       {"ended_ns", now_ns()},
                           {"stopped", stopped}};
    if (!o.works.empty()) {
      times["work"] = work;
      process::write_result_line(times);
    }
  }
  if (lane.joinable()) {
    lane.join();
  }
  return o.works.empty() ? times : nlohmann::json{{"timeline_ms", nlohmann::json::array()}};
}

constexpr ChildMode k_modes[] = {
    {"nvml", &platform::child_probe_nvml},
    {"cuda", &platform::child_probe_cuda},
    {"library", &platform::child_probe_library},
    {"cudnn", &platform::child_probe_cudnn},
    {"python", &platform::child_python},
    {"gpu-devices", &gpu::child_gpu_devices},
    {"gpu-census", &platform::child_gpu_census},
    {"gpu-device", &gpu::child_gpu_device},
    {"gpu-peers", &gpu::child_gpu_peers},
    {"test-ok", &test_ok},
    {"test-crash", &test_crash},
    {"test-segv", &test_segv},
    {"test-hang", &test_hang},
    {"test-hang-ignore-term", &test_hang_ignore_term},
    {"test-spawn-hang", &test_spawn_hang},
    {"test-escape-hang", &test_escape_hang},
    {"test-exit", &test_exit},
    {"test-garbage", &test_garbage},
    {"test-big", &test_big},
    {"test-flood", &test_flood},
    {"test-lines", &test_lines},
    {"test-gated", &test_gated},
};

void write_all(int fd, const std::string& text) {
  size_t off = 0;
  while (off < text.size()) {
    const ssize_t n = ::write(fd, text.data() + off, text.size() - off);
    if (n <= 0) {
      return;
    }
    off += static_cast<size_t>(n);
  }
}

} // namespace

const ChildMode* find_child_mode(std::string_view name) {
  for (const ChildMode& mode : k_modes) {
    if (mode.name == name) {
      return &mode;
    }
  }
  return nullptr;
}

bool is_child_invocation(int argc, char** argv) {
  return argc >= 3 && std::strcmp(argv[1], "--child") == 0;
}

int run_child_mode(int argc, char** argv) {
  // Die with the parent: a stuck child must never outlive gpucheck.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (const char* parent = std::getenv("GPUCHECK_PARENT_PID")) {
    if (std::to_string(::getppid()) != parent) {
      return 125;
    }
  }
  const ChildMode* mode = find_child_mode(argv[2]);
  const gpu::WorkRunner* work = gpu::runner_of_mode(argv[2]);
  if (mode == nullptr && work == nullptr) {
    std::fprintf(stderr, "gpucheck: unknown child mode '%s'\n", argv[2]);
    return 126;
  }
  std::vector<std::string> args(argv + 3, argv + argc);
  int fd = 3;
  if (const char* env_fd = std::getenv("GPUCHECK_RESULT_FD")) {
    fd = std::atoi(env_fd);
  }
  const nlohmann::json result = mode != nullptr              ? mode->handler(args)
                                : work->own_child != nullptr ? work->own_child(args)
                                                             : gpu::run_single_work(args, *work);
  write_all(fd, result.dump() + "\n"); // a line: the last of a result_lines child's
  ::close(fd);
  std::fflush(nullptr);
  // _exit: NVIDIA libraries' static destructors have crashed at exit before; the result is out.
  ::_exit(0);
}

} // namespace gpucheck::child_dispatch
