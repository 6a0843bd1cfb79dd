#include "gpu/driver_objects.hpp"

#include "gpu/cuda_call.hpp"

namespace gpucheck::gpu {

DeviceBuffer::DeviceBuffer(const DeviceSession& session, uint64_t bytes)
    : m_api(&session.api()), m_bytes(bytes) {
  GPUCHECK_CU(*m_api, cuMemAlloc, &m_ptr, static_cast<size_t>(bytes));
}

DeviceBuffer::~DeviceBuffer() {
  if (m_ptr != 0 && m_api->cuMemFree != nullptr) {
    m_api->cuMemFree(m_ptr);
  }
}

PinnedBuffer::PinnedBuffer(const DeviceSession& session, uint64_t bytes, unsigned flags)
    : m_api(&session.api()), m_bytes(bytes) {
  GPUCHECK_CU(*m_api, cuMemHostAlloc, &m_ptr, static_cast<size_t>(bytes), flags);
}

PinnedBuffer::~PinnedBuffer() {
  if (m_ptr != nullptr && m_api->cuMemFreeHost != nullptr) {
    m_api->cuMemFreeHost(m_ptr);
  }
}

Stream::Stream(const DeviceSession& session, std::optional<int> priority) : m_api(&session.api()) {
  if (priority) {
    GPUCHECK_CU(*m_api, cuStreamCreateWithPriority, &m_stream,
                static_cast<unsigned>(CU_STREAM_NON_BLOCKING), *priority);
  } else {
    GPUCHECK_CU(*m_api, cuStreamCreate, &m_stream, static_cast<unsigned>(CU_STREAM_NON_BLOCKING));
  }
}

Stream::~Stream() {
  if (m_stream != nullptr && m_api->cuStreamDestroy != nullptr) {
    m_api->cuStreamDestroy(m_stream);
  }
}

void Stream::synchronize() const {
  GPUCHECK_CU(*m_api, cuStreamSynchronize, m_stream);
}

Event::Event(const DeviceSession& session) : m_api(&session.api()) {
  GPUCHECK_CU(*m_api, cuEventCreate, &m_event, static_cast<unsigned>(CU_EVENT_DEFAULT));
}

Event::~Event() {
  if (m_event != nullptr && m_api->cuEventDestroy != nullptr) {
    m_api->cuEventDestroy(m_event);
  }
}

void Event::record(CUstream stream) const {
  GPUCHECK_CU(*m_api, cuEventRecord, m_event, stream);
}

double elapsed_ms(const CudaApi& api, const Event& start, const Event& end) {
  GPUCHECK_CU(api, cuEventSynchronize, end.get());
  float ms = 0.0F;
  GPUCHECK_CU(api, cuEventElapsedTime, &ms, start.get(), end.get());
  return ms;
}

} // namespace gpucheck::gpu
