#include "probes/run_capture.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "probes/path_trust.hpp"

extern char** environ; // NOLINT(readability-redundant-declaration)

namespace gpucheck::probes {

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
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    return std::nullopt;
  }
  posix_spawn_file_actions_t actions;
  ::posix_spawn_file_actions_init(&actions);
  ::posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  ::posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  ::posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  std::vector<char*> args;
  for (const std::string& arg : argv) {
    args.push_back(const_cast<char*>(arg.c_str()));
  }
  args.push_back(nullptr);
  // A process group of its own: on timeout the whole group is killed, so a helper's own
  // children (a compiler driver's) do not outlive it (issue 21, item 11).
  posix_spawnattr_t attributes;
  ::posix_spawnattr_init(&attributes);
  ::posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
  ::posix_spawnattr_setpgroup(&attributes, 0);
  pid_t pid = 0;
  const int spawned =
      ::posix_spawn(&pid, argv[0].c_str(), &actions, &attributes, args.data(), environ);
  ::posix_spawnattr_destroy(&attributes);
  ::posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  if (spawned != 0) {
    ::close(fds[0]);
    return std::nullopt;
  }

  std::string output;
  bool timed_out = false;
  const auto end = std::chrono::steady_clock::now() + deadline;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        end - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd pfd{fds[0], POLLIN, 0};
    const int ready = ::poll(&pfd, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) {
      continue;
    }
    if (ready <= 0) {
      timed_out = ready == 0;
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
    if (std::chrono::steady_clock::now() >= end) {
      timed_out = true;
      break;
    }
    ::usleep(2000);
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
