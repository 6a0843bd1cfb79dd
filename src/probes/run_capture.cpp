#include "probes/run_capture.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <utility>

#include "probes/path_trust.hpp"
#include "process/child_process.hpp"
#include "process/keeper.hpp"

extern char** environ; // NOLINT(readability-redundant-declaration)

namespace gpucheck::probes {

namespace {
/// How often a helper's wait looks for an interrupt.
constexpr int64_t k_poll_slice_ms = 50;
/// Between the forwarded signal and SIGKILL.
constexpr int k_interrupt_grace_ms = 200;
/// How long a killed program is waited for before it is left to init.
constexpr std::chrono::milliseconds k_reap_after_kill{1000};
} // namespace

namespace {
/// Fork and exec the helper in a process group of its own, its stdout (and stderr when asked)
/// on `out_fd`; -1 when fork failed.
pid_t start_helper(const std::vector<std::string>& argv, const CaptureOptions& options,
                   int out_fd) {
  // Built before fork: between fork and exec only async-signal-safe calls are made.
  std::vector<char*> args;
  for (const std::string& arg : argv) {
    args.push_back(const_cast<char*>(arg.c_str()));
  }
  args.push_back(nullptr);
  std::vector<char*> env;
  if (options.environment) {
    for (const std::string& entry : *options.environment) {
      env.push_back(const_cast<char*>(entry.c_str()));
    }
    env.push_back(nullptr);
  }
  char** const envp = options.environment ? env.data() : environ;
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid != 0) {
    return pid;
  }
  // A process group of its own: on timeout or a signal the whole group is killed, so a
  // helper's own children (a compiler driver's) do not outlive it; and it dies with gpucheck.
  ::setpgid(0, 0);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  struct sigaction default_action {}; // what gpucheck ignores (SIGPIPE, SIGXFSZ), back
  default_action.sa_handler = SIG_DFL;
  ::sigaction(SIGPIPE, &default_action, nullptr);
  ::sigaction(SIGXFSZ, &default_action, nullptr);
  if (::getppid() != parent) {
    ::_exit(127); // gpucheck died before the line above
  }
  const int in = ::open("/dev/null", O_RDONLY);
  if (in >= 0) {
    ::dup2(in, STDIN_FILENO);
  }
  if (options.with_stderr) {
    ::dup2(out_fd, STDERR_FILENO);
  } else if (const int err = ::open("/dev/null", O_WRONLY); err >= 0) {
    ::dup2(err, STDERR_FILENO);
  }
  ::dup2(out_fd, STDOUT_FILENO);
  ::execve(argv[0].c_str(), args.data(), envp);
  ::_exit(127);
}

/// How reading a helper's output ended.
struct ReadEnd {
  bool timed_out = false; ///< the deadline passed, or gpucheck was interrupted
  bool flooded = false;   ///< more than max_bytes with kill_at_cap
  int interrupted = 0;    ///< the signal that interrupted gpucheck, if one did
};

/// Read `fd` into `output` until EOF, the deadline, an interrupt or a flood.
ReadEnd read_output(int fd, std::chrono::steady_clock::time_point end,
                    const CaptureOptions& options, std::string& output) {
  ReadEnd r;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        end - std::chrono::steady_clock::now());
    r.interrupted = process::children_interrupted();
    if (left.count() <= 0 || r.interrupted != 0) {
      r.timed_out = true;
      return r;
    }
    // In slices, so that an interrupt (process::interrupt_children) ends it promptly.
    pollfd pfd{fd, POLLIN, 0};
    const int ready =
        ::poll(&pfd, 1, static_cast<int>(std::min<int64_t>(left.count(), k_poll_slice_ms)));
    if ((ready < 0 && errno == EINTR) || ready == 0) {
      continue;
    }
    if (ready < 0) {
      return r;
    }
    char buffer[4096];
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      return r; // EOF: the program closed stdout (normally by exiting)
    }
    if (output.size() < options.max_bytes) {
      output.append(buffer, std::min(static_cast<size_t>(n), options.max_bytes - output.size()));
    } else if (options.kill_at_cap) {
      r.flooded = true;
      return r;
    }
  }
}

