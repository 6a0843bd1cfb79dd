#include "engine/gpu_lock.hpp"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <thread>
#include <utility>

namespace gpucheck::engine {

namespace {
constexpr auto k_retry = std::chrono::milliseconds(10);
}

GpuLock::GpuLock(GpuLock&& other) noexcept
    : m_fd(std::exchange(other.m_fd, -1)), m_error(std::move(other.m_error)) {}

GpuLock& GpuLock::operator=(GpuLock&& other) noexcept {
  if (this != &other) {
    release();
    m_fd = std::exchange(other.m_fd, -1);
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

GpuLock GpuLock::try_acquire(const std::string& uuid) {
  GpuLock lock;
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    lock.m_error = fmt::format("socket: {}", std::strerror(errno));
    return lock;
  }
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  // Abstract namespace: the name starts with a NUL byte and is not NUL-terminated.
  const std::string name = "gpucheck/gpu/" + uuid.substr(0, sizeof address.sun_path - 16);
  std::memcpy(address.sun_path + 1, name.data(), name.size());
  const auto length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&address), length) != 0) { // NOLINT
    lock.m_error = errno == EADDRINUSE ? "held by another gpucheck run on this host"
                                       : fmt::format("bind: {}", std::strerror(errno));
    ::close(fd);
    return lock;
  }
  lock.m_fd = fd;
  return lock;
}

GpuLock GpuLock::acquire(const std::string& uuid, std::chrono::milliseconds limit,
                         const std::atomic<bool>* stop) {
  const auto until = std::chrono::steady_clock::now() + limit;
  for (;;) {
    GpuLock lock = try_acquire(uuid);
    if (lock.held() || std::chrono::steady_clock::now() >= until ||
        (stop != nullptr && stop->load()) || lock.error().find("another") == std::string::npos) {
      return lock;
    }
    std::this_thread::sleep_for(k_retry);
  }
}

} // namespace gpucheck::engine
