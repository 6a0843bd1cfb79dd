#pragma once
/// Turns per GPU between gpucheck runs on one host: a lock named by the GPU's UUID that any user
/// can take and that dies with its holder. It is a name in Linux's abstract Unix-socket
/// namespace ("\0gpucheck/gpu/<uuid>"): no file is created, so there is nothing for another user
/// to pre-create, replace or link, and a crashed run leaves nothing behind. The holder listens on
/// it (and never accepts), so a waiting run can connect and learn from the kernel (SO_PEERCRED)
/// which process holds the turn. Runs in separate network namespaces (separate containers) do not
/// see each other's locks; the contention check over the GPU's process list covers them.

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <optional>
#include <string>

namespace gpucheck::engine {

class GpuLock {
public:
  GpuLock() = default;
  GpuLock(GpuLock&& other) noexcept;
  GpuLock& operator=(GpuLock&& other) noexcept;
  GpuLock(const GpuLock&) = delete;
  GpuLock& operator=(const GpuLock&) = delete;
  ~GpuLock();

  /// Try once, without waiting. The lock is held while the returned object lives.
  static GpuLock try_acquire(const std::string& name);
  /// Try until `limit` has passed (or `stop` is set), every few milliseconds.
  static GpuLock acquire(const std::string& name, std::chrono::milliseconds limit,
                         const std::atomic<bool>* stop = nullptr);
  /// The process that holds the lock `name` now, as the kernel tells it: nullopt when nobody
  /// holds it or the holder cannot be asked; pid 0 when it runs in a PID namespace this process
  /// does not see (another container on the host's network).
  static std::optional<pid_t> holder(const std::string& name);

  [[nodiscard]] bool held() const { return m_fd >= 0; }
  /// Why it is not held ("held by another gpucheck run", or the socket error).
  [[nodiscard]] const std::string& error() const { return m_error; }
  /// Whether it is not held because another process holds it (not a socket error).
  [[nodiscard]] bool busy() const { return m_busy; }
  void release();

private:
  int m_fd = -1;
  bool m_busy = false;
  std::string m_error;
};

} // namespace gpucheck::engine
