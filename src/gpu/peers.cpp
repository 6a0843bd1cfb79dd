// The multi-GPU child (gpu-peers): one process sees every GPU of the run, holds each one's
// primary context, and measures peer-to-peer copies between every pair with nvbandwidth's method
// (copy-engine copies between device buffers with peer access enabled, queued behind a gate and
// timed with events on the issuing stream, median of samples), every destination verified.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <exception>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <tuple>
#include <vector>

#include "gpu/child.hpp"
#include "gpu/cuda_call.hpp"
#include "gpu/gpu_children.hpp"
#include "gpu/host_checks.hpp"
#include "gpu/kernel_module.hpp"
#include "gpu/random.hpp"
#include "gpu/session.hpp"
#include "kernels/gpucheck_values.h"
#include "platform/cuda_api.hpp"
#include "platform/dynlib.hpp"
#include "process/child_process.hpp"
#include "protocol/messages.hpp"
#include "protocol/payloads.hpp"

namespace gpucheck::gpu {

namespace {
using Clock = std::chrono::steady_clock;

constexpr uint64_t k_mib = 1ULL << 20;
constexpr uint64_t k_copy_bytes = 64 * k_mib; ///< one copy (nvbandwidth's small-buffer size)
constexpr uint64_t k_min_copy_bytes = 4 * k_mib;
constexpr int k_samples = 3;         ///< median of three, as nvbandwidth
constexpr int k_max_copies = 32;     ///< per stream and sample: the push buffer must not fill up
constexpr double k_sample_ms = 10.0; ///< each sample's target length
constexpr int k_latency_copies = 64; ///< 4-byte copies queued back to back

/// One GPU of the child: its device, primary context and buffers.
struct PeerGpu {
  CUdevice device = 0;
  CUcontext context = nullptr;
  protocol::PeerDevice description;
  CUdeviceptr source = 0;      ///< the pattern this GPU sends
  CUdeviceptr destination = 0; ///< what it receives
  uint32_t seed = 0;
  /// gpucheck's kernels in this context: the patterns are written and checked on the GPU
  /// (null when they could not be loaded: the host does it, more slowly).
  std::shared_ptr<KernelModule> module;
  int sm_count = 1;
  CUdeviceptr counters = 0; ///< the checks' mismatch count and first bad index
};

/// libcuda, cuInit, every listed device's primary context; released in the destructor.
class PeerSession {
public:
  explicit PeerSession(const std::vector<int>& ordinals) {
    set_stage("driver");
    set_hardware_queues(1); // as the per-GPU children: copies and NCCL need no more
    LoadedDriver driver = load_driver();
    m_lib = std::move(driver.lib);
    m_api = driver.api;
    GPUCHECK_CU(m_api, cuInit, 0U);
    // GPUCHECK_CONTEXTS_AT_START (the engine's rule span_beside_on_idle_gpus): the contexts now,
    // and the setup then releases what follows them.
    const char* at_start = std::getenv("GPUCHECK_CONTEXTS_AT_START");
    const bool early = at_start != nullptr && std::string_view(at_start) == "1";
    if (!early) {
      m_allowance = protocol::gate::await_setup();
    }
    set_stage("context");
    // Every GPU's context at once, one thread each, rather than one after another.
    std::vector<CUdevice> devices(ordinals.size(), 0);
    std::vector<CUcontext> contexts(ordinals.size(), nullptr);
    std::vector<CUresult> results(ordinals.size(), CUDA_SUCCESS);
    std::vector<const char*> calls(ordinals.size(), "cuDeviceGet");
    {
      std::vector<std::thread> threads;
      for (size_t i = 0; i < ordinals.size(); ++i) {
        threads.emplace_back([&, i] {
          results[i] = m_api.cuDeviceGet(&devices[i], ordinals[i]);
          if (results[i] == CUDA_SUCCESS) {
            calls[i] = "cuDevicePrimaryCtxRetain";
            results[i] = m_api.cuDevicePrimaryCtxRetain(&contexts[i], devices[i]);
          }
        });
      }
      for (std::thread& t : threads) {
        t.join();
      }
    }
    for (size_t i = 0; i < ordinals.size(); ++i) {
      if (contexts[i] != nullptr) {
        m_gpus.push_back({devices[i], contexts[i]}); // released in the destructor from here on
      }
    }
    for (size_t i = 0; i < ordinals.size(); ++i) {
      check_cu(results[i], calls[i]); // the first failure, in the GPUs' order
    }
    for (size_t i = 0; i < ordinals.size(); ++i) {
      const int ordinal = ordinals[i];
      PeerGpu& own = m_gpus[i];
      const PeerGpu& gpu = own;
      GPUCHECK_CU(m_api, cuCtxSetCurrent, own.context);
      if (m_api.cuCtxSetLimit != nullptr) {
        // As DeviceSession: gpucheck's copies need no per-thread stack.
        m_api.cuCtxSetLimit(CU_LIMIT_STACK_SIZE, 16);
      }
      std::array<char, 128> name{};
      GPUCHECK_CU(m_api, cuDeviceGetName, name.data(), static_cast<int>(name.size()), gpu.device);
      std::array<char, 32> bus{};
      if (m_api.cuDeviceGetPCIBusId != nullptr) {
        m_api.cuDeviceGetPCIBusId(bus.data(), static_cast<int>(bus.size()), gpu.device);
      }
      own.description = {ordinal, std::string(name.data()), std::string(bus.data())};
    }
    if (early) {
      set_stage("waiting to prepare");
      m_allowance = protocol::gate::await_setup();
    }
    protocol::gate::context_built();
  }
  PeerSession(const PeerSession&) = delete;
  PeerSession& operator=(const PeerSession&) = delete;
  ~PeerSession() {
    for (PeerGpu& gpu : m_gpus) {
      if (m_api.cuCtxSetCurrent != nullptr) {
        m_api.cuCtxSetCurrent(gpu.context);
      }
      gpu.module.reset();
      for (const CUdeviceptr ptr : {gpu.source, gpu.destination, gpu.counters}) {
        if (ptr != 0 && m_api.cuMemFree != nullptr) {
          m_api.cuMemFree(ptr);
        }
      }
      if (m_api.cuDevicePrimaryCtxRelease != nullptr) {
        m_api.cuDevicePrimaryCtxRelease(gpu.device);
      }
    }
  }
  [[nodiscard]] const CudaApi& api() const { return m_api; }
  [[nodiscard]] std::vector<PeerGpu>& gpus() { return m_gpus; }
  /// The buffers this child may take on each GPU (the plan's allowance), nullopt when run alone.
  [[nodiscard]] std::optional<unsigned long long> allowance() const { return m_allowance; }
  void make_current(const PeerGpu& gpu) const { GPUCHECK_CU(m_api, cuCtxSetCurrent, gpu.context); }
  /// gpucheck's kernels in every context, once (a load takes about a millisecond): where one
  /// cannot be loaded, that GPU's patterns are written and checked by the host.
  void load_kernels() {
    if (m_kernels_tried) {
      return;
    }
    m_kernels_tried = true;
    set_stage("load kernels");
    int driver = 0;
    if (m_api.cuDriverGetVersion != nullptr) {
      m_api.cuDriverGetVersion(&driver);
    }
    for (PeerGpu& gpu : m_gpus) {
      make_current(gpu);
      ModuleTarget target{driver, 0, 0};
      m_api.cuDeviceGetAttribute(&target.cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                                 gpu.device);
      m_api.cuDeviceGetAttribute(&target.cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                                 gpu.device);
      m_api.cuDeviceGetAttribute(&gpu.sm_count, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                                 gpu.device);
      auto module = std::make_shared<KernelModule>(m_api, target);
      if (module->loaded() && m_api.cuMemAlloc(&gpu.counters, 16) == CUDA_SUCCESS) {
        gpu.module = std::move(module);
      }
    }
  }

private:
  DynamicLibrary m_lib;
  CudaApi m_api;
  std::vector<PeerGpu> m_gpus;
  std::optional<unsigned long long> m_allowance;
  bool m_kernels_tried = false;
};

/// A stream of the current context, destroyed with it.
class PeerStream {
public:
  explicit PeerStream(const CudaApi& api) : m_api(&api) {
    GPUCHECK_CU(api, cuStreamCreate, &m_stream, static_cast<unsigned>(CU_STREAM_NON_BLOCKING));
  }
  PeerStream(const PeerStream&) = delete;
  PeerStream& operator=(const PeerStream&) = delete;
  ~PeerStream() {
    if (m_stream != nullptr && m_api->cuStreamDestroy != nullptr) {
      m_api->cuStreamDestroy(m_stream);
    }
  }
  [[nodiscard]] CUstream get() const { return m_stream; }

private:
  const CudaApi* m_api;
  CUstream m_stream = nullptr;
};

/// An event pair timing one stream's queued copies.
class Timer {
public:
  explicit Timer(const CudaApi& api) : m_api(&api) {
    GPUCHECK_CU(api, cuEventCreate, &m_start, 0U);
    GPUCHECK_CU(api, cuEventCreate, &m_end, 0U);
  }
  Timer(const Timer&) = delete;
  Timer& operator=(const Timer&) = delete;
  ~Timer() {
    for (CUevent e : {m_start, m_end}) {
      if (e != nullptr && m_api->cuEventDestroy != nullptr) {
        m_api->cuEventDestroy(e);
      }
    }
  }
  void start(CUstream s) const { GPUCHECK_CU(*m_api, cuEventRecord, m_start, s); }
  void end(CUstream s) const { GPUCHECK_CU(*m_api, cuEventRecord, m_end, s); }
  [[nodiscard]] double ms() const {
    GPUCHECK_CU(*m_api, cuEventSynchronize, m_end);
    float ms = 0.0F;
    GPUCHECK_CU(*m_api, cuEventElapsedTime, &ms, m_start, m_end);
    return ms;
  }

private:
  const CudaApi* m_api;
  CUevent m_start = nullptr;
  CUevent m_end = nullptr;
};

/// A gate in pinned host memory: streams wait on it (cuStreamWaitValue32) until the host opens
/// it, so every copy of a sample is queued before the first starts (nvbandwidth holds its
/// streams with a spin kernel for the same reason). Without stream memory operations the copies
/// run as they are queued: the figure is the same once the queue is ahead of the engine.
class HostGate {
public:
  explicit HostGate(const CudaApi& api) : m_api(&api) {
    if (api.cuMemHostAlloc == nullptr || api.cuMemHostGetDevicePointer == nullptr ||
        api.cuStreamWaitValue32 == nullptr) {
      return;
    }
    void* host = nullptr;
    if (api.cuMemHostAlloc(&host, sizeof(uint32_t),
                           CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP) != CUDA_SUCCESS) {
      return;
    }
    m_word = static_cast<volatile uint32_t*>(host);
    *m_word = 0;
    if (api.cuMemHostGetDevicePointer(&m_device_word, host, 0) != CUDA_SUCCESS) {
      m_device_word = 0;
    }
  }
  HostGate(const HostGate&) = delete;
  HostGate& operator=(const HostGate&) = delete;
  ~HostGate() {
    if (m_word != nullptr && m_api->cuMemFreeHost != nullptr) {
      m_api->cuMemFreeHost(const_cast<uint32_t*>(m_word)); // NOLINT
    }
  }
  /// Close the gate and hold `stream` behind it; false when the gate is not available.
  bool hold(CUstream stream) {
    if (m_device_word == 0) {
      return false;
    }
    *m_word = 0;
    const bool held = m_api->cuStreamWaitValue32(stream, m_device_word, 1,
                                                 CU_STREAM_WAIT_VALUE_GEQ) == CUDA_SUCCESS;
    m_used = m_used || held;
    return held;
  }
  void open() {
    if (m_word != nullptr) {
      *m_word = 1;
    }
  }
  [[nodiscard]] bool used() const { return m_used; }

private:
  const CudaApi* m_api;
  volatile uint32_t* m_word = nullptr;
  CUdeviceptr m_device_word = 0;
  bool m_used = false;
};

double gbps(uint64_t bytes, int copies, double ms) {
  return ms > 0.0 ? static_cast<double>(bytes) * copies / (ms * 1e-3) / 1e9 : 0.0;
}

/// Copies from each of `from`'s sources into its `to`'s destination, `copies` per direction,
/// each direction on a stream of its source's context, released together: each direction's
/// milliseconds (one entry per direction).
std::vector<double> timed_copies(PeerSession& session, HostGate& gate,
                                 const std::vector<std::pair<PeerGpu*, PeerGpu*>>& directions,
                                 uint64_t bytes, int copies) {
  const CudaApi& api = session.api();
  std::vector<std::unique_ptr<PeerStream>> streams;
  std::vector<std::unique_ptr<Timer>> timers;
  for (const auto& [from, to] : directions) {
    session.make_current(*from);
    streams.push_back(std::make_unique<PeerStream>(api));
    timers.push_back(std::make_unique<Timer>(api));
    gate.hold(streams.back()->get());
    timers.back()->start(streams.back()->get());
  }
  // Interleaved, so both directions' queues fill together.
  for (int c = 0; c < copies; ++c) {
    for (size_t d = 0; d < directions.size(); ++d) {
      session.make_current(*directions[d].first);
      GPUCHECK_CU(api, cuMemcpyDtoDAsync, directions[d].second->destination,
                  directions[d].first->source, static_cast<size_t>(bytes), streams[d]->get());
    }
  }
  for (size_t d = 0; d < directions.size(); ++d) {
    session.make_current(*directions[d].first);
    timers[d]->end(streams[d]->get());
  }
  gate.open();
  std::vector<double> ms;
  for (size_t d = 0; d < directions.size(); ++d) {
    ms.push_back(timers[d]->ms());
  }
  return ms;
}

/// Count on `gpu` the words its check kernel finds wrong (gpucheck_check_pattern or
/// gpucheck_nccl_check, launched by `launch_check` with the counters' addresses): the mismatches
/// and the first bad index.
Mismatches count_on_gpu(PeerSession& session, const PeerGpu& gpu,
                        const std::function<void(CUdeviceptr, CUdeviceptr)>& launch_check) {
  const CudaApi& api = session.api();
  session.make_current(gpu);
  CUstream legacy = nullptr; // the check is queued behind these on the same stream
  GPUCHECK_CU(api, cuMemsetD32Async, gpu.counters, 0U, size_t{2}, legacy);
  GPUCHECK_CU(api, cuMemsetD32Async, gpu.counters + 8, 0xFFFFFFFFU, size_t{2}, legacy);
  launch_check(gpu.counters, gpu.counters + 8);
  std::array<unsigned long long, 2> counts{};
  GPUCHECK_CU(api, cuMemcpyDtoH, counts.data(), gpu.counters, sizeof counts);
  return {counts[0], counts[0] > 0 ? counts[1] : 0};
}

/// Fill a GPU's source with its pattern: on the GPU, or from host memory.
void fill_source(PeerSession& session, PeerGpu& gpu, uint64_t bytes, std::vector<uint32_t>& host) {
  const uint64_t words = bytes / sizeof(uint32_t);
  if (gpu.module) {
    session.make_current(gpu);
    CUdeviceptr target = gpu.source;
    uint64_t n = words;
    uint32_t seed = gpu.seed;
    launch(session.api(), gpu.module->kernels().fill_pattern, grid_for(gpu.sm_count, n, 256), 256,
           nullptr, {&target, &n, &seed});
    check_cu(session.api().cuCtxSynchronize(), "cuCtxSynchronize");
    return;
  }
  host.resize(words);
  parallel_for(words, [&](uint64_t lo, uint64_t hi) {
    for (uint64_t i = lo; i < hi; ++i) {
      host[i] = pattern_word(i, gpu.seed);
    }
  });
  session.make_current(gpu);
  GPUCHECK_CU(session.api(), cuMemcpyHtoD, gpu.source, host.data(), static_cast<size_t>(bytes));
}

/// Compare `to`'s destination with `from`'s pattern: on `to`, or read back to the host.
Verification verify_pair(PeerSession& session, const PeerGpu& from, const PeerGpu& to,
                         uint64_t bytes, std::vector<uint32_t>& host) {
  const uint64_t words = bytes / sizeof(uint32_t);
  Mismatches bad;
  std::function<uint32_t(uint64_t)> got_at; // the word found at a bad index
  if (to.module) {
    bad = count_on_gpu(session, to, [&](CUdeviceptr count, CUdeviceptr first) {
      CUdeviceptr words_at = to.destination;
      uint64_t n = words;
      uint32_t seed = from.seed;
      launch(session.api(), to.module->kernels().check_pattern, grid_for(to.sm_count, n, 256), 256,
             nullptr, {&words_at, &n, &seed, &count, &first});
    });
    got_at = [&](uint64_t i) {
      uint32_t got = 0;
      GPUCHECK_CU(session.api(), cuMemcpyDtoH, &got, to.destination + i * 4, size_t{4});
      return got;
    };
  } else {
    host.assign(words, 0xDEADBEEFU); // poisoned: a copy that wrote nothing fails
    session.make_current(to);
    GPUCHECK_CU(session.api(), cuMemcpyDtoH, host.data(), to.destination,
                static_cast<size_t>(bytes));
    bad = parallel_mismatches(words,
                              [&](uint64_t i) { return host[i] != pattern_word(i, from.seed); });
    got_at = [&host](uint64_t i) { return host[i]; };
  }
  Verification v;
  v.kind = "p2p";
  v.what = fmt::format("{} -> {}", from.description.pci_bus_id, to.description.pci_bus_id);
  v.checked = words;
  v.mismatches = bad.count;
  v.first_index = bad.first;
  if (bad.count > 0) {
    v.got = fmt::format("0x{:08x}", got_at(bad.first));
    v.want = fmt::format("0x{:08x}", pattern_word(bad.first, from.seed));
  }
  return v;
}

/// Mean microseconds of one 4-byte copy from->to, `k_latency_copies` queued back to back.
double latency_us(PeerSession& session, PeerGpu& from, PeerGpu& to) {
  const CudaApi& api = session.api();
  session.make_current(from);
  PeerStream stream(api);
  Timer timer(api);
  GPUCHECK_CU(api, cuMemcpyDtoDAsync, to.destination, from.source, size_t{4}, stream.get());
  timer.start(stream.get());
  for (int i = 0; i < k_latency_copies; ++i) {
    GPUCHECK_CU(api, cuMemcpyDtoDAsync, to.destination, from.source, size_t{4}, stream.get());
  }
  timer.end(stream.get());
  return timer.ms() * 1000.0 / k_latency_copies;
}

/// The sizes of the long level's sweep, each timed alone per ordered pair.
constexpr std::array<uint64_t, 5> k_sweep_bytes{1 * k_mib, 4 * k_mib, 16 * k_mib, 64 * k_mib,
                                                256 * k_mib};

/// The median milliseconds of `copies` copies from->to alone, over k_samples gated samples.
double median_alone_ms(PeerSession& session, HostGate& gate, PeerGpu& from, PeerGpu& to,
                       uint64_t bytes, int copies) {
  std::vector<double> ms;
  for (int s = 0; s < k_samples; ++s) {
    ms.push_back(timed_copies(session, gate, {{&from, &to}}, bytes, copies).front());
  }
  return median(ms);
}

/// How many copies of `bytes` make a sample of about k_sample_ms, from a warm-up of two.
int copies_per_sample(PeerSession& session, HostGate& gate,
                      const std::vector<std::pair<PeerGpu*, PeerGpu*>>& directions,
                      uint64_t bytes) {
  const std::vector<double> warm = timed_copies(session, gate, directions, bytes, 2);
  const double per_copy_ms = std::max(1e-3, *std::max_element(warm.begin(), warm.end()) / 2);
  return std::clamp(static_cast<int>(k_sample_ms / per_copy_ms), 2, k_max_copies);
}

/// N GPUs' pairs in N - 1 rounds (N odd: N) of disjoint pairs, by the circle method: GPU 0 stays,
/// the others turn one place a round. Every pair comes once, as (lower, higher).
std::vector<std::vector<std::pair<size_t, size_t>>> pair_rounds(size_t n) {
  const size_t m = n % 2 == 0 ? n : n + 1; // an odd count plays against "nobody" (m - 1)
  std::vector<std::vector<std::pair<size_t, size_t>>> rounds;
  for (size_t r = 0; m >= 2 && r + 1 < m; ++r) {
    std::vector<std::pair<size_t, size_t>> round;
    // Position 0 holds GPU 0; positions 1..m-1 hold the others turned by r.
    const auto at = [&](size_t position) {
      return position == 0 ? size_t{0} : 1 + (position - 1 + r) % (m - 1);
    };
    for (size_t i = 0; i < m / 2; ++i) {
      const size_t x = at(i);
      const size_t y = at(m - 1 - i);
      if (x < n && y < n) {
        round.emplace_back(std::min(x, y), std::max(x, y));
      }
    }
    rounds.push_back(std::move(round));
  }
  return rounds;
}

/// Both directions of one pair as timed: write alone and both ways at once.
struct PairFigures {
  protocol::PeerPair ab;
  protocol::PeerPair ba;
};

/// Time these pairs at once (each direction of every pair together, then the reverse, then both
/// ways), median of k_samples gated samples each: every pair's figures.
std::vector<PairFigures> time_pairs(PeerSession& session, HostGate& gate,
                                    const std::vector<std::pair<size_t, size_t>>& pairs,
                                    uint64_t bytes) {
  std::vector<PeerGpu>& gpus = session.gpus();
  std::vector<std::pair<PeerGpu*, PeerGpu*>> forward;
  std::vector<std::pair<PeerGpu*, PeerGpu*>> reverse;
  std::vector<std::pair<PeerGpu*, PeerGpu*>> both;
  for (const auto& [a, b] : pairs) {
    forward.emplace_back(&gpus[a], &gpus[b]);
    reverse.emplace_back(&gpus[b], &gpus[a]);
    both.emplace_back(&gpus[a], &gpus[b]);
    both.emplace_back(&gpus[b], &gpus[a]);
  }
  // Warm-up (two copies each way), which also sizes the samples to about k_sample_ms.
  const int copies = copies_per_sample(session, gate, both, bytes);
  const size_t n = pairs.size();
  std::vector<std::array<std::vector<double>, 4>> ms(n); // ab, ba, ab both ways, ba both ways
  for (int s = 0; s < k_samples; ++s) {
    const std::vector<double> f = timed_copies(session, gate, forward, bytes, copies);
    const std::vector<double> r = timed_copies(session, gate, reverse, bytes, copies);
    const std::vector<double> w = timed_copies(session, gate, both, bytes, copies);
    for (size_t i = 0; i < n; ++i) {
      ms[i][0].push_back(f[i]);
      ms[i][1].push_back(r[i]);
      ms[i][2].push_back(w[2 * i]);
      ms[i][3].push_back(w[2 * i + 1]);
    }
  }
  std::vector<PairFigures> out;
  for (size_t i = 0; i < n; ++i) {
    const auto [a, b] = pairs[i];
    PairFigures p;
    p.ab = {static_cast<int>(a), static_cast<int>(b), bytes, copies, 0, 0, 0};
    p.ba = {static_cast<int>(b), static_cast<int>(a), bytes, copies, 0, 0, 0};
    p.ab.write_gbps = gbps(bytes, copies, median(ms[i][0]));
    p.ba.write_gbps = gbps(bytes, copies, median(ms[i][1]));
    p.ab.bidir_gbps = gbps(bytes, copies, median(ms[i][2]));
    p.ba.bidir_gbps = gbps(bytes, copies, median(ms[i][3]));
    p.ab.at_once = static_cast<int>(n);
    p.ba.at_once = static_cast<int>(n);
    out.push_back(p);
  }
  return out;
}

/// Whether a pair timed beside others fell short of the pair timed alone (by more than the
/// samples' own spread): then its figures may be the others' doing, and it is timed alone.
bool short_of(const PairFigures& at_once, const PairFigures& alone) {
  constexpr double k_share = 0.9;
  const double write = std::min(alone.ab.write_gbps, alone.ba.write_gbps);
  const double bidir = std::min(alone.ab.bidir_gbps, alone.ba.bidir_gbps);
  return std::min(at_once.ab.write_gbps, at_once.ba.write_gbps) < k_share * write ||
         std::min(at_once.ab.bidir_gbps, at_once.ba.bidir_gbps) < k_share * bidir;
}

/// What every ordered pair of the session's GPUs can do (the access matrix, with the driver's
/// performance rank and atomics), with peer access enabled where it can be, and gpucheck's
/// kernels loaded.
protocol::PeersPayload open_peer_access(PeerSession& session) {
  const CudaApi& api = session.api();
  std::vector<PeerGpu>& gpus = session.gpus();
  protocol::PeersPayload payload;
  for (const PeerGpu& gpu : gpus) {
    payload.devices.push_back(gpu.description);
  }
  set_stage("peer access");
  for (size_t a = 0; a < gpus.size(); ++a) {
    for (size_t b = 0; b < gpus.size(); ++b) {
      if (a == b) {
        continue;
      }
      protocol::PeerAccess access;
      access.from = static_cast<int>(a);
      access.to = static_cast<int>(b);
      int value = 0;
      GPUCHECK_CU(api, cuDeviceCanAccessPeer, &value, gpus[a].device, gpus[b].device);
      access.can_access = value != 0;
      if (api.cuDeviceGetP2PAttribute != nullptr) {
        if (api.cuDeviceGetP2PAttribute(&value, CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK,
                                        gpus[a].device, gpus[b].device) == CUDA_SUCCESS) {
          access.performance_rank = value;
        }
        if (api.cuDeviceGetP2PAttribute(&value, CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED,
                                        gpus[a].device, gpus[b].device) == CUDA_SUCCESS) {
          access.native_atomics = value != 0;
        }
      }
      payload.access.push_back(access);
    }
  }
  return payload;
}

void enable_peer_access(PeerSession& session, const protocol::PeersPayload& payload) {
  const CudaApi& api = session.api();
  std::vector<PeerGpu>& gpus = session.gpus();
  for (const protocol::PeerAccess& access : payload.access) {
    if (access.can_access) {
      session.make_current(gpus[static_cast<size_t>(access.from)]);
      const CUresult rc =
          api.cuCtxEnablePeerAccess(gpus[static_cast<size_t>(access.to)].context, 0U);
      if (rc != CUDA_SUCCESS && rc != CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED) {
        check_cu(rc, "cuCtxEnablePeerAccess");
      }
    }
  }
  session.load_kernels();
}

/// Two buffers per GPU (what it sends, what it receives) within the plan's allowance: 64 MiB,
/// or for the sweep its largest size that fits (its copies then write every byte verified);
/// each source filled with its GPU's pattern. Returns their size.
uint64_t take_peer_buffers(PeerSession& session, bool sweep, std::vector<uint32_t>& host) {
  const CudaApi& api = session.api();
  set_stage("buffers");
  uint64_t buffer_bytes = sweep ? k_sweep_bytes.back() : k_copy_bytes;
  if (const auto allowance = session.allowance()) {
    buffer_bytes = std::min<uint64_t>(buffer_bytes, (*allowance / 2) & ~(k_mib - 1));
  }
  buffer_bytes = std::max(buffer_bytes, k_min_copy_bytes);
  const uint64_t seed = fresh_seed();
  std::vector<PeerGpu>& gpus = session.gpus();
  for (size_t g = 0; g < gpus.size(); ++g) {
    PeerGpu& gpu = gpus[g];
    gpu.seed = static_cast<uint32_t>(seed >> (g % 2 == 0 ? 0 : 32)) + static_cast<uint32_t>(g);
    session.make_current(gpu);
    GPUCHECK_CU(api, cuMemAlloc, &gpu.source, static_cast<size_t>(buffer_bytes));
    GPUCHECK_CU(api, cuMemAlloc, &gpu.destination, static_cast<size_t>(buffer_bytes));
    fill_source(session, gpu, buffer_bytes, host);
  }
  return buffer_bytes;
}

/// One round's pairs timed: the first pair of the run alone (its figures are the reference a
/// pair reaches here), the rest at once, and a pair that falls short of the reference at once
/// again alone, so no figure is one that other pairs' traffic lowered (links of their own, as
/// through NVSwitch, keep them all). The long level's sweep times every pair alone.
std::vector<PairFigures> time_round(PeerSession& session, HostGate& gate,
                                    const std::vector<std::pair<size_t, size_t>>& group,
                                    uint64_t bytes, bool sweep,
                                    std::optional<PairFigures>& reference) {
  std::vector<PairFigures> figures;
  size_t next = 0;
  if (!group.empty() && (!reference || sweep)) {
    figures.push_back(time_pairs(session, gate, {group.front()}, bytes).front());
    reference = reference.value_or(figures.front());
    next = 1;
  }
  if (sweep) {
    for (; next < group.size(); ++next) {
      figures.push_back(time_pairs(session, gate, {group[next]}, bytes).front());
    }
  } else if (next < group.size()) {
    const std::vector<std::pair<size_t, size_t>> rest(group.begin() + static_cast<long>(next),
                                                      group.end());
    for (size_t i = 0; const PairFigures& f : time_pairs(session, gate, rest, bytes)) {
      const bool again = rest.size() > 1 && short_of(f, *reference);
      figures.push_back(again ? time_pairs(session, gate, {rest[i]}, bytes).front() : f);
      ++i;
    }
  }
  return figures;
}

/// The long level's sweep of one pair: every size of k_sweep_bytes the buffers hold, each way,
/// timed alone.
void sweep_pair(PeerSession& session, HostGate& gate, size_t a, size_t b, uint64_t buffer_bytes,
                protocol::PeersPayload& payload) {
  std::vector<PeerGpu>& gpus = session.gpus();
  set_stage("peer copies, every size");
  for (const uint64_t size : k_sweep_bytes) {
    if (size > buffer_bytes) {
      break;
    }
    for (const auto& [from, to] : {std::pair{a, b}, std::pair{b, a}}) {
      PeerGpu& source = gpus[from];
      PeerGpu& target = gpus[to];
      const int n = copies_per_sample(session, gate, {{&source, &target}}, size);
      const double ms = median_alone_ms(session, gate, source, target, size, n);
      payload.sweep.push_back(
          {static_cast<int>(from), static_cast<int>(to), size, n, gbps(size, n, ms)});
    }
  }
  set_stage("peer copies");
}

/// Every pair of GPUs with peer access both ways timed in rounds of disjoint pairs (N - 1
/// rounds instead of N (N - 1) / 2 pairs), their latency, the sweep's sizes, and each
/// destination verified whole before a later round writes it again.
std::vector<Verification> time_every_pair(PeerSession& session, HostGate& gate, bool sweep,
                                          uint64_t bytes, uint64_t buffer_bytes,
                                          std::vector<uint32_t>& host,
                                          protocol::PeersPayload& payload) {
  std::vector<PeerGpu>& gpus = session.gpus();
  const auto access_of = [&payload](size_t from, size_t to) {
    for (const protocol::PeerAccess& x : payload.access) {
      if (x.from == static_cast<int>(from) && x.to == static_cast<int>(to)) {
        return x.can_access;
      }
    }
    return false;
  };
  std::vector<Verification> verifications;
  std::optional<PairFigures> reference;
  for (const std::vector<std::pair<size_t, size_t>>& round : pair_rounds(gpus.size())) {
    std::vector<std::pair<size_t, size_t>> group;
    for (const auto& [a, b] : round) {
      if (access_of(a, b) && access_of(b, a)) {
        group.emplace_back(a, b); // no P2P: reported as such, never measured through the host
      }
    }
    const std::vector<PairFigures> figures =
        time_round(session, gate, group, bytes, sweep, reference);
    for (size_t i = 0; i < group.size(); ++i) {
      const auto [a, b] = group[i];
      PeerGpu& ga = gpus[a];
      PeerGpu& gb = gpus[b];
      protocol::PeerPair ab = figures[i].ab;
      protocol::PeerPair ba = figures[i].ba;
      // The latency copies write the first word only, with the pattern's own first word.
      ab.latency_us = latency_us(session, ga, gb);
      ba.latency_us = latency_us(session, gb, ga);
      payload.pairs.push_back(ab);
      payload.pairs.push_back(ba);
      if (sweep) {
        sweep_pair(session, gate, a, b, buffer_bytes, payload);
      }
      if (fault_planted("p2p")) {
        // GPUCHECK_PLANT_FAULT=p2p: one byte of the received buffer changed (to a value it cannot
        // have had), as a bad link would.
        const auto bad = static_cast<unsigned char>((pattern_word(1024, ga.seed) & 0xFFU) ^ 0xFFU);
        session.make_current(gb);
        GPUCHECK_CU(session.api(), cuMemsetD8, gb.destination + 4096, bad, size_t{1});
      }
      // The whole destination: the sweep's largest copies wrote all of it, else the one size did.
      const uint64_t written = sweep ? buffer_bytes : bytes;
      verifications.push_back(verify_pair(session, ga, gb, written, host));
      verifications.push_back(verify_pair(session, gb, ga, written, host));
    }
  }
  return verifications;
}

/// The peer-to-peer work on every pair of the session's GPUs: one size (64 MiB), and with
/// `sweep` (`--level long`) every size of k_sweep_bytes that the allowance holds.
/// `before_gate`: more preparation of this child's (NCCL's initialisation), run after the peer
/// buffers are filled and before the gate, so that it is off the timed path.
void peers_work(PeerSession& session, bool sweep, const std::function<void()>& before_gate,
                nlohmann::json& out) {
  const CudaApi& api = session.api();
  std::vector<PeerGpu>& gpus = session.gpus();
  protocol::PeersPayload payload = open_peer_access(session);
  // What the access matrix says is written even if a later step fails.
  protocol::write_peers(payload, out);
  enable_peer_access(session, payload);
  std::vector<uint32_t> host;
  const uint64_t buffer_bytes = take_peer_buffers(session, sweep, host);
  const uint64_t bytes = std::min(buffer_bytes, k_copy_bytes); // the standard run's one size
  HostGate gate(api);
  if (before_gate) {
    before_gate();
  }
  protocol::gate::ready_and_wait();
  set_stage("peer copies");
  const auto started = Clock::now();
  const std::vector<Verification> verifications =
      time_every_pair(session, gate, sweep, bytes, buffer_bytes, host, payload);
  // In the order of the pairs (0->1, 1->0, 0->2, ...), whatever the rounds'.
  std::stable_sort(
      payload.pairs.begin(), payload.pairs.end(),
      [](const protocol::PeerPair& x, const protocol::PeerPair& y) {
        return std::tuple(std::min(x.from, x.to), std::max(x.from, x.to), x.from > x.to) <
               std::tuple(std::min(y.from, y.to), std::max(y.from, y.to), y.from > y.to);
      });
  const double elapsed_ms =
      std::chrono::duration<double, std::milli>(Clock::now() - started).count();
  payload.gated = gate.used();
  protocol::write_peers(payload, out);
  for (const Verification& v : verifications) {
    out["verify"].push_back(protocol::to_json(v));
  }
  out["metrics"].push_back(metric("peer_work_ms", elapsed_ms, "ms", "timed copies and checks"));
  // The buffers go now: a work after this one in the child (NCCL) has the allowance to itself.
  for (PeerGpu& gpu : gpus) {
    session.make_current(gpu);
    for (CUdeviceptr* ptr : {&gpu.source, &gpu.destination}) {
      GPUCHECK_CU(api, cuMemFree, *ptr);
      *ptr = 0;
    }
  }
}

// ---- NCCL all-reduce ----------------------------------------------------------------------------

// NCCL's C types, declared by hand (nccl.h is not needed: nothing of NCCL is linked).
// NOLINTBEGIN(readability-identifier-naming)
using ncclComm_t = struct ncclComm*;
using ncclResult_t = int;
constexpr int k_nccl_float32 = 7; ///< ncclFloat32
constexpr int k_nccl_sum = 0;     ///< ncclSum
struct NcclApi {
  ncclResult_t (*ncclGetVersion)(int*) = nullptr;
  ncclResult_t (*ncclCommInitAll)(ncclComm_t*, int, const int*) = nullptr;
  ncclResult_t (*ncclCommDestroy)(ncclComm_t) = nullptr;
  const char* (*ncclGetErrorString)(ncclResult_t) = nullptr;
  ncclResult_t (*ncclAllReduce)(const void*, void*, size_t, int, int, ncclComm_t,
                                CUstream) = nullptr;
  ncclResult_t (*ncclGroupStart)() = nullptr;
  ncclResult_t (*ncclGroupEnd)() = nullptr;
};
// NOLINTEND(readability-identifier-naming)

constexpr uint64_t k_nccl_largest_bytes = 256 * k_mib;
/// What NCCL itself allocates on each GPU beside gpucheck's buffer (its channels' buffers,
/// NCCL_BUFFSIZE 4 MiB each): kept out of the buffer's share of the allowance.
constexpr uint64_t k_nccl_reserve_bytes = 256 * k_mib;
constexpr int k_nccl_iterations = 20; ///< per sample at most (nccl-tests' default)
constexpr int k_nccl_min_iterations = 5;
constexpr double k_nccl_sample_ms = 5.0; ///< each sample's target length, as cuDNN's timing
constexpr int k_nccl_samples = 3;

/// The value rank `rank` sends at index i (kernels/gpucheck_values.h: the kernels write and check
/// the same; the host only where they cannot be loaded).
float nccl_value(uint64_t i, int rank, uint32_t seed) {
  return gpucheck_nccl_value(i, static_cast<uint32_t>(rank), seed);
}

void nccl_check(const NcclApi& nccl, ncclResult_t rc, const char* call) {
  if (rc != 0) {
    const char* text = nccl.ncclGetErrorString != nullptr ? nccl.ncclGetErrorString(rc) : "";
    throw std::runtime_error(fmt::format("{} returned {} ({})", call, rc, text));
  }
}

/// libnccl.so.2 and its entry points, loaded when the child starts (before cuInit and before the
/// engine's setup: the library is large, and loading it touches no GPU).
struct LoadedNccl {
  DynamicLibrary lib;
  NcclApi api;
  std::string library; ///< its real path
  std::string missing; ///< why it cannot be used ("" when it can)
  int version = 0;
};

std::unique_ptr<LoadedNccl> load_nccl() {
  auto loaded = std::make_unique<LoadedNccl>();
  set_stage("nccl load");
  // NVLink SHARP (NVLS) builds multicast objects; it stays off (the engine's environment sets
  // the same): gpucheck never creates multicast memory.
  ::setenv("NCCL_NVLS_ENABLE", "0", 1);
  loaded->lib = DynamicLibrary::open("libnccl.so.2");
  if (!loaded->lib.loaded()) {
    loaded->missing = loaded->lib.load().error.empty() ? "libnccl.so.2 cannot be loaded"
                                                       : loaded->lib.load().error;
    return loaded;
  }
  DynamicLibrary& lib = loaded->lib;
  NcclApi& nccl = loaded->api;
  nccl.ncclGetVersion = lib.first_function<decltype(nccl.ncclGetVersion)>({"ncclGetVersion"});
  nccl.ncclCommInitAll = lib.first_function<decltype(nccl.ncclCommInitAll)>({"ncclCommInitAll"});
  nccl.ncclCommDestroy = lib.first_function<decltype(nccl.ncclCommDestroy)>({"ncclCommDestroy"});
  nccl.ncclGetErrorString =
      lib.first_function<decltype(nccl.ncclGetErrorString)>({"ncclGetErrorString"});
  nccl.ncclAllReduce = lib.first_function<decltype(nccl.ncclAllReduce)>({"ncclAllReduce"});
  nccl.ncclGroupStart = lib.first_function<decltype(nccl.ncclGroupStart)>({"ncclGroupStart"});
  nccl.ncclGroupEnd = lib.first_function<decltype(nccl.ncclGroupEnd)>({"ncclGroupEnd"});
  loaded->library = lib.load().real_path;
  if (nccl.ncclCommInitAll == nullptr || nccl.ncclAllReduce == nullptr ||
      nccl.ncclGroupStart == nullptr || nccl.ncclGroupEnd == nullptr ||
      nccl.ncclCommDestroy == nullptr) {
    loaded->missing =
        fmt::format("{} lacks ncclCommInitAll, ncclAllReduce or ncclGroupStart", loaded->library);
    return loaded;
  }
  if (nccl.ncclGetVersion != nullptr) {
    nccl.ncclGetVersion(&loaded->version);
  }
  return loaded;
}

/// Host memory the NCCL inputs are written from and the sums read into, one chunk at a time:
/// pinned when the driver allows (the copies then run at the link's rate), pageable otherwise.
/// gpucheck's own host memory stays at one chunk whatever the size summed (a buffer of the whole
/// size raised the child's peak by as much).
class Staging {
public:
  static constexpr uint64_t k_bytes = 16 * k_mib;
  explicit Staging(const CudaApi& api) : m_api(&api) {
    void* pinned = nullptr;
    if (api.cuMemHostAlloc != nullptr && api.cuMemFreeHost != nullptr &&
        api.cuMemHostAlloc(&pinned, static_cast<size_t>(k_bytes), CU_MEMHOSTALLOC_PORTABLE) ==
            CUDA_SUCCESS) {
      m_pinned = static_cast<float*>(pinned);
    } else {
      m_pageable.resize(k_bytes / sizeof(float));
    }
  }
  Staging(const Staging&) = delete;
  Staging& operator=(const Staging&) = delete;
  ~Staging() {
    if (m_pinned != nullptr) {
      m_api->cuMemFreeHost(m_pinned);
    }
  }
  [[nodiscard]] float* data() { return m_pinned != nullptr ? m_pinned : m_pageable.data(); }

private:
  const CudaApi* m_api;
  float* m_pinned = nullptr;
  std::vector<float> m_pageable;
};

/// The child's NCCL communicators, one per GPU. Never destroyed: NCCL's work is the child's
/// last, and the process's exit frees them with the contexts (see nccl_work). `error`:
/// ncclCommInitAll failed while the peer copies prepared, reported by the all-reduce's part.
struct NcclComms {
  std::vector<ncclComm_t> comms;
  bool initialised = false;
  std::exception_ptr error;
};

/// The largest sum NCCL's part times within the allowance (its own buffers kept out of it).
uint64_t nccl_largest_bytes(const PeerSession& session) {
  uint64_t largest = k_nccl_largest_bytes;
  if (const auto allowance = session.allowance()) {
    const uint64_t room = *allowance > k_nccl_reserve_bytes ? *allowance - k_nccl_reserve_bytes : 0;
    if (room < k_mib) {
      throw std::runtime_error(fmt::format(
          "gpucheck's memory budget leaves {} MiB per GPU, less than NCCL's own buffers need",
          *allowance / k_mib));
    }
    while (largest > k_mib && largest > room) {
      largest /= 2;
    }
  }
  return largest;
}

/// ncclCommInitAll over every GPU of the session (its topology search, connections and kernel
/// loads: the child's longest step), once.
void nccl_init(PeerSession& session, const LoadedNccl& loaded, NcclComms& comms) {
  if (comms.initialised) {
    return;
  }
  comms.initialised = true;
  static_cast<void>(nccl_largest_bytes(session)); // no communicator where no sum fits
  set_stage("nccl init");
  std::vector<PeerGpu>& gpus = session.gpus();
  std::vector<int> devices;
  for (size_t g = 0; g < gpus.size(); ++g) {
    devices.push_back(gpus[g].description.ordinal); // the child's own CUDA ordinals
  }
  comms.comms.assign(gpus.size(), nullptr);
  nccl_check(
      loaded.api,
      loaded.api.ncclCommInitAll(comms.comms.data(), static_cast<int>(gpus.size()), devices.data()),
      "ncclCommInitAll");
}

/// One all-reduce run over every GPU of the session: a buffer and a stream per GPU (freed with
/// it unless left to the process's exit), summed in place as torch.distributed does.
class NcclRun {
public:
  NcclRun(PeerSession& session, const NcclApi& nccl, std::vector<ncclComm_t>& comms,
          uint64_t largest)
      : m_session(session), m_api(session.api()), m_nccl(nccl), m_comms(comms),
        m_data(session.gpus().size(), 0), m_seed(static_cast<uint32_t>(fresh_seed() % 1000)) {
    std::vector<PeerGpu>& gpus = session.gpus();
    for (size_t g = 0; g < gpus.size(); ++g) {
      session.make_current(gpus[g]);
      GPUCHECK_CU(m_api, cuMemAlloc, &m_data[g], static_cast<size_t>(largest));
      m_streams.push_back(std::make_unique<PeerStream>(m_api));
      // What the timed sums start from (1.0f, ordered before them on their stream): their
      // values do not change the time (the in-place sums grow them to infinity over the
      // sizes); the verified pass writes its own inputs.
      GPUCHECK_CU(m_api, cuMemsetD32Async, m_data[g], 0x3F800000U, static_cast<size_t>(largest / 4),
                  m_streams.back()->get());
    }
    session.load_kernels();
    m_on_gpu = std::all_of(gpus.begin(), gpus.end(),
                           [](const PeerGpu& g) { return static_cast<bool>(g.module); });
  }
  NcclRun(const NcclRun&) = delete;
  NcclRun& operator=(const NcclRun&) = delete;
  ~NcclRun() {
    for (size_t g = 0; g < m_data.size(); ++g) {
      if (m_data[g] != 0 && m_api.cuMemFree != nullptr && m_api.cuCtxSetCurrent != nullptr) {
        m_api.cuCtxSetCurrent(m_session.gpus()[g].context);
        m_api.cuMemFree(m_data[g]);
      }
    }
  }
  /// The buffers are left for the process's exit to free (nothing runs after in this child).
  void leave_to_exit() { m_data.assign(m_data.size(), 0); }

