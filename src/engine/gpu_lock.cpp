#include "engine/gpu_lock.hpp"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <thread>
#include <utility>

namespace gpucheck::engine {

namespace {
constexpr auto k_retry = std::chrono::milliseconds(10);

/// The abstract address of the lock `name`, and its length for bind() and connect().
std::pair<sockaddr_un, socklen_t> lock_address(const std::string& name) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  // Abstract namespace: the name starts with a NUL byte and is not NUL-terminated.
  const std::string full = "gpucheck/gpu/" + name.substr(0, sizeof address.sun_path - 16);
  std::memcpy(address.sun_path + 1, full.data(), full.size());
  return {address, static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + full.size())};
}
} // namespace

GpuLock::GpuLock(GpuLock&& other) noexcept
    : m_fd(std::exchange(other.m_fd, -1)), m_busy(other.m_busy), m_error(std::move(other.m_error)) {
}

GpuLock& GpuLock::operator=(GpuLock&& other) noexcept {
  if (this != &other) {
    release();
    m_fd = std::exchange(other.m_fd, -1);
    m_busy = other.m_busy;
    m_error = std::move(other.m_error);
  }
  return *this;
}

GpuLock::~GpuLock() {
  release();
}

void GpuLock::release() {
  if (m_fd >= 0) {
    ::close(m_fd);
    m_fd = -1;
  }
}

GpuLock GpuLock::try_acquire(const std::string& name) {
  GpuLock lock;
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    lock.m_error = fmt::format("socket: {}", std::strerror(errno));
    return lock;
  }
  const auto [address, length] = lock_address(name);
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&address), length) != 0) { // NOLINT
    lock.m_busy = errno == EADDRINUSE;
    lock.m_error = lock.m_busy ? "held by another gpucheck run on this host"
                               : fmt::format("bind: {}", std::strerror(errno));
    ::close(fd);
    return lock;
  }
  // Listening (never accepting) lets a waiting run ask the kernel who holds the turn; a holder
  // that cannot listen still holds it.
  (void)::listen(fd, SOMAXCONN);
  lock.m_fd = fd;
  return lock;
}

GpuLock GpuLock::acquire(const std::string& name, std::chrono::milliseconds limit,
                         const std::atomic<bool>* stop) {
  const auto until = std::chrono::steady_clock::now() + limit;
  for (;;) {
    GpuLock lock = try_acquire(name);
    if (lock.held() || !lock.busy() || std::chrono::steady_clock::now() >= until ||
        (stop != nullptr && stop->load())) {
      return lock;
    }
    std::this_thread::sleep_for(k_retry);
  }
}

std::optional<pid_t> GpuLock::holder(const std::string& name) {
  // Non-blocking: a full backlog answers EAGAIN at once instead of waiting for an accept() that
  // never comes.
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) {
    return std::nullopt;
  }
  const auto [address, length] = lock_address(name);
  std::optional<pid_t> pid;
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&address), length) == 0) { // NOLINT
    ucred credentials{};
    socklen_t size = sizeof credentials;
    if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &credentials, &size) == 0) {
      pid = credentials.pid;
    }
  }
  ::close(fd);
  return pid;
}

} // namespace gpucheck::engine
