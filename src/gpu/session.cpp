#include "gpu/session.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "gpu/child.hpp"
#include "gpu/cuda_call.hpp"
#include "protocol/messages.hpp"

namespace gpucheck::gpu {

namespace {
constexpr uint64_t k_budget_cap_bytes = 1ULL << 30;
} // namespace

QuietGate::Step::Step(QuietGate& gate) : m_gate(gate) {
  std::unique_lock<std::mutex> guard(m_gate.m_lock);
  m_gate.m_changed.wait(guard, [this] { return m_gate.m_quiets == 0; });
  ++m_gate.m_steps;
}

QuietGate::Step::~Step() {
  {
    const std::lock_guard<std::mutex> guard(m_gate.m_lock);
    --m_gate.m_steps;
  }
  m_gate.m_changed.notify_all();
}

QuietGate::Quiet::Quiet(QuietGate& gate) : m_gate(gate) {
  std::unique_lock<std::mutex> guard(m_gate.m_lock);
  ++m_gate.m_quiets;
  m_gate.m_changed.wait(guard, [this] { return m_gate.m_steps == 0; });
}

QuietGate::Quiet::~Quiet() {
  {
    const std::lock_guard<std::mutex> guard(m_gate.m_lock);
    --m_gate.m_quiets;
  }
  m_gate.m_changed.notify_all();
}

uint64_t memory_budget(uint64_t free_bytes) {
  return std::min(k_budget_cap_bytes, free_bytes / 10);
}

DeviceSession::DeviceSession(int ordinal, int connections)
    : m_ordinal(ordinal), m_connections(connections) {
  set_stage("driver");
  set_hardware_queues(connections);
  LoadedDriver driver = load_driver();
  m_lib = std::move(driver.lib);
  m_api = driver.api;
  GPUCHECK_CU(m_api, cuInit, 0U);
  GPUCHECK_CU(m_api, cuDriverGetVersion, &m_driver_version);
  GPUCHECK_CU(m_api, cuDeviceGet, &m_device, ordinal);
  char name[256] = {};
  GPUCHECK_CU(m_api, cuDeviceGetName, name, static_cast<int>(sizeof name), m_device);
  m_name = name;
  m_cc_major = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  m_cc_minor = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  m_sm_count = attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 1);
  char bus[64] = {};
  if (m_api.cuDeviceGetPCIBusId != nullptr &&
      m_api.cuDeviceGetPCIBusId(bus, static_cast<int>(sizeof bus), m_device) == CUDA_SUCCESS) {
    m_pci_bus_id = bus;
  }
  // The engine's plan says when this child may build its context and how much device memory
  // its buffers may take (docs/engine.md).
  set_stage("waiting to create the context");
  m_allowance_bytes = protocol::gate::await_setup();
  set_stage("context");
  GPUCHECK_CU(m_api, cuDevicePrimaryCtxRetain, &m_context, m_device);
  GPUCHECK_CU(m_api, cuCtxSetCurrent, m_context);
  shrink_reservations();
  read_free_memory();
  m_free_after_context = m_free_bytes;
  protocol::gate::context_built();
}

void DeviceSession::read_free_memory() {
  size_t free_bytes = 0;
  size_t total_bytes = 0;
  GPUCHECK_CU(m_api, cuMemGetInfo, &free_bytes, &total_bytes);
  m_free_bytes = free_bytes;
  m_budget_bytes = memory_budget(free_bytes);
  if (m_allowance_bytes) {
    m_budget_bytes = std::min<uint64_t>(m_budget_bytes, *m_allowance_bytes);
  }
}