  void all_reduce(uint64_t bytes) {
    nccl_check(m_nccl, m_nccl.ncclGroupStart(), "ncclGroupStart");
    for (size_t g = 0; g < m_data.size(); ++g) {
      nccl_check(m_nccl,
                 m_nccl.ncclAllReduce(reinterpret_cast<const void*>(m_data[g]), // NOLINT
                                      reinterpret_cast<void*>(m_data[g]),       // NOLINT
                                      static_cast<size_t>(bytes / sizeof(float)), k_nccl_float32,
                                      k_nccl_sum, m_comms[g], m_streams[g]->get()),
                 "ncclAllReduce");
    }
    nccl_check(m_nccl, m_nccl.ncclGroupEnd(), "ncclGroupEnd");
  }
  void synchronize() {
    for (size_t g = 0; g < m_data.size(); ++g) {
      m_session.make_current(m_session.gpus()[g]);
      GPUCHECK_CU(m_api, cuStreamSynchronize, m_streams[g]->get());
    }
  }

  /// One size timed as nccl-tests does, on the host per iteration: two warm-up sums, timed
  /// together, size the samples (a sum of 256 MiB takes about 1 ms, so 20 of them per sample
  /// would make the largest size most of the all-reduce's time); the median of k_nccl_samples.
  protocol::NcclSize time_size(uint64_t bytes) {
    const auto warm_began = Clock::now();
    for (int i = 0; i < 2; ++i) {
      all_reduce(bytes);
    }
    synchronize();
    const double warm_ms =
        std::chrono::duration<double, std::milli>(Clock::now() - warm_began).count() / 2;
    const int iterations =
        std::clamp(static_cast<int>(std::ceil(k_nccl_sample_ms / std::max(warm_ms, 1e-3))),
                   k_nccl_min_iterations, k_nccl_iterations);
    std::vector<double> per_op_ms;
    for (int s = 0; s < k_nccl_samples; ++s) {
      const auto began = Clock::now();
      for (int i = 0; i < iterations; ++i) {
        all_reduce(bytes);
      }
      synchronize();
      per_op_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - began).count() /
                          iterations);
    }
    protocol::NcclSize size;
    size.bytes = bytes;
    size.iterations = iterations;
    size.ms = median(per_op_ms);
    size.algbw_gbps = static_cast<double>(bytes) / (size.ms * 1e-3) / 1e9;
    const auto n = static_cast<double>(m_data.size());
    size.busbw_gbps = size.algbw_gbps * 2.0 * (n - 1) / n; // nccl-tests' all_reduce factor
    return size;
  }

