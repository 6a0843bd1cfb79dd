#pragma once
/// Child-side GPU plumbing shared by the GPU check children: the driver table, the primary
/// context of one device, RAII wrappers for driver objects, the memory budget, and the JSON
/// conventions every GPU child follows.
///
/// A failed driver call throws CudaCallError, caught once by run_gpu_child() and written as
/// {"failure": {...}}: inside a short-lived child that is the simplest way to stop at the first
/// broken call and still report which one, with its CUresult.
///
/// Child JSON: {"device": {...}, "failure": {...}?, "metrics": [{name, value, unit, note}],
///              "verify": [{kind, what, checked, mismatches, first_index, got, want}], ...}

#include <cuda.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "platform/cuda_api.hpp"
#include "platform/dynlib.hpp"
#include "protocol/payloads.hpp"

namespace gpucheck::platform::gpu {

/// A driver call that did not return CUDA_SUCCESS (code -1: the symbol is missing).
class CudaCallError : public std::runtime_error {
public:
  CudaCallError(std::string call, int code);
  [[nodiscard]] const std::string& call() const { return m_call; }
  [[nodiscard]] int code() const { return m_code; }

private:
  std::string m_call;
  int m_code;
};

/// Throw CudaCallError(call, result) unless result is CUDA_SUCCESS.
void check_cu(CUresult result, const char* call);

/// Call a driver entry through the table; throws when the symbol is missing or the call fails.
template <typename Fn, typename... Args> void cu_call(Fn fn, const char* name, Args... args) {
  if (fn == nullptr) {
    throw CudaCallError(name, -1);
  }
  check_cu(fn(args...), name);
}
#define GPUCHECK_CU(api, fn, ...) ::gpucheck::platform::gpu::cu_call((api).fn, #fn, __VA_ARGS__)

/// What the child was doing when it failed ("context", "load kernels", "h2d copy", ...). The
/// timeline belongs to the child's main thread: a helper thread calls stages_off_on_this_thread()
/// and its set_stage() calls are ignored.
void set_stage(std::string stage);
const std::string& current_stage();
void stages_off_on_this_thread();
/// The child's stage timeline so far (`timeline_ms`, `timeline_rss_mib`), which GPUCHECK_TRACE
/// prints on the parent's clock; written into a child's last result.
void write_timeline(nlohmann::json& out);

/// The value of GPUCHECK_PLANT_FAULT ("compute", "copy", "cudnn", "graph"), for the GPU tests:
/// the child then corrupts one output element on purpose and the check must fail.
bool fault_planted(std::string_view what);

/// Each timed part of the long level (memory test, burn): GPUCHECK_LONG_DURATION_MS, which the
/// engine sets from --duration; 10 s for a child run by hand.
std::chrono::milliseconds long_level_duration();

/// Largest device memory a standard run may take: min(1 GiB, 10% of what is free).
uint64_t memory_budget(uint64_t free_bytes);

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
  /// Make the context current on the calling thread (a helper thread of the child).
  void make_current() const;
  /// Setup is done: say `ready` and wait for the engine's `go` (engine::gate::ready_and_wait(),
  /// docs/architecture.md "The GPU engine"), then read free memory and the budget again, since
  /// checks that ran meanwhile have freed theirs.
  void wait_for_gate();
  /// In the middle of the gated work: wait until gpucheck's own probes are over (they load
  /// cuDNN's libraries, which slowed device-local copies by up to a fifth; docs/performance.md).
  /// At once outside a scheduled run.
  void wait_for_quiet_host() const;
  /// The gated work is over (the last timed or GPU-heavy step): the parent may release the next
  /// check on this GPU while this one checks results on the host and tears down
  /// (engine::gate::done(); engine::gate::work_done() while more works follow in this child).
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
  [[nodiscard]] engine::DeviceDescription description() const;
  /// description() as JSON: engine::to_json(description()).
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
};

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

/// Median of a non-empty sample.
double median(std::vector<double> values);

/// This process's resident memory now, MiB (/proc/self/statm).
double resident_mib();

/// Run body(lo, hi) over [0, n) split across up to 8 host threads (fewer on small hosts); on one
/// thread when n is below `min_parallel` (cheap items are not worth a thread).
void parallel_for(uint64_t n, const std::function<void(uint64_t, uint64_t)>& body,
                  uint64_t min_parallel = 1U << 16);

/// Elements i in [0, n) for which bad(i) holds, counted on several host threads.
struct Mismatches {
  uint64_t count = 0;
  uint64_t first = 0; ///< the lowest bad index, when count > 0
};
/// Merge one thread's count into `total` (under a lock).
void add_mismatches(Mismatches& total, const Mismatches& mine, std::mutex& lock);

/// `bad` is a template parameter, not a std::function: it is called once per element (16 Mi
/// times for the ReLU check) and must inline into the loop.
template <typename Bad> Mismatches parallel_mismatches(uint64_t n, const Bad& bad) {
  std::mutex lock;
  Mismatches total;
  total.first = UINT64_MAX;
  parallel_for(n, [&](uint64_t lo, uint64_t hi) {
    Mismatches mine;
    mine.first = UINT64_MAX;
    for (uint64_t i = lo; i < hi; ++i) {
      if (bad(i) && mine.count++ == 0) {
        mine.first = i;
      }
    }
    add_mismatches(total, mine, lock);
  });
  if (total.count == 0) {
    total.first = 0;
  }
  return total;
}

/// A metric entry for the child JSON.
nlohmann::json metric(std::string name, double value, std::string unit, std::string note = {});

/// A verification entry (protocol/payloads.hpp): `kind` ("compute", "copy", "cudnn_conv", ...),
/// `what` it covered; written with engine::to_json().
using Verification = engine::PayloadVerification;

/// Run `body` for the device named by args[0] and return its JSON; a CudaCallError or another
/// exception becomes {"failure": {"stage", "call", "code", "name", "text"}} next to whatever
/// `body` had already written into `out`. Peak host RSS is added as a metric.
nlohmann::json run_gpu_child(const std::vector<std::string>& args,
                             const std::function<void(int ordinal, nlohmann::json& out)>& body);

/// Run `body`; what it threw, as the failure a child reports (nullopt when it returned).
std::optional<engine::PayloadFailure> failure_of(const std::function<void()>& body);

/// The child's peak resident memory so far, as a metric (host_peak_rss_mib).
nlohmann::json peak_rss_metric();

/// SplitMix64: fast deterministic host-side random numbers for test inputs.
class SplitMix64 {
public:
  explicit SplitMix64(uint64_t seed) : m_state(seed) {}
  uint64_t next();
  /// Uniform in [lo, hi).
  float uniform(float lo, float hi);

private:
  uint64_t m_state;
};

/// A seed that differs run to run (fresh inputs every time).
uint64_t fresh_seed();

/// The copy pattern word for (index, seed): the same hash as the gpucheck_*_pattern kernels.
uint32_t pattern_word(uint64_t index, uint32_t seed);

} // namespace gpucheck::platform::gpu
