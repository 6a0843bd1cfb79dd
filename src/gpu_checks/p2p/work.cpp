// gpu.p2p's child side, a work of the child over every GPU (gpu/span_child.cpp): peer-to-peer
// copies between every pair with nvbandwidth's method (copy-engine copies between device buffers
// with peer access enabled, queued behind a gate and timed with events on the issuing stream,
// median of samples), every destination verified.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "gpu/child.hpp"
#include "gpu/cuda_call.hpp"
#include "gpu/gpu_children.hpp"
#include "gpu/host_checks.hpp"
#include "gpu/kernel_module.hpp"
#include "gpu/peer_session.hpp"
#include "gpu/random.hpp"
#include "gpu/session.hpp"
#include "gpu_checks/p2p/p2p.hpp"
#include "protocol/messages.hpp"
#include "protocol/payloads.hpp"

namespace gpucheck::gpu_checks::p2p {

namespace {
using namespace gpucheck::gpu; // the children's sessions, kernels and stages
using Clock = std::chrono::steady_clock;

using Clock = std::chrono::steady_clock;

constexpr uint64_t k_mib = 1ULL << 20;
constexpr uint64_t k_copy_bytes = 64 * k_mib; ///< one copy (nvbandwidth's small-buffer size)
constexpr uint64_t k_min_copy_bytes = 4 * k_mib;
constexpr int k_samples = 3;         ///< median of three, as nvbandwidth
constexpr int k_max_copies = 32;     ///< per stream and sample: the push buffer must not fill up
constexpr double k_sample_ms = 10.0; ///< each sample's target length
constexpr int k_latency_copies = 64; ///< 4-byte copies queued back to back

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
                Output<Payload>& out) {
  const CudaApi& api = session.api();
  std::vector<PeerGpu>& gpus = session.gpus();
  protocol::PeersPayload payload = open_peer_access(session);
  // What the access matrix says is written even if a later step fails.
  out.payload = payload;
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
  out.payload = payload;
  out.verify.insert(out.verify.end(), verifications.begin(), verifications.end());
  out.metrics.push_back({"peer_work_ms", elapsed_ms, "ms", "timed copies and checks"});
  // The buffers go now: a work after this one in the child (NCCL) has the allowance to itself.
  for (PeerGpu& gpu : gpus) {
    session.make_current(gpu);
    for (CUdeviceptr* ptr : {&gpu.source, &gpu.destination}) {
      GPUCHECK_CU(api, cuMemFree, *ptr);
      *ptr = 0;
    }
  }
}

} // namespace

void work(gpu::PeerSession& session, const gpu::SpanStep& step, Output<Payload>& out) {
  peers_work(session, step.sweep, step.before_gate, out);
}

} // namespace gpucheck::gpu_checks::p2p