  /// One sum of `bytes` from fresh inputs, every GPU's result checked element by element against
  /// every rank's values added up: on the GPUs, or on the host through `staging`.
  std::vector<Verification> verify_size(uint64_t bytes, Staging& staging) {
    std::vector<PeerGpu>& gpus = m_session.gpus();
    set_stage(fmt::format("nccl verify {} MiB: inputs", bytes / k_mib));
    fill(bytes, staging);
    set_stage(fmt::format("nccl verify {} MiB: sum", bytes / k_mib));
    all_reduce(bytes);
    synchronize();
    set_stage(fmt::format("nccl verify {} MiB: check", bytes / k_mib));
    if (fault_planted("nccl")) {
      // GPUCHECK_PLANT_FAULT=nccl: one element of the last GPU's sum changed, as a wrong sum.
      m_session.make_current(gpus.back());
      GPUCHECK_CU(m_api, cuMemsetD8, m_data.back() + 64, static_cast<unsigned char>(0x7F),
                  size_t{1});
    }
    std::vector<Verification> checks(gpus.size());
    for (size_t g = 0; g < gpus.size(); ++g) {
      checks[g].kind = "nccl";
      checks[g].what =
          fmt::format("{} MiB sum on {}", bytes / k_mib, gpus[g].description.pci_bus_id);
      checks[g].checked = bytes / sizeof(float);
    }
    if (m_on_gpu) {
      check_on_gpus(bytes, checks);
    } else {
      check_on_host(bytes, staging, checks);
    }
    return checks;
  }

private:
  [[nodiscard]] float want(uint64_t i) const {
    float sum = 0.0F;
    for (size_t r = 0; r < m_data.size(); ++r) {
      sum += nccl_value(i, static_cast<int>(r), m_seed);
    }
    return sum;
  }

