#include "process/keeper.hpp"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdint>

namespace gpucheck::process {

namespace {
std::atomic<int> g_keeper_fd{-1}; ///< the pipe's write end in gpucheck; -1 without a keeper

/// More groups than gpucheck ever has at once (a child per GPU and work, 1,024 GPUs at most).
constexpr size_t k_max_groups = 8192;

/// Every descriptor from `first` on is closed (close_range where the kernel has it).
void close_from(int first) {
#ifdef SYS_close_range
  if (::syscall(SYS_close_range, static_cast<unsigned>(first), ~0U, 0U) == 0) {
    return;
  }
#endif
  rlimit limit{};
  const rlim_t most = ::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY
                          ? limit.rlim_cur
                          : 65536;
  for (rlim_t fd = static_cast<rlim_t>(first); fd < most && fd < 65536; ++fd) {
    ::close(static_cast<int>(fd));
  }
}

/// The keeper's life: read groups to watch (+pid) and to forget (-pid) until the pipe ends,
/// then kill those still watched.
[[noreturn]] void keep(int fd) {
  std::array<pid_t, k_max_groups> groups{};
  size_t count = 0;
  std::array<int32_t, 256> records{};
  size_t held = 0; // bytes of a record split across reads (writes are whole records)
  for (;;) {
    auto* bytes = reinterpret_cast<char*>(records.data());
    const ssize_t n = ::read(fd, bytes + held, sizeof records - held);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      break;
    }
    held += static_cast<size_t>(n);
    const size_t whole = held / sizeof(int32_t);
    for (size_t i = 0; i < whole; ++i) {
      const int32_t record = records[i];
      if (record > 0 && count < groups.size()) {
        groups[count++] = record;
      } else if (record < 0) {
        for (size_t g = 0; g < count; ++g) {
          if (groups[g] == -record) {
            groups[g] = groups[--count];
            break;
          }
        }
      }
    }
    held -= whole * sizeof(int32_t);
    if (held > 0) {
      auto* first = reinterpret_cast<char*>(&records[whole]);
      for (size_t b = 0; b < held; ++b) {
        bytes[b] = first[b];
      }
    }
  }
  for (size_t g = 0; g < count; ++g) {
    ::kill(-groups[g], SIGKILL);
  }
  ::_exit(0);
}

void send(int32_t record) {
  const int fd = g_keeper_fd.load();
  if (fd < 0) {
    return;
  }
  // Non-blocking and best effort: a keeper that stopped reading must not stop gpucheck.
  ssize_t n = 0;
  do {
    n = ::write(fd, &record, sizeof record);
  } while (n < 0 && errno == EINTR);
}
} // namespace

void start_keeper() {
  if (g_keeper_fd.load() >= 0) {
    return;
  }
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    return;
  }
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return;
  }
  if (pid == 0) {
    // A group of its own, deaf to the signals that end gpucheck (a terminal's, a pkill by
    // name): it ends when gpucheck's end closes the pipe. It holds nothing of gpucheck's (its
    // outputs, a pipe a reader waits on) but the pipe's read end.
    ::setpgid(0, 0);
    for (const int signo : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGTSTP, SIGTTIN, SIGTTOU}) {
      ::signal(signo, SIG_IGN);
    }
    if (fds[0] != 3 && ::dup2(fds[0], 3) < 0) {
      ::_exit(0);
    }
    close_from(4);
    const int null = ::open("/dev/null", O_RDWR | O_CLOEXEC);
    for (int std_fd = 0; std_fd < 3 && null >= 0; ++std_fd) {
      ::dup2(null, std_fd);
    }
    keep(3);
  }
  ::close(fds[0]);
  ::fcntl(fds[1], F_SETFL, O_NONBLOCK);
  g_keeper_fd.store(fds[1]);
}

void keeper_watch(pid_t group) {
  if (group > 0) {
    send(static_cast<int32_t>(group));
  }
}

void keeper_forget(pid_t group) {
  if (group > 0) {
    send(-static_cast<int32_t>(group));
  }
}

pid_t reap_leader(pid_t leader, int* status) {
  siginfo_t info{};
  int rc = 0;
  do {
    rc = ::waitid(P_PID, static_cast<id_t>(leader), &info, WEXITED | WNOHANG | WNOWAIT);
  } while (rc < 0 && errno == EINTR);
  if (rc < 0) {
    return -1;
  }
  if (info.si_pid != leader) {
    return 0;
  }
  ::kill(-leader, SIGKILL); // the zombie still holds the group's number
  pid_t done = 0;
  do {
    done = ::waitpid(leader, status, WNOHANG);
  } while (done < 0 && errno == EINTR);
  if (done == leader) {
    keeper_forget(leader);
  }
  return done;
}

} // namespace gpucheck::process
