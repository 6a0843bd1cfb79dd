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

#include "platform/child_process.hpp"
#include "probes/path_trust.hpp"

extern char** environ; // NOLINT(readability-redundant-declaration)

namespace gpucheck::probes {

namespace {
/// How often a helper's wait looks for an interrupt.
constexpr int64_t k_poll_slice_ms = 50;
/// Between the forwarded signal and SIGKILL.
constexpr int k_interrupt_grace_ms = 200;
} // namespace

std::optional<std::string> run_capture(const std::vector<std::string>& argv,
                                       std::chrono::milliseconds deadline, size_t max_bytes) {
  if (argv.empty()) {
    return std::nullopt;
  }
  // The last guard of the root policy (path_trust.hpp): callers that can say why in the report
  // check first; here a program another user could have replaced is simply not run.
  if (root_policy_applies() && untrusted_reason(Sysroot("/"), argv[0], ::geteuid())) {
    return std::nullopt;
  }
  if (platform::children_interrupted() != 0) {
    return std::nullopt; // the run was interrupted: nothing new starts
  }
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    return std::nullopt;
  }
  // Built before fork: between fork and exec only async-signal-safe calls are made.
  std::vector<char*> args;
  for (const std::string& arg : argv) {
    args.push_back(const_cast<char*>(arg.c_str()));
  }
  args.push_back(nullptr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return std::nullopt;
  }
  if (pid == 0) {
    // A process group of its own: on timeout or a signal the whole group is killed, so a
    // helper's own children (a compiler driver's) do not outlive it; and it dies with gpucheck
    // (issue 21, item 11).
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) {
      ::_exit(127); // gpucheck died before the line above
    }
    const int in = ::open("/dev/null", O_RDONLY);
    const int err = ::open("/dev/null", O_WRONLY);
    if (in >= 0) {
      ::dup2(in, STDIN_FILENO);
    }
    if (err >= 0) {
      ::dup2(err, STDERR_FILENO);
    }
    ::dup2(fds[1], STDOUT_FILENO);
    ::execve(argv[0].c_str(), args.data(), environ);
    ::_exit(127);
  }
  ::setpgid(pid, pid); // also from the parent, to close the race with an early kill
  ::close(fds[1]);

  std::string output;
  bool timed_out = false;
  int interrupted = 0;
  const auto end = std::chrono::steady_clock::now() + deadline;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        end - std::chrono::steady_clock::now());
    interrupted = platform::children_interrupted();
    if (left.count() <= 0 || interrupted != 0) {
      timed_out = true;
      break;
    }
    // In slices, so that an interrupt (platform::interrupt_children) ends it promptly.
    pollfd pfd{fds[0], POLLIN, 0};
    const int ready =
        ::poll(&pfd, 1, static_cast<int>(std::min<int64_t>(left.count(), k_poll_slice_ms)));
    if (ready < 0 && errno == EINTR) {
      continue;
    }
    if (ready == 0) {
      continue;
    }
    if (ready < 0) {
      break;
    }
    char buffer[4096];
    const ssize_t n = ::read(fds[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      break; // EOF: the program closed stdout (normally by exiting)
    }
    if (output.size() < max_bytes) {
      output.append(buffer, std::min(static_cast<size_t>(n), max_bytes - output.size()));
    }
  }
  ::close(fds[0]);
  // Reap within the same deadline: a program may close stdout and keep running.
  int status = 0;
  bool reaped = false;
  while (!timed_out && !reaped) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid || (done < 0 && errno != EINTR)) {
      reaped = done == pid;
      break;
    }
    interrupted = platform::children_interrupted();
    if (std::chrono::steady_clock::now() >= end || interrupted != 0) {
      timed_out = true;
      break;
    }
    ::usleep(2000);
  }
  if (!reaped && interrupted != 0) {
    // gpucheck was interrupted: the helper's group gets the same signal first.
    ::kill(-pid, interrupted);
    for (int i = 0; i < k_interrupt_grace_ms / 2; ++i) {
      const pid_t done = ::waitpid(pid, &status, WNOHANG);
      if (done == pid) {
        reaped = true;
        break;
      }
      ::usleep(2000);
    }
    ::kill(-pid, SIGKILL); // its group: what it started may still run
  }
  if (!reaped) {
    ::kill(-pid, SIGKILL);
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  if (timed_out || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return std::nullopt;
  }
  return output;
}

} // namespace gpucheck::probes