  /// Rank g's inputs for the first `bytes`: on the GPU, or written chunk by chunk through the
  /// staging memory.
  void fill(uint64_t bytes, Staging& staging) {
    std::vector<PeerGpu>& gpus = m_session.gpus();
    for (size_t g = 0; g < gpus.size(); ++g) {
      m_session.make_current(gpus[g]);
      if (m_on_gpu) {
        CUdeviceptr inputs = m_data[g];
        uint64_t n = bytes / sizeof(float);
        uint64_t first = 0;
        auto rank = static_cast<uint32_t>(g);
        uint32_t value_seed = m_seed;
        launch(m_api, gpus[g].module->kernels().nccl_fill, grid_for(gpus[g].sm_count, n, 256), 256,
               m_streams[g]->get(), {&inputs, &n, &first, &rank, &value_seed});
        continue;
      }
      for (uint64_t off = 0; off < bytes; off += Staging::k_bytes) {
        const uint64_t chunk = std::min(Staging::k_bytes, bytes - off);
        float* host = staging.data();
        const uint64_t first = off / sizeof(float);
        parallel_for(chunk / sizeof(float), [&](uint64_t lo, uint64_t hi) {
          for (uint64_t i = lo; i < hi; ++i) {
            host[i] = nccl_value(first + i, static_cast<int>(g), m_seed);
          }
        });
        GPUCHECK_CU(m_api, cuMemcpyHtoD, m_data[g] + off, host, static_cast<size_t>(chunk));
      }
    }
  }