/// Reap the helper `pid` within the deadline (a program may close stdout and keep running);
/// past it, or on an interrupt (forwarded to its group first), kill its group and wait a
/// bounded time. Whether it was reaped; its wait status in `status`.
bool reap_helper(pid_t pid, std::chrono::steady_clock::time_point end, ReadEnd& r, int& status) {
  bool reaped = false;
  while (!r.timed_out && !r.flooded && !reaped) {
    const pid_t done = process::reap_leader(pid, &status);
    if (done == pid || (done < 0 && errno != EINTR)) {
      reaped = done == pid;
      break;
    }
    r.interrupted = process::children_interrupted();
    if (std::chrono::steady_clock::now() >= end || r.interrupted != 0) {
      r.timed_out = true;
      break;
    }
    ::usleep(2000);
  }
  if (!reaped && r.interrupted != 0) {
    // gpucheck was interrupted: the helper's group gets the same signal first.
    ::kill(-pid, r.interrupted == SIGQUIT ? SIGTERM : r.interrupted); // no core dumps
    for (int i = 0; i < k_interrupt_grace_ms / 2; ++i) {
      if (process::reap_leader(pid, &status) == pid) {
        reaped = true;
        break;
      }
      ::usleep(2000);
    }
    ::kill(-pid, SIGKILL); // its group: what it started may still run
  }
  if (reaped) {
    return true;
  }
  ::kill(-pid, SIGKILL);
  // Bounded: a process in uninterruptible sleep (a driver call on a hung GPU) ignores even
  // SIGKILL until the kernel lets it go, and gpucheck must still finish its report.
  const auto give_up = std::chrono::steady_clock::now() + k_reap_after_kill;
  for (;;) {
    const pid_t done = process::reap_leader(pid, &status);
    if (done == pid || (done < 0 && errno != EINTR)) {
      return done == pid;
    }
    if (std::chrono::steady_clock::now() >= give_up) {
      return false;
    }
    ::usleep(2000);
  }
}

/// How the helper ended, from how its reading ended and its wait status.
void conclude(Capture& capture, const ReadEnd& r, bool reaped, int status) {
  if (r.interrupted != 0) {
    capture.end = CaptureEnd::interrupted;
  } else if (r.flooded) {
    capture.end = CaptureEnd::flooded;
  } else if (r.timed_out || !reaped) {
    capture.end = CaptureEnd::timed_out;
  } else if (WIFEXITED(status)) {
    capture.end = CaptureEnd::exited;
    capture.status = WEXITSTATUS(status);
    if (capture.status == 127 && capture.output.empty()) {
      capture.end = CaptureEnd::not_started; // exec failed (or the program says so itself)
    }
  } else {
    capture.end = CaptureEnd::signalled;
    capture.status = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  }
}
} // namespace

Capture run_capture_detailed(const std::vector<std::string>& argv, const CaptureOptions& options) {
  Capture capture;
  if (argv.empty()) {
    return capture;
  }
  // The last guard of the root policy (path_trust.hpp): callers that can say why in the report
  // check first; here a program another user could have replaced is simply not run.
  if (root_policy_applies() && untrusted_reason(Sysroot("/"), argv[0], ::geteuid())) {
    capture.end = CaptureEnd::refused;
    return capture;
  }
  if (process::children_interrupted() != 0) {
    capture.end = CaptureEnd::interrupted; // the run was interrupted: nothing new starts
    return capture;
  }
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    return capture;
  }
  const pid_t pid = start_helper(argv, options, fds[1]);
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return capture;
  }
  ::setpgid(pid, pid); // also from the parent, to close the race with an early kill
  process::keeper_watch(pid);
  ::close(fds[1]);
  const auto end = std::chrono::steady_clock::now() + options.deadline;
  ReadEnd r = read_output(fds[0], end, options, capture.output);
  ::close(fds[0]);
  int status = 0;
  const bool reaped = reap_helper(pid, end, r, status);
  capture.unreaped = !reaped;
  conclude(capture, r, reaped, status);
  return capture;
}

std::optional<std::string> run_capture(const std::vector<std::string>& argv,
                                       std::chrono::milliseconds deadline, size_t max_bytes) {
  CaptureOptions options;
  options.deadline = deadline;
  options.max_bytes = max_bytes;
  Capture capture = run_capture_detailed(argv, options);
  if (capture.end != CaptureEnd::exited || capture.status != 0) {
    return std::nullopt;
  }
  return std::move(capture.output);
}

} // namespace gpucheck::probes