void DeviceSession::shrink_reservations() {
  // A context reserves local memory for every thread the GPU can hold at the default stack of
  // 1 KiB (half of a context's memory); gpucheck's kernels need almost none, and the driver
  // grows the reservation at a launch that needs more (cuDNN's). docs/performance.md has the
  // sizes with each stack.
  if (m_api.cuCtxSetLimit == nullptr) {
    return;
  }
  constexpr size_t k_stack_bytes = 16;
  constexpr size_t k_printf_fifo_bytes = 4096;
  constexpr size_t k_malloc_heap_bytes = 1U << 20;
  m_api.cuCtxSetLimit(CU_LIMIT_STACK_SIZE, k_stack_bytes);
  m_api.cuCtxSetLimit(CU_LIMIT_PRINTF_FIFO_SIZE, k_printf_fifo_bytes);
  m_api.cuCtxSetLimit(CU_LIMIT_MALLOC_HEAP_SIZE, k_malloc_heap_bytes);
}

void DeviceSession::make_current() const {
  GPUCHECK_CU(m_api, cuCtxSetCurrent, m_context);
}

void DeviceSession::wait_for_gate() {
  if (m_before_ready) {
    m_before_ready();
  }
  set_stage("waiting for the GPU");
  size_t free_bytes = 0;
  size_t total_bytes = 0;
  if (m_api.cuMemGetInfo != nullptr && m_api.cuMemGetInfo(&free_bytes, &total_bytes) == 0 &&
      free_bytes < m_free_after_context) {
    // What its preparation took on the device (on an idle GPU): the plan's memory model.
    m_prepare_used_bytes = m_free_after_context - free_bytes;
  }
  protocol::gate::ready_and_wait();
  set_stage("released");
  read_free_memory();
}

void DeviceSession::done_with_gpu() {
  if (m_work_said_done) {
    return;
  }
  m_work_said_done = true;
  set_stage("done with the GPU");
  if (m_works_left > 1) {
    protocol::gate::work_done();
  } else {
    protocol::gate::done();
  }
}

void DeviceSession::end_work() {
  if (!m_work_said_done) {
    // It failed before saying so: the parent moves on to the next work (or the teardown).
    m_work_said_done = true;
    if (m_works_left > 1) {
      protocol::gate::work_done();
    } else {
      protocol::gate::done();
    }
  }
  m_works_left = std::max(1, m_works_left - 1);
  m_work_said_done = false;
}

std::optional<std::string> DeviceSession::context_error() const {
  if (m_api.cuCtxSynchronize == nullptr) {
    return std::nullopt;
  }
  const CUresult result = m_api.cuCtxSynchronize();
  if (result == CUDA_SUCCESS) {
    return std::nullopt;
  }
  return cuda_error_name(static_cast<int>(result));
}

DeviceSession::~DeviceSession() {
  if (std::uncaught_exceptions() == 0) { // else keep the stage a failure is reported with
    set_stage("context teardown");
  }
  protocol::gate::done(); // a child that failed before its own call: the next may go now
  if (m_context != nullptr && m_api.cuDevicePrimaryCtxRelease != nullptr) {
    m_api.cuDevicePrimaryCtxRelease(m_device);
  }
}

int DeviceSession::attribute(CUdevice_attribute attribute, int fallback) const {
  int value = 0;
  if (m_api.cuDeviceGetAttribute(&value, attribute, m_device) != CUDA_SUCCESS) {
    return fallback;
  }
  return value;
}

protocol::DeviceDescription DeviceSession::description() const {
  protocol::DeviceDescription d;
  d.ordinal = m_ordinal;
  d.name = m_name;
  d.cc_major = m_cc_major;
  d.cc_minor = m_cc_minor;
  d.sm_count = m_sm_count;
  d.pci_bus_id = m_pci_bus_id;
  d.free_bytes = m_free_bytes;
  d.budget_bytes = m_budget_bytes;
  d.driver = m_driver_version;
  d.connections = m_connections;
  d.prepare_used_bytes = m_prepare_used_bytes;
  return d;
}

nlohmann::json DeviceSession::describe() const {
  return protocol::to_json(description());
}

} // namespace gpucheck::gpu