  /// On each GPU: its sums against every rank's values added up there.
  void check_on_gpus(uint64_t bytes, std::vector<Verification>& checks) {
    std::vector<PeerGpu>& gpus = m_session.gpus();
    for (size_t g = 0; g < gpus.size(); ++g) {
      const Mismatches bad =
          count_on_gpu(m_session, gpus[g], [&](CUdeviceptr count, CUdeviceptr first) {
            CUdeviceptr sums = m_data[g];
            uint64_t n = bytes / sizeof(float);
            auto rank_count = static_cast<uint32_t>(gpus.size());
            uint32_t value_seed = m_seed;
            launch(m_api, gpus[g].module->kernels().nccl_check, grid_for(gpus[g].sm_count, n, 256),
                   256, nullptr, {&sums, &n, &rank_count, &value_seed, &count, &first});
          });
      checks[g].mismatches = bad.count;
      if (bad.count > 0) {
        float got = 0.0F;
        GPUCHECK_CU(m_api, cuMemcpyDtoH, &got, m_data[g] + bad.first * sizeof(float), sizeof got);
        checks[g].first_index = bad.first;
        checks[g].got = fmt::format("{}", got);
        checks[g].want = fmt::format("{}", want(bad.first));
      }
    }
  }

  /// On the host, chunk by chunk: the expected sums once, then every GPU's result against them.
  void check_on_host(uint64_t bytes, Staging& staging, std::vector<Verification>& checks) {
    std::vector<float> expected(Staging::k_bytes / sizeof(float)); // one chunk of sums
    for (uint64_t off = 0; off < bytes; off += Staging::k_bytes) {
      const uint64_t chunk = std::min(Staging::k_bytes, bytes - off);
      const uint64_t count = chunk / sizeof(float);
      const uint64_t first = off / sizeof(float);
      parallel_for(count, [&](uint64_t lo, uint64_t hi) {
        for (uint64_t i = lo; i < hi; ++i) {
          expected[i] = want(first + i);
        }
      });
      for (size_t g = 0; g < checks.size(); ++g) {
        Verification& v = checks[g];
        float* host = staging.data();
        // The staging memory may still hold the previous GPU's sums of this very chunk, which
        // are the right values: its first 4 KiB are poisoned, so that a copy that wrote nothing
        // fails (poisoning the whole chunk is host time on the critical path).
        std::fill(host, host + std::min<uint64_t>(count, 1024), -1.0F);
        m_session.make_current(m_session.gpus()[g]);
        GPUCHECK_CU(m_api, cuMemcpyDtoH, host, m_data[g] + off, static_cast<size_t>(chunk));
        const Mismatches bad =
            parallel_mismatches(count, [&](uint64_t i) { return host[i] != expected[i]; });
        if (bad.count > 0 && v.mismatches == 0) {
          v.first_index = first + bad.first;
          v.got = fmt::format("{}", host[bad.first]);
          v.want = fmt::format("{}", expected[bad.first]);
        }
        v.mismatches += bad.count;
      }
    }
  }

