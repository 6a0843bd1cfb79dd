#pragma once
/// The driver's objects a GPU child uses, each released by its destructor: device and pinned
/// host memory, streams and events, and the time between two events.
#include <cuda.h>

#include <cstdint>
#include <optional>

#include "gpu/session.hpp"
#include "platform/cuda_api.hpp"

namespace gpucheck::gpu {

/// cuMemAlloc'd device memory (plain allocations only, never managed memory).
class DeviceBuffer {
public:
  DeviceBuffer(const DeviceSession& session, uint64_t bytes);
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer();
  [[nodiscard]] CUdeviceptr get() const { return m_ptr; }
  [[nodiscard]] uint64_t bytes() const { return m_bytes; }
  /// A raw pointer for libraries that take void* (cuDNN).
  [[nodiscard]] void* raw() const { return reinterpret_cast<void*>(m_ptr); } // NOLINT

private:
  const CudaApi* m_api;
  CUdeviceptr m_ptr = 0;
  uint64_t m_bytes = 0;
};

/// cuMemHostAlloc'd pinned host memory.
class PinnedBuffer {
public:
  PinnedBuffer(const DeviceSession& session, uint64_t bytes, unsigned flags);
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  ~PinnedBuffer();
  [[nodiscard]] void* get() const { return m_ptr; }
  template <typename T> [[nodiscard]] T* as() const { return static_cast<T*>(m_ptr); }
  [[nodiscard]] uint64_t bytes() const { return m_bytes; }

private:
  const CudaApi* m_api;
  void* m_ptr = nullptr;
  uint64_t m_bytes = 0;
};

class Stream {
public:
  /// cuStreamCreateWithPriority when `priority` is set, else cuStreamCreate; non-blocking.
  explicit Stream(const DeviceSession& session, std::optional<int> priority = std::nullopt);
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  ~Stream();
  [[nodiscard]] CUstream get() const { return m_stream; }
  void synchronize() const;

private:
  const CudaApi* m_api;
  CUstream m_stream = nullptr;
};

class Event {
public:
  explicit Event(const DeviceSession& session);
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  ~Event();
  [[nodiscard]] CUevent get() const { return m_event; }
  void record(CUstream stream) const;

private:
  const CudaApi* m_api;
  CUevent m_event = nullptr;
};

/// Milliseconds between two recorded events (after synchronising on `end`).
double elapsed_ms(const CudaApi& api, const Event& start, const Event& end);

} // namespace gpucheck::gpu
