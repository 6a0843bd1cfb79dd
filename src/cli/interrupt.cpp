#include "cli/interrupt.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>

namespace gpucheck::cli {

namespace {
// The write end of the watch's pipe, for the handler (async-signal-safe: one write()).
std::atomic<int> g_write_fd{-1};

void on_signal(int signo) {
  const int saved = errno;
  const int fd = g_write_fd.load();
  if (fd >= 0) {
    const char byte = static_cast<char>(signo);
    [[maybe_unused]] const ssize_t n = ::write(fd, &byte, 1);
  }
  errno = saved;
}

/// The signals that stop a run cleanly: Ctrl-C, kill, the terminal going away (HUP) and quit
/// (QUIT, Ctrl-backslash), which by default would end gpucheck with its children still running.
constexpr int k_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

void set_handler(int signo, void (*handler)(int)) {
  struct sigaction action {};
  action.sa_handler = handler;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  ::sigaction(signo, &action, nullptr);
}
} // namespace

InterruptWatch::InterruptWatch(std::function<void(int)> on_signal_fn)
    : m_on_signal(std::move(on_signal_fn)) {
  if (::pipe2(m_pipe, O_CLOEXEC) != 0) {
    m_pipe[0] = m_pipe[1] = -1;
    return; // no watch: the signals keep their default action
  }
  g_write_fd.store(m_pipe[1]);
  m_thread = std::thread([this] {
    char byte = 0;
    for (;;) {
      const ssize_t n = ::read(m_pipe[0], &byte, 1);
      if (n < 0 && errno == EINTR) {
        continue;
      }
      if (n != 1 || byte == 0) {
        return; // closed, or the destructor's stop byte
      }
      // A second signal ends gpucheck at once.
      for (const int signo : k_signals) {
        set_handler(signo, SIG_DFL);
      }
      m_signal.store(static_cast<unsigned char>(byte));
      if (m_on_signal) {
        m_on_signal(static_cast<unsigned char>(byte));
      }
      return;
    }
  });
  for (const int signo : k_signals) {
    set_handler(signo, &on_signal);
  }
}

InterruptWatch::~InterruptWatch() {
  if (m_pipe[1] < 0) {
    return;
  }
  if (m_signal.load() == 0) {
    for (const int signo : k_signals) {
      set_handler(signo, SIG_DFL);
    }
  }
  g_write_fd.store(-1);
  const char stop = 0;
  [[maybe_unused]] const ssize_t n = ::write(m_pipe[1], &stop, 1);
  if (m_thread.joinable()) {
    m_thread.join();
  }
  ::close(m_pipe[0]);
  ::close(m_pipe[1]);
}

} // namespace gpucheck::cli