  PeerSession& m_session;
  const CudaApi& m_api;
  const NcclApi& m_nccl;
  std::vector<ncclComm_t>& m_comms;
  std::vector<CUdeviceptr> m_data;
  std::vector<std::unique_ptr<PeerStream>> m_streams;
  uint32_t m_seed;
  bool m_on_gpu = false;
};

/// NCCL all-reduce over every GPU of the session: ncclCommInitAll, then float32 sums over a few
/// sizes up to 256 MiB (in place, as torch.distributed), host-timed per iteration as nccl-tests,
/// and one pass per size from fresh inputs verified element by element.
///
/// `leave_to_exit`: nothing runs in this child after it, so the buffers are left for the
/// process's exit to free rather than torn down first (the communicators always are).
void nccl_work(PeerSession& session, const LoadedNccl& loaded, NcclComms& communicators,
               bool leave_to_exit, nlohmann::json& out) {
  protocol::NcclPayload payload;
  payload.ranks = static_cast<int>(session.gpus().size());
  payload.library = loaded.library;
  payload.missing = loaded.missing;
  payload.version = loaded.version;
  protocol::write_nccl(payload, out);
  if (!loaded.missing.empty()) {
    return;
  }
  if (communicators.error) {
    std::rethrow_exception(communicators.error); // ncclCommInitAll failed while preparing
  }
  // One buffer per GPU, summed in place (as torch.distributed), within the allowance.
  const uint64_t largest = nccl_largest_bytes(session);
  nccl_init(session, loaded, communicators);
  std::vector<uint64_t> sizes;
  for (uint64_t bytes : {1 * k_mib, 16 * k_mib, 64 * k_mib, 256 * k_mib}) {
    if (bytes <= largest) {
      sizes.push_back(bytes);
    }
  }
  set_stage("nccl buffers");
  NcclRun run(session, loaded.api, communicators.comms, largest);
  Staging staging(session.api());
  run.all_reduce(sizes.front()); // NCCL's first call sets up its connections: not timed
  run.synchronize();
  protocol::gate::ready_and_wait();
  set_stage("nccl all-reduce");
  for (const uint64_t bytes : sizes) {
    payload.sizes.push_back(run.time_size(bytes));
  }
  set_stage("nccl verify");
  // Verified from fresh inputs, one sum each (the timed loop summed in place over and over).
  std::vector<Verification> verifications;
  for (const uint64_t bytes : sizes) {
    const std::vector<Verification> checks = run.verify_size(bytes, staging);
    verifications.insert(verifications.end(), checks.begin(), checks.end());
  }
  protocol::write_nccl(payload, out);
  for (const Verification& v : verifications) {
    out["verify"].push_back(protocol::to_json(v));
  }
  if (leave_to_exit) {
    // The child's last work: its result goes out now and the process ends with _exit
    // (run_child_mode), which frees the communicators, the buffers and the contexts in the
    // kernel while the parent writes the report: ncclCommDestroy and the frees would be on the
    // run's critical path (docs/performance.md).
    run.leave_to_exit();
  }
}

