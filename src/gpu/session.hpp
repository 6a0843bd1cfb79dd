#pragma once
/// A GPU child's device: libcuda opened, cuInit done, the primary context of one device retained
/// and current, the engine's gate and the memory budget (min(1 GiB, 10% of what is free)).
#include <cuda.h>

#include <nlohmann/json.hpp>

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "gpu/cuda_call.hpp"
#include "platform/cuda_api.hpp"
#include "platform/dynlib.hpp"
#include "protocol/payloads.hpp"

namespace gpucheck::gpu {

/// Largest device memory a standard run may take: min(1 GiB, 10% of what is free).
uint64_t memory_budget(uint64_t free_bytes);

/// Between a work's timed measurements and cuDNN's lane preparing on the same context (the
/// shared child): a measurement waits for the lane's steps under way and holds new ones back
/// until it is over, so no lane kernel or module load lands inside a timed window (both skewed
/// FMA and graph-replay figures without it: docs/performance.md). Measurements go first: a lane
/// step waits for them.
class QuietGate {
public:
  /// A lane step (a cuDNN call or case of its preparation) for as long as it lives.
  class Step {
  public:
    explicit Step(QuietGate& gate);
    Step(const Step&) = delete;
    Step& operator=(const Step&) = delete;
    ~Step();

  private:
    QuietGate& m_gate;
  };
  /// A timed measurement for as long as it lives.
  class Quiet {
  public:
    explicit Quiet(QuietGate& gate);
    Quiet(const Quiet&) = delete;
    Quiet& operator=(const Quiet&) = delete;
    ~Quiet();

  private:
    QuietGate& m_gate;
  };

private:
  std::mutex m_lock;
  std::condition_variable m_changed;
  int m_steps = 0;  ///< lane steps under way
  int m_quiets = 0; ///< measurements under way or waiting
};

/// libcuda opened, cuInit done, primary context of one device retained and current.
class DeviceSession {
public:
  /// Throws CudaCallError (stage "driver" or "context") when any step fails. `connections`:
  /// the hardware work queues of the context (CUDA_DEVICE_MAX_CONNECTIONS, set before cuInit);
  /// each check asks for the fewest it needs, since every queue costs time to build and to tear
  /// down (docs/checks.md, "How the GPU checks are scheduled"). Between cuInit and the context
  /// it waits for the engine's `setup`, which carries its buffer allowance; right after the
  /// context it shrinks the stack reservation and says `context_built`.
  DeviceSession(int ordinal, int connections);
  DeviceSession(const DeviceSession&) = delete;
  DeviceSession& operator=(const DeviceSession&) = delete;
  ~DeviceSession();

  [[nodiscard]] const CudaApi& api() const { return m_api; }
  [[nodiscard]] CUdevice device() const { return m_device; }
  [[nodiscard]] int ordinal() const { return m_ordinal; }
  [[nodiscard]] int cc_major() const { return m_cc_major; }
  [[nodiscard]] int cc_minor() const { return m_cc_minor; }
  /// cuDriverGetVersion: 13000 for CUDA 13.0.
  [[nodiscard]] int driver_version() const { return m_driver_version; }
  [[nodiscard]] int sm_count() const { return m_sm_count; }
  [[nodiscard]] const std::string& pci_bus_id() const { return m_pci_bus_id; }
  [[nodiscard]] uint64_t free_bytes() const { return m_free_bytes; }
  [[nodiscard]] uint64_t budget_bytes() const { return m_budget_bytes; }
  /// A driver entry that platform's table does not hold (a check's own, src/gpu_checks/): the
  /// first of `names` (versioned first) that libcuda has; nullptr when it has none.
  template <typename Fn> Fn driver_function(std::initializer_list<const char*> names) {
    return m_lib.first_function<Fn>(names);
  }
  /// Make the context current on the calling thread (a helper thread of the child).
  void make_current() const;
  /// A timed measurement's window, and a step of cuDNN's lane (QuietGate).
  [[nodiscard]] std::unique_ptr<QuietGate::Quiet> quiet() const {
    return std::make_unique<QuietGate::Quiet>(m_quiet);
  }
  [[nodiscard]] std::unique_ptr<QuietGate::Step> lane_step() const {
    return std::make_unique<QuietGate::Step>(m_quiet);
  }
  /// Setup is done: say `ready` and wait for the engine's `go` (protocol::gate::ready_and_wait(),
  /// docs/engine.md), then read free memory and the budget again, since
  /// checks that ran meanwhile have freed theirs.
  void wait_for_gate();
  /// Called at the start of wait_for_gate(), before `ready` (empty: none): the shared child holds
  /// its copies' `ready` until cuDNN's preparation beside them is over (device_child.cpp).
  void before_ready(std::function<void()> hook) { m_before_ready = std::move(hook); }
  /// The gated work is over (the last timed or GPU-heavy step): the parent may release the next
  /// check on this GPU while this one checks results on the host and tears down
  /// (protocol::gate::done(); protocol::gate::work_done() while more works follow in this child).
  /// Once per work; the destructor implies it.
  void done_with_gpu();
  /// A child that does `count` works on this session, one after another (the shared child).
  void begin_works(int count) { m_works_left = count; }
  /// One work is over (whether or not it said done_with_gpu()): the next one begins.
  void end_work();
  /// nullopt while the context still works (cuCtxSynchronize succeeds), else the error's name:
  /// after a failed work, whether the next may run on this context.
  [[nodiscard]] std::optional<std::string> context_error() const;
  /// Attribute value, or `fallback` when the driver does not know it.
  [[nodiscard]] int attribute(CUdevice_attribute attribute, int fallback = 0) const;
  /// The device as the payload's "device" carries it (protocol/payloads.hpp).
  [[nodiscard]] protocol::DeviceDescription description() const;
  /// description() as JSON: protocol::to_json(description()).
  [[nodiscard]] nlohmann::json describe() const;

private:
  /// Free device memory now, and the budget that follows from it and the plan's allowance.
  void read_free_memory();
  /// Shrink the context's per-thread reservations (stack, printf FIFO, malloc heap).
  void shrink_reservations();

  DynamicLibrary m_lib;
  CudaApi m_api;
  int m_ordinal = 0;
  int m_connections = 0;
  CUdevice m_device = 0;
  CUcontext m_context = nullptr;
  int m_cc_major = 0;
  int m_cc_minor = 0;
  int m_sm_count = 0;
  int m_driver_version = 0;
  std::string m_name;
  std::string m_pci_bus_id;
  uint64_t m_free_bytes = 0;
  uint64_t m_budget_bytes = 0;
  std::optional<unsigned long long> m_allowance_bytes; ///< from the engine's plan, if scheduled
  uint64_t m_free_after_context = 0;
  uint64_t m_prepare_used_bytes = 0; ///< device memory its preparation took before its gate
  int m_works_left = 1;              ///< works of this child not yet over, the current one included
  bool m_work_said_done = false;     ///< the current work has said done
  std::function<void()> m_before_ready;
  mutable QuietGate m_quiet;
};

} // namespace gpucheck::gpu