/// Why the works after `work` cannot run: a sticky error that left a context unusable (they
/// would only repeat it), or "" when every context still answers.
std::string stopped_by(PeerSession& session, const std::string& work) {
  const CudaApi& api = session.api();
  for (PeerGpu& gpu : session.gpus()) {
    if (api.cuCtxSetCurrent == nullptr || api.cuCtxSynchronize == nullptr ||
        api.cuCtxSetCurrent(gpu.context) != CUDA_SUCCESS) {
      continue;
    }
    const CUresult rc = api.cuCtxSynchronize();
    if (rc != CUDA_SUCCESS) {
      return fmt::format("not run: {} failed and left a CUDA context unusable ({})", work,
                         cuda_error_name(rc));
    }
  }
  return {};
}

/// The child's works, as its arguments name them, and what they share.
struct PeerWorks {
  std::vector<std::string> names;
  bool sweep = false;
  std::unique_ptr<LoadedNccl> nccl;
  PeerSession* session = nullptr;
  NcclComms communicators;
};

/// Work `w` of the child into `part`: the peer copies (NCCL's initialisation prepared before
/// their gate when NCCL follows) or the all-reduce.
void run_peer_work(PeerWorks& works, size_t w, nlohmann::json& part) {
  const std::string& name = works.names[w];
  if (name == "peers") {
    // NCCL's initialisation (mostly NCCL loading its kernels) is prepared with the peer
    // copies, before their gate: beside the per-GPU work where the plan allows
    // (span_beside_on_idle_gpus), and off the timed path in any case.
    std::function<void()> init_nccl;
    if (works.nccl && works.nccl->missing.empty() && w + 1 < works.names.size() &&
        works.names[w + 1] == "nccl") {
      init_nccl = [&works] {
        try {
          nccl_init(*works.session, *works.nccl, works.communicators);
        } catch (...) {
          works.communicators.error = std::current_exception();
        }
        set_stage("nccl initialised");
      };
    }
    peers_work(*works.session, works.sweep, init_nccl, part);
  } else if (name == "nccl") {
    nccl_work(*works.session, *works.nccl, works.communicators, w + 1 == works.names.size(), part);
  } else {
    throw std::runtime_error(fmt::format("unknown work '{}'", name));
  }
}

std::vector<int> parse_ordinals(const std::string& text) {
  std::vector<int> ordinals;
  std::stringstream list(text);
  std::string item;
  while (std::getline(list, item, ',')) {
    ordinals.push_back(std::stoi(item));
  }
  if (ordinals.size() < 2) {
    throw std::runtime_error("gpu-peers needs at least two devices");
  }
  return ordinals;
}
} // namespace

nlohmann::json child_gpu_peers(const std::vector<std::string>& args) {
  // args: ORDINALS (comma-separated, as this child sees them) [WORKS: "peers", "nccl",
  // "peers,nccl"] ["sweep": the long level's every size of the peer copies]. One work: its JSON
  // is the result; several: one result line each, in order.
  PeerWorks works;
  works.sweep = args.size() > 2 && args[2] == "sweep";
  works.names = protocol::read_work_list(args.size() > 1 ? args[1] : "peers");
  // NCCL's library is loaded first, while nothing waits for this child (it touches no GPU).
  // The engine's plan may leave the all-reduce out (rule nccl_on_idle_gpus): its reason.
  const char* nccl_not_run = std::getenv("GPUCHECK_NCCL_NOT_RUN");
  const bool run_nccl = nccl_not_run == nullptr || *nccl_not_run == '\0';
  if (run_nccl && std::find(works.names.begin(), works.names.end(), "nccl") != works.names.end()) {
    works.nccl = load_nccl();
  }
  std::unique_ptr<PeerSession> session;
  const std::optional<protocol::PayloadFailure> opened = failure_of([&] {
    session = std::make_unique<PeerSession>(parse_ordinals(args.empty() ? "" : args[0]));
  });
  works.session = session.get();
  std::vector<nlohmann::json> parts;
  std::string stopped; // why the works left are not run
  for (size_t w = 0; w < works.names.size(); ++w) {
    const std::string& name = works.names[w];
    if (name == "nccl" && !run_nccl) {
      protocol::write_work_line({name, std::string(nccl_not_run)}, parts.emplace_back());
    } else if (!stopped.empty()) {
      protocol::write_work_line({name, stopped}, parts.emplace_back());
    } else {
      nlohmann::json part = protocol::work_part(name);
      std::optional<protocol::PayloadFailure> failure = opened;
      if (!failure) {
        failure = failure_of([&] { run_peer_work(works, w, part); });
      }
      if (failure) {
        part["failure"] = protocol::to_json(*failure);
        stopped = session ? stopped_by(*session, name) : std::string();
      }
      part["metrics"].push_back(peak_rss_metric());
      parts.push_back(std::move(part));
    }
    if (w + 1 < works.names.size()) {
      protocol::gate::work_done();
    } else {
      protocol::gate::done();
    }
    if (works.names.size() > 1) {
      process::write_result_line(parts.back());
    }
  }
  set_stage("done");
  // The contexts too are left for the process's exit (see nccl_work): the parent takes the
  // result when it is written, without waiting for their release.
  static_cast<void>(session.release());
  if (works.names.size() == 1) {
    write_timeline(parts.front());
    return parts.front();
  }
  nlohmann::json summary{{"works", args.size() > 1 ? args[1] : std::string()}};
  write_timeline(summary);
  return summary;
}

} // namespace gpucheck::gpu
