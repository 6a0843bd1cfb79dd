// gpu.bandwidth's child side: copy-engine bandwidth with nvbandwidth's method (docs/checks.md,
// "gpu.bandwidth"): pinned host memory allocated after pinning the thread to the GPU's NUMA node,
// copies queued behind a spin-kernel gate and timed with events on the copying stream (about 5 ms
// per sample), median of 3 samples after one discarded; GB/s with 1e9. Every destination buffer is
// verified after copying.
#include <sched.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <sstream>
#include <vector>

#include "gpu/child.hpp"
#include "gpu/cuda_call.hpp"
#include "gpu/driver_objects.hpp"
#include "gpu/gpu_children.hpp"
#include "gpu/host_checks.hpp"
#include "gpu/kernel_module.hpp"
#include "gpu/random.hpp"
#include "gpu/session.hpp"
#include "gpu_checks/bandwidth/bandwidth.hpp"
#include "gpu_checks/bandwidth/copy_series.hpp"
#include "protocol/payloads.hpp"

namespace gpucheck::gpu_checks::bandwidth {

namespace {
using namespace gpucheck::gpu; // the children's sessions, buffers, kernels and stages
using protocol::PayloadMetric;
using protocol::PayloadVerification;

/// Where Bench writes what it measured: the work's metrics and verifications.
struct Sink {
  std::vector<PayloadMetric>& metrics;
  std::vector<PayloadVerification>& verify;
  template <typename P> static Sink of(Output<P>& out) { return {out.metrics, out.verify}; }
};

constexpr uint64_t k_mib = 1ULL << 20;
constexpr uint64_t k_host_copy_bytes = 64 * k_mib; // per host buffer; two are pinned
constexpr uint64_t k_pageable_bytes = 32 * k_mib;  // host-timed synchronous copies: no gate
constexpr uint64_t k_d2d_max_bytes = 256 * k_mib;  // per device buffer of the local copy
constexpr uint64_t k_d2d_min_bytes = 16 * k_mib;
constexpr double k_sample_target_ms = 5.0;
constexpr int k_min_copies = 2;
constexpr int k_max_copies = 32; // queue depth: cuMemcpyAsync may block when the queue is full
constexpr int k_samples = 3;     // nvbandwidth's default --testSamples
constexpr int k_pageable_repeats = 3;
constexpr uint64_t k_gate_timeout_ns = 3'000'000'000ULL;
constexpr unsigned k_block = 256;
constexpr uint64_t k_host_check_chunk_words = 2 * k_mib;

std::string read_sysfs(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

/// "0000:3B:00.0" or "00000000:3b:00.0" -> "0000:3b:00.0" (the sysfs spelling).
std::string sysfs_bdf(std::string bus_id) {
  std::transform(bus_id.begin(), bus_id.end(), bus_id.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const auto colon = bus_id.find(':');
  if (colon != std::string::npos && colon > 4) {
    bus_id.erase(0, colon - 4);
  }
  return bus_id;
}

std::vector<int> parse_cpu_list(const std::string& text) {
  std::vector<int> cpus;
  std::stringstream ss(text);
  std::string part;
  while (std::getline(ss, part, ',')) {
    const auto dash = part.find('-');
    try {
      const int lo = std::stoi(part.substr(0, dash));
      const int hi = dash == std::string::npos ? lo : std::stoi(part.substr(dash + 1));
      for (int c = lo; c <= hi && c < CPU_SETSIZE; ++c) {
        cpus.push_back(c);
      }
    } catch (const std::exception&) {
      return {};
    }
  }
  return cpus;
}

/// Pin this thread to the CPUs local to the GPU, so pinned pages come from its NUMA node.
protocol::NumaPlacement pin_to_gpu_numa_node(const std::string& bus_id) {
  const std::string dir = "/sys/bus/pci/devices/" + sysfs_bdf(bus_id);
  protocol::NumaPlacement info;
  info.local_cpus = read_sysfs(dir + "/local_cpulist");
  info.numa_node = read_sysfs(dir + "/numa_node");
  const std::vector<int> cpus = parse_cpu_list(info.local_cpus);
  if (!cpus.empty()) {
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int c : cpus) {
      CPU_SET(c, &set);
    }
    info.pinned = ::sched_setaffinity(0, sizeof set, &set) == 0;
  }
  return info;
}

protocol::PcieLinkReading read_link(const std::string& bus_id) {
  const std::string dir = "/sys/bus/pci/devices/" + sysfs_bdf(bus_id);
  const auto value = [&dir](const char* name) -> std::optional<std::string> {
    std::string text = read_sysfs(dir + "/" + name);
    return text.empty() ? std::nullopt : std::optional<std::string>(std::move(text));
  };
  return {value("current_link_speed"), value("current_link_width"), value("max_link_speed"),
          value("max_link_width")};
}

class Bench {
public:
  Bench(const DeviceSession& session, const KernelModule& module, Sink out)
      : m_session(session), m_api(session.api()), m_module(module), m_out(out), m_rng(fresh_seed()),
        m_start(session), m_end(session), m_gate_event(session) {
    for (auto& events : m_pair_events) {
      for (std::unique_ptr<Event>& event : events) {
        event = std::make_unique<Event>(session);
      }
    }
    if (m_module.loaded()) {
      m_latch = std::make_unique<PinnedBuffer>(
          session, 64, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP);
      std::memset(m_latch->get(), 0, 64);
      GPUCHECK_CU(m_api, cuMemHostGetDevicePointer, &m_latch_device, m_latch->get(), 0U);
      m_counters = std::make_unique<DeviceBuffer>(session, 16);
    }
  }

  uint32_t seed() { return static_cast<uint32_t>(m_rng.next()); }
  uint64_t random_below(uint64_t n) { return m_rng.next() % n; }
  [[nodiscard]] bool gated() const { return m_module.loaded(); }
  [[nodiscard]] int gate_timeouts() const { return m_gate_timeouts; }

  using Enqueue = std::function<void(CUstream, int copies)>;

  /// Queue the spin-kernel gate on `stream`: work queued behind it waits until open_gate().
  /// nullptr (no gate) when gpucheck's kernels did not load.
  volatile int* close_gate(CUstream stream) {
    volatile int* latch = m_latch ? m_latch->as<int>() : nullptr;
    if (latch != nullptr) {
      latch[0] = 0;
      latch[1] = 0;
      CUdeviceptr latch_ptr = m_latch_device;
      CUdeviceptr timed_out_ptr = m_latch_device + sizeof(int);
      uint64_t timeout = k_gate_timeout_ns;
      launch(m_api, m_module.kernels().spin_gate, 1, 1, stream,
             {&latch_ptr, &timed_out_ptr, &timeout});
    }
    return latch;
  }

  static void open_gate(volatile int* latch) {
    if (latch != nullptr) {
      std::atomic_thread_fence(std::memory_order_seq_cst);
      latch[0] = 1;
    }
  }

  /// After the gated work: the gate kernel says whether it gave up waiting.
  void count_gate_timeout(const volatile int* latch) {
    if (latch != nullptr && latch[1] != 0) {
      ++m_gate_timeouts;
    }
  }

  /// One sample: `copies` measured copies on `measured`, queued behind the gate, then released
  /// at once. Returns the event time in ms.
  double sample(const Stream& measured, const Enqueue& enqueue, int copies) {
    volatile int* latch = close_gate(measured.get());
    enqueue(measured.get(), 1); // warm-up copy behind the gate
    m_start.record(measured.get());
    enqueue(measured.get(), copies);
    m_end.record(measured.get());
    open_gate(latch);
    measured.synchronize();
    count_gate_timeout(latch);
    return elapsed_ms(m_api, m_start, m_end);
  }

  /// A sample whose gate opens at `open_at` (steady_clock, shared by every process of the
  /// host): the copies of several GPUs' children, each behind its own gate, start together.
  /// Returns the event time in ms and the host-clock window [gate opened, copies over].
  struct WindowSample {
    double ms = 0.0;
    int64_t opened_ns = 0;
    int64_t over_ns = 0;
  };
  WindowSample sample_at(const Stream& measured, const Enqueue& enqueue, int copies,
                         std::chrono::steady_clock::time_point open_at) {
    volatile int* latch = close_gate(measured.get());
    m_start.record(measured.get());
    enqueue(measured.get(), copies);
    m_end.record(measured.get());
    while (std::chrono::steady_clock::now() < open_at) {
    }
    const auto since_epoch = [] {
      return std::chrono::duration_cast<std::chrono::nanoseconds>(
                 std::chrono::steady_clock::now().time_since_epoch())
          .count();
    };
    WindowSample out;
    out.opened_ns = since_epoch();
    open_gate(latch);
    measured.synchronize();
    out.over_ns = since_epoch();
    count_gate_timeout(latch);
    out.ms = elapsed_ms(m_api, m_start, m_end);
    return out;
  }

  struct PairSample {
    std::array<double, 2> ms{};
    bool covered = false;
  };

  /// One sample of measure_pair(): both streams behind one gate, released at once.
  PairSample sample_pair(const std::array<const Stream*, 2>& streams,
                         const std::array<Enqueue, 2>& enqueues, const std::array<int, 2>& copies,
                         const std::array<int, 2>& extra) {
    volatile int* latch = close_gate(streams[0]->get());
    m_gate_event.record(streams[0]->get());
    GPUCHECK_CU(m_api, cuStreamWaitEvent, streams[1]->get(), m_gate_event.get(), 0U);
    for (size_t k = 0; k < 2; ++k) {
      const CUstream stream = streams[k]->get();
      enqueues[k](stream, 1); // warm-up copy: both streams are copying before either is timed
      m_pair_events[k][0]->record(stream);
      enqueues[k](stream, copies[k]);
      m_pair_events[k][1]->record(stream);
      enqueues[k](stream, extra[k]);
      m_pair_events[k][2]->record(stream);
    }
    open_gate(latch);
    streams[0]->synchronize();
    streams[1]->synchronize();
    count_gate_timeout(latch);
    // Every event on the GPU's clock, from the gate that released both streams.
    std::array<std::array<double, 3>, 2> at{};
    for (size_t k = 0; k < 2; ++k) {
      for (size_t e = 0; e < 3; ++e) {
        at[k][e] = elapsed_ms(m_api, m_gate_event, *m_pair_events[k][e]);
      }
    }
    PairSample sample;
    sample.ms = {at[0][1] - at[0][0], at[1][1] - at[1][0]};
    sample.covered = at[1][2] >= at[0][1] && at[0][2] >= at[1][1];
    return sample;
  }

  /// Median GB/s over k_samples samples after one discarded sample that sizes the copy count.
  Series measure(const std::string& name, const std::string& note, uint64_t bytes,
                 const Stream& measured, const Enqueue& enqueue) {
    const double first = sample(measured, enqueue, k_min_copies);
    const double per_copy = std::max(first / k_min_copies, 1e-3);
    const int copies = std::clamp(static_cast<int>(std::ceil(k_sample_target_ms / per_copy)),
                                  k_min_copies, k_max_copies);
    std::vector<double> gbps;
    for (int s = 0; s < k_samples; ++s) {
      const double ms = sample(measured, enqueue, copies);
      gbps.push_back(static_cast<double>(bytes) * copies / (ms * 1e-3) / 1e9);
    }
    const auto [lo, hi] = std::minmax_element(gbps.begin(), gbps.end());
    const double med = median(gbps);
    m_out.metrics.push_back(
        {name, med, "GB/s",
         fmt::format("{}; median of {} x {} copies of {} MiB (min {:.1f}, max {:.1f}){}", note,
                     k_samples, copies, bytes / k_mib, *lo, *hi, gated() ? "" : ", ungated")});
    return {name, med, *lo, *hi, copies};
  }

  /// Both directions at once, each timed in the same samples: stream k queues one warm-up copy,
  /// its timed copies between two events, then extra copies so that it is still copying when the
  /// other stream's timed copies end (checked on the GPU's clock: a sample where it was not is
  /// left out of the median). Median GB/s per direction over k_samples samples, after one
  /// discarded sample that sizes both counts.
  [[nodiscard]] protocol::BidirectionalCounts
  measure_pair(const std::array<std::string, 2>& names, const std::array<std::string, 2>& notes,
               uint64_t bytes, const std::array<const Stream*, 2>& streams,
               const std::array<Enqueue, 2>& enqueues) {
    std::array<int, 2> copies = {k_min_copies, k_min_copies};
    std::array<int, 2> extra = {k_min_copies, k_min_copies};
    PairSample first = sample_pair(streams, enqueues, copies, extra);
    std::array<double, 2> per_copy{};
    for (size_t k = 0; k < 2; ++k) {
      per_copy[k] = std::max(first.ms[k] / k_min_copies, 1e-3);
      copies[k] = std::clamp(static_cast<int>(std::ceil(k_sample_target_ms / per_copy[k])),
                             k_min_copies, k_max_copies);
    }
    for (size_t k = 0; k < 2; ++k) {
      // Stream k copies for (1 + copies + extra) x per_copy; the other's timed copies end after
      // (1 + its copies) x its per_copy: cover that with half to spare (with a tenth, some runs
      // had no covered sample: the first sample's rates are rough). The extra copies are not
      // timed and cost little.
      const size_t o = 1 - k;
      const double needed = 1.5 * (1 + copies[o]) * per_copy[o] / per_copy[k];
      extra[k] = std::clamp(static_cast<int>(std::ceil(needed)) - 1 - copies[k], 1, k_max_copies);
    }
    std::array<std::vector<double>, 2> gbps;
    int uncovered = 0;
    for (int s = 0; s < k_samples; ++s) {
      const PairSample sample = sample_pair(streams, enqueues, copies, extra);
      if (!sample.covered) {
        ++uncovered;
        continue;
      }
      for (size_t k = 0; k < 2; ++k) {
        gbps[k].push_back(static_cast<double>(bytes) * copies[k] / (sample.ms[k] * 1e-3) / 1e9);
      }
    }
    for (size_t k = 0; k < 2; ++k) {
      if (gbps[k].empty()) {
        m_out.metrics.push_back(
            {names[k], 0.0, "GB/s",
             fmt::format("{}; not measured: in none of {} samples did the other direction run "
                         "for the whole timed window",
                         notes[k], k_samples)});
        continue;
      }
      const auto [lo, hi] = std::minmax_element(gbps[k].begin(), gbps[k].end());
      m_out.metrics.push_back(
          {names[k], median(gbps[k]), "GB/s",
           fmt::format("{}; median of {} x {} copies of {} MiB (min {:.1f}, max {:.1f}), the other "
                       "direction copying throughout{}{}",
                       notes[k], gbps[k].size(), copies[k], bytes / k_mib, *lo, *hi,
                       uncovered != 0
                           ? fmt::format(" ({} samples without overlap left out)", uncovered)
                           : "",
                       gated() ? "" : ", ungated")});
    }
    return {{copies.begin(), copies.end()}, {extra.begin(), extra.end()}, uncovered};
  }

  void fill_device(CUdeviceptr ptr, uint64_t bytes, uint32_t seed, const Stream& stream) {
    const uint64_t words = bytes / 4;
    if (m_module.loaded()) {
      uint64_t n = words;
      uint32_t s = seed;
      launch(m_api, m_module.kernels().fill_pattern, grid_for(m_session, words, k_block), k_block,
             stream.get(), {&ptr, &n, &s});
      stream.synchronize();
      return;
    }
    std::vector<uint32_t> chunk(k_host_check_chunk_words);
    for (uint64_t off = 0; off < words; off += chunk.size()) {
      const uint64_t count = std::min<uint64_t>(chunk.size(), words - off);
      for (uint64_t i = 0; i < count; ++i) {
        chunk[i] = pattern_word(off + i, seed);
      }
      GPUCHECK_CU(m_api, cuMemcpyHtoD, ptr + off * 4, chunk.data(), size_t{count} * 4);
    }
  }

  static void fill_host(void* ptr, uint64_t bytes, uint32_t seed) {
    auto* words = static_cast<uint32_t*>(ptr);
    parallel_for(bytes / 4, [words, seed](uint64_t lo, uint64_t hi) {
      for (uint64_t i = lo; i < hi; ++i) {
        words[i] = pattern_word(i, seed);
      }
    });
  }

  static Verification check_host(const void* ptr, uint64_t bytes, uint32_t seed, std::string what) {
    Verification v{"copy", std::move(what)};
    const auto* words = static_cast<const uint32_t*>(ptr);
    v.checked = bytes / 4;
    const Mismatches bad = parallel_mismatches(
        v.checked, [words, seed](uint64_t i) { return words[i] != pattern_word(i, seed); });
    v.mismatches = bad.count;
    if (v.mismatches != 0) {
      v.first_index = bad.first;
      v.got = fmt::format("0x{:08X}", words[v.first_index]);
      v.want = fmt::format("0x{:08X}", pattern_word(v.first_index, seed));
    }
    return v;
  }

  static void zero_host(void* ptr, uint64_t bytes) {
    auto* words = static_cast<uint32_t*>(ptr);
    parallel_for(bytes / 4,
                 [words](uint64_t lo, uint64_t hi) { std::memset(words + lo, 0, (hi - lo) * 4); });
  }

  Verification check_device(CUdeviceptr ptr, uint64_t bytes, uint32_t seed, std::string what,
                            const Stream& stream) {
    const uint64_t words = bytes / 4;
    if (!m_module.loaded()) {
      Verification v{"copy", std::move(what)};
      std::vector<uint32_t> chunk(k_host_check_chunk_words);
      for (uint64_t off = 0; off < words; off += chunk.size()) {
        const uint64_t count = std::min<uint64_t>(chunk.size(), words - off);
        GPUCHECK_CU(m_api, cuMemcpyDtoH, chunk.data(), ptr + off * 4, size_t{count} * 4);
        for (uint64_t i = 0; i < count; ++i) {
          const uint32_t want = pattern_word(off + i, seed);
          if (chunk[i] != want && v.mismatches++ == 0) {
            v.first_index = off + i;
            v.got = fmt::format("0x{:08X}", chunk[i]);
            v.want = fmt::format("0x{:08X}", want);
          }
        }
      }
      v.checked = words;
      return v;
    }
    GPUCHECK_CU(m_api, cuMemsetD32Async, m_counters->get(), 0U, size_t{2}, stream.get());
    GPUCHECK_CU(m_api, cuMemsetD32Async, m_counters->get() + 8, 0xFFFFFFFFU, size_t{2},
                stream.get());
    uint64_t n = words;
    uint32_t s = seed;
    CUdeviceptr mismatches = m_counters->get();
    CUdeviceptr first_bad = m_counters->get() + 8;
    launch(m_api, m_module.kernels().check_pattern, grid_for(m_session, words, k_block), k_block,
           stream.get(), {&ptr, &n, &s, &mismatches, &first_bad});
    uint64_t counters[2] = {0, 0};
    GPUCHECK_CU(m_api, cuMemcpyDtoHAsync, counters, m_counters->get(), size_t{16}, stream.get());
    stream.synchronize();
    Verification v{"copy", std::move(what)};
    v.checked = words;
    v.mismatches = counters[0];
    if (v.mismatches != 0) {
      v.first_index = counters[1];
      uint32_t got = 0;
      GPUCHECK_CU(m_api, cuMemcpyDtoH, &got, ptr + counters[1] * 4, size_t{4});
      v.got = fmt::format("0x{:08X}", got);
      v.want = fmt::format("0x{:08X}", pattern_word(counters[1], seed));
    }
    return v;
  }

  /// GPUCHECK_PLANT_FAULT=copy: flip one byte of a destination, as a broken copy would.
  void plant_device_fault(CUdeviceptr ptr, uint64_t bytes) {
    if (!fault_planted("copy")) {
      return;
    }
    const uint64_t offset = random_below(bytes);
    unsigned char byte = 0;
    GPUCHECK_CU(m_api, cuMemcpyDtoH, &byte, ptr + offset, size_t{1});
    GPUCHECK_CU(m_api, cuMemsetD8, ptr + offset, static_cast<unsigned char>(byte ^ 0xA5U),
                size_t{1});
  }

  void record(const Verification& v) { m_out.verify.push_back(v); }

private:
  const DeviceSession& m_session;
  const CudaApi& m_api;
  const KernelModule& m_module;
  Sink m_out;
  SplitMix64 m_rng;
  Event m_start;
  Event m_end;
  Event m_gate_event;
  /// measure_pair(): per stream, its timed copies' start and end, and the end of its extra copies.
  std::array<std::array<std::unique_ptr<Event>, 3>, 2> m_pair_events;
  std::unique_ptr<PinnedBuffer> m_latch;
  CUdeviceptr m_latch_device = 0;
  std::unique_ptr<DeviceBuffer> m_counters;
  int m_gate_timeouts = 0;
};

/// Pageable memory, timed with the host clock: never behind the gate (a pageable copy waits
/// for the stream, which would wait for the host).
void pageable(const DeviceSession& session, Bench& bench, CUdeviceptr device, uint64_t bytes,
              const Stream& stream, std::vector<PayloadMetric>& metrics) {
  const CudaApi& api = session.api();
  set_stage("pageable copies");
  std::unique_ptr<uint32_t[]> host(new uint32_t[bytes / 4]);
  const uint32_t up_seed = bench.seed();
  Bench::fill_host(host.get(), bytes, up_seed);
  using Clock = std::chrono::steady_clock;
  std::vector<double> h2d;
  std::vector<double> d2h;
  GPUCHECK_CU(api, cuMemcpyHtoD, device, host.get(), size_t{bytes}); // warm-up
  for (int r = 0; r < k_pageable_repeats; ++r) {
    const auto t0 = Clock::now();
    GPUCHECK_CU(api, cuMemcpyHtoD, device, host.get(), size_t{bytes});
    h2d.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  bench.record(bench.check_device(device, bytes, up_seed, "pageable host->device", stream));
  const uint32_t down_seed = bench.seed();
  bench.fill_device(device, bytes, down_seed, stream);
  GPUCHECK_CU(api, cuMemcpyDtoH, host.get(), device, size_t{bytes}); // warm-up
  for (int r = 0; r < k_pageable_repeats; ++r) {
    Bench::zero_host(host.get(), bytes);
    const auto t0 = Clock::now();
    GPUCHECK_CU(api, cuMemcpyDtoH, host.get(), device, size_t{bytes});
    d2h.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  bench.record(Bench::check_host(host.get(), bytes, down_seed, "pageable device->host"));
  const std::string note = fmt::format("pageable host memory, host-timed, median of {} x {} MiB",
                                       k_pageable_repeats, bytes / k_mib);
  metrics.push_back(
      {"h2d_pageable_gbps", static_cast<double>(bytes) / median(h2d) / 1e9, "GB/s", note});
  metrics.push_back(
      {"d2h_pageable_gbps", static_cast<double>(bytes) / median(d2h) / 1e9, "GB/s", note});
}

/// What the host copies leave for the copies together (the same child, next work):
/// a pinned host buffer, its device twin, and the rates measured alone.
struct KeptCopies {
  std::unique_ptr<PinnedBuffer> host;
  std::unique_ptr<DeviceBuffer> device;
  uint64_t bytes = 0;
  double h2d_gbps = 0.0;
  double d2h_gbps = 0.0;
};

std::unique_ptr<KeptCopies>& kept_copies() {
  static std::unique_ptr<KeptCopies> kept;
  return kept;
}

/// The pinned host copies of host_work(), each series verified: host->device into dev_a,
/// device->host from dev_b, and both at once on the pinned buffer's two halves.
struct HostCopies {
  const CudaApi& api;
  Bench& bench;
  const PinnedBuffer& host;
  DeviceBuffer& dev_a;
  DeviceBuffer& dev_b;
  Stream& s1;
  Stream& s2;
  uint64_t bytes;

  [[nodiscard]] Bench::Enqueue h2d(CUdeviceptr dst, const void* src, uint64_t n) const {
    return [api = &api, dst, src, n](CUstream stream, int copies) {
      for (int c = 0; c < copies; ++c) {
        GPUCHECK_CU(*api, cuMemcpyHtoDAsync, dst, src, size_t{n}, stream);
      }
    };
  }
  [[nodiscard]] Bench::Enqueue d2h(void* dst, CUdeviceptr src, uint64_t n) const {
    return [api = &api, dst, src, n](CUstream stream, int copies) {
      for (int c = 0; c < copies; ++c) {
        GPUCHECK_CU(*api, cuMemcpyDtoHAsync, dst, src, size_t{n}, stream);
      }
    };
  }

  /// Host->device, timed, then checked (`before_check` between: the link read, a planted fault).
  Series up(const std::string& what, const std::function<void()>& before_check = {}) {
    const uint32_t seed = bench.seed();
    Bench::fill_host(host.get(), bytes, seed);
    GPUCHECK_CU(api, cuMemsetD32Async, dev_a.get(), 0U, size_t{bytes / 4}, s1.get());
    Series series = bench.measure("h2d_gbps", "host->device, pinned, copy engine", bytes, s1,
                                  h2d(dev_a.get(), host.get(), bytes));
    if (before_check) {
      before_check();
    }
    bench.record(bench.check_device(dev_a.get(), bytes, seed, what, s1));
    return series;
  }

  /// Device->host into the pinned buffer (host->device's source, verified: reused), then checked.
  Series down(const std::string& what) {
    const uint32_t seed = bench.seed();
    bench.fill_device(dev_b.get(), bytes, seed, s1);
    Bench::zero_host(host.get(), bytes);
    Series series = bench.measure("d2h_gbps", "device->host, pinned, copy engine", bytes, s1,
                                  d2h(host.get(), dev_b.get(), bytes));
    bench.record(Bench::check_host(host.get(), bytes, seed, what));
    return series;
  }

  /// Both directions at once: the first half goes up to dev_a while the first half of dev_b
  /// comes down into the second half.
  [[nodiscard]] protocol::BidirectionalCounts both_ways() {
    const uint64_t half = bytes / 2;
    auto* const up_src = static_cast<std::byte*>(host.get());
    std::byte* const down_dst = up_src + half;
    const uint32_t seed_up = bench.seed();
    const uint32_t seed_down = bench.seed();
    Bench::fill_host(up_src, half, seed_up);
    bench.fill_device(dev_b.get(), half, seed_down, s1);
    Bench::zero_host(down_dst, half);
    const protocol::BidirectionalCounts counts = bench.measure_pair(
        {"h2d_bidir_gbps", "d2h_bidir_gbps"},
        {"host->device while device->host runs", "device->host while host->device runs"}, half,
        {&s1, &s2}, {h2d(dev_a.get(), up_src, half), d2h(down_dst, dev_b.get(), half)});
    bench.record(bench.check_device(dev_a.get(), half, seed_up, "bidirectional host->device", s1));
    bench.record(Bench::check_host(down_dst, half, seed_down, "bidirectional device->host"));
    return counts;
  }
};

constexpr double k_together_target_ms = 12.0; // each direction's copies, at the rate alone
constexpr auto k_together_lead = std::chrono::milliseconds(5);     // from the go to the first gate
constexpr auto k_together_spacing = std::chrono::milliseconds(40); // between the two gates
} // namespace

// One queue serves it: both directions still run at once on the copy engines (the same
// bidirectional figures with one queue as with the default eight: docs/performance.md).
void host_work(DeviceSession& session, const KernelModule& module, Output<Payload>& out) {
  const CudaApi& api = session.api();
  out.payload.numa = pin_to_gpu_numa_node(session.pci_bus_id());
  // Courtesy: stay inside the budget (min(1 GiB, 10% free)); shrink the local copy first.
  const auto host_bytes_for = [](uint64_t budget) {
    uint64_t bytes = k_host_copy_bytes;
    while (bytes > 4 * k_mib && 2 * bytes > budget / 2) {
      bytes /= 2;
    }
    return bytes;
  };
  // Pinned host memory (on the GPU's NUMA node) before the gate: it takes no device memory, and
  // pinning costs tens of milliseconds.
  set_stage("allocate pinned host memory");
  const uint64_t pinned_bytes = host_bytes_for(session.budget_bytes());
  // One pinned buffer serves every pinned copy (the bidirectional ones use its two halves):
  // gpucheck's own host memory stays under 100 MiB with the pageable buffer.
  auto pinned_a = std::make_unique<PinnedBuffer>(session, pinned_bytes, CU_MEMHOSTALLOC_PORTABLE);
  const PinnedBuffer& host_a = *pinned_a;
  session.wait_for_gate();
  out.device = session.description();

  const uint64_t host_bytes = std::min(pinned_bytes, host_bytes_for(session.budget_bytes()));
  const uint64_t pageable_bytes = std::min(host_bytes, k_pageable_bytes);
  out.payload.sizes = protocol::CopySizes{host_bytes, 0, pageable_bytes};

  set_stage("allocate");
  auto dev_a_owned = std::make_unique<DeviceBuffer>(session, host_bytes);
  DeviceBuffer& dev_a = *dev_a_owned;
  DeviceBuffer dev_b(session, host_bytes);
  Stream s1(session);
  Stream s2(session);
  Bench bench(session, module, Sink::of(out));

  HostCopies copies{api, bench, host_a, dev_a, dev_b, s1, s2, host_bytes};
  set_stage("host->device copies");
  Series h2d_alone = copies.up("pinned host->device", [&] {
    // The link read while it is busy, not idle.
    out.payload.link = read_link(session.pci_bus_id());
    bench.plant_device_fault(dev_a.get(), host_bytes);
  });
  set_stage("device->host copies");
  Series d2h_alone = copies.down("pinned device->host");
  // A degraded link slows both directions alike; one direction far below the other is most
  // often a passing disturbance (another VM's DMA on the host: seen on virtual machines, gone
  // in the next run). The slower direction is measured again, verified again, and the better
  // series reported, the first one named in its note; a fault that stays is seen by both
  // series and still judged.
  const double up_median = h2d_alone.median;
  const double down_median = d2h_alone.median;
  if (needs_second_series(up_median, down_median)) {
    if (up_median < down_median) {
      set_stage("host->device copies, again");
      h2d_alone = keep_better_series(out.metrics, "h2d_gbps", h2d_alone,
                                     copies.up("pinned host->device, again"), down_median);
    } else {
      set_stage("device->host copies, again");
      d2h_alone = keep_better_series(out.metrics, "d2h_gbps", d2h_alone,
                                     copies.down("pinned device->host, again"), up_median);
    }
  }
  set_stage("bidirectional copies");
  out.payload.bidirectional = copies.both_ways();

  // The pinned buffer and its device twin are kept for the copies together
  // (together_work()); with the pageable buffer, 1.5 x host_bytes of host memory.
  auto kept = std::make_unique<KeptCopies>();
  kept->bytes = host_bytes;
  kept->h2d_gbps = h2d_alone.median;
  kept->d2h_gbps = d2h_alone.median;
  pageable(session, bench, dev_a.get(), pageable_bytes, s1, out.metrics);
  out.payload.gate_timeouts = bench.gate_timeouts();
  out.payload.gated = bench.gated();
  kept->host = std::move(pinned_a);
  kept->device = std::move(dev_a_owned);
  kept_copies() = std::move(kept);
}

// The device-local copy: gpu.bandwidth's last part, its own work so that the engine times it
// once nothing else of gpucheck's runs on the GPU (engine rule local_copies_last).
void local_work(DeviceSession& session, const KernelModule& module, Output<Payload>& out) {
  const CudaApi& api = session.api();
  session.wait_for_gate();
  out.device = session.description();
  uint64_t d2d_bytes = k_d2d_max_bytes;
  while (d2d_bytes > k_d2d_min_bytes && 2 * d2d_bytes > session.budget_bytes()) {
    d2d_bytes /= 2;
  }
  out.payload.sizes = protocol::CopySizes{0, d2d_bytes, 0};
  set_stage("device-local copies");
  Stream s1(session);
  Bench bench(session, module, Sink::of(out));
  DeviceBuffer dev_src(session, d2d_bytes);
  DeviceBuffer dev_dst(session, d2d_bytes);
  const uint32_t seed = bench.seed();
  bench.fill_device(dev_src.get(), d2d_bytes, seed, s1);
  GPUCHECK_CU(api, cuMemsetD32Async, dev_dst.get(), 0U, size_t{d2d_bytes / 4}, s1.get());
  const CUdeviceptr src = dev_src.get();
  const CUdeviceptr dst = dev_dst.get();
  const Series d2d =
      bench.measure("d2d_gbps", "device-local copy, bytes copied per second", d2d_bytes, s1,
                    [&api, src, dst, d2d_bytes](CUstream stream, int copies) {
                      for (int c = 0; c < copies; ++c) {
                        GPUCHECK_CU(api, cuMemcpyDtoDAsync, dst, src, size_t{d2d_bytes}, stream);
                      }
                    });
  out.metrics.push_back({"d2d_dram_gbps", 2.0 * d2d.median, "GB/s",
                         "device-local copy counting bytes read + written"});
  bench.record(bench.check_device(dev_dst.get(), d2d_bytes, seed, "device-local copy", s1));
  out.payload.gate_timeouts = bench.gate_timeouts();
  out.payload.gated = bench.gated();
}

void release_kept() {
  kept_copies().reset();
}

void together_work(DeviceSession& session, const KernelModule& module,
                   Output<TogetherPayload>& out) {
  const CudaApi& api = session.api();
  const std::unique_ptr<KeptCopies> kept = std::move(kept_copies());
  if (!kept || !kept->host || !kept->device) {
    throw std::runtime_error("gpu.bandwidth's own copies did not run in this child: nothing to "
                             "copy together");
  }
  Stream stream(session);
  Bench bench(session, module, Sink::of(out));
  const uint64_t bytes = kept->bytes;
  const auto copies_for = [bytes](double gbps) {
    const double per_copy_ms = gbps > 0.0 ? static_cast<double>(bytes) / (gbps * 1e9) * 1e3 : 1.0;
    return std::clamp(static_cast<int>(std::ceil(k_together_target_ms / per_copy_ms)), 1,
                      k_max_copies);
  };
  const int up_copies = copies_for(kept->h2d_gbps);
  const int down_copies = copies_for(kept->d2h_gbps);
  const uint32_t seed = bench.seed();
  Bench::fill_host(kept->host->get(), bytes, seed);
  const CUdeviceptr device = kept->device->get();
  void* host = kept->host->get();
  session.wait_for_gate();
  const auto go = std::chrono::steady_clock::now();
  out.device = session.description();
  set_stage("host->device copies, every GPU at once");
  GPUCHECK_CU(api, cuMemsetD32Async, device, 0U, size_t{bytes / 4}, stream.get());
  const Bench::WindowSample up = bench.sample_at(
      stream,
      [&api, device, host, bytes](CUstream s, int copies) {
        for (int c = 0; c < copies; ++c) {
          GPUCHECK_CU(api, cuMemcpyHtoDAsync, device, host, size_t{bytes}, s);
        }
      },
      up_copies, go + k_together_lead);
  set_stage("device->host copies, every GPU at once");
  Bench::zero_host(host, bytes);
  const Bench::WindowSample down = bench.sample_at(
      stream,
      [&api, device, host, bytes](CUstream s, int copies) {
        for (int c = 0; c < copies; ++c) {
          GPUCHECK_CU(api, cuMemcpyDtoHAsync, host, device, size_t{bytes}, s);
        }
      },
      down_copies, go + k_together_lead + k_together_spacing);
  session.done_with_gpu();
  // The device got the host's pattern, and the host got it back.
  bench.record(bench.check_device(device, bytes, seed, "host->device, every GPU at once", stream));
  bench.record(Bench::check_host(host, bytes, seed, "device->host, every GPU at once"));
  const auto rate = [bytes](const Bench::WindowSample& s, int copies) {
    return s.ms > 0.0 ? static_cast<double>(bytes) * copies / (s.ms * 1e-3) / 1e9 : 0.0;
  };
  const double up_gbps = rate(up, up_copies);
  const double down_gbps = rate(down, down_copies);
  out.payload =
      protocol::CopiesTogetherPayload{{up_gbps, up.opened_ns, up.over_ns, up_copies},
                                      {down_gbps, down.opened_ns, down.over_ns, down_copies},
                                      bytes,
                                      bench.gate_timeouts()};
  out.metrics.push_back(
      {"h2d_together_gbps", up_gbps, "GB/s",
       fmt::format("host->device while every GPU copies; one sample of {} copies of {} MiB{}",
                   up_copies, bytes / k_mib, bench.gated() ? "" : ", ungated")});
  out.metrics.push_back(
      {"d2h_together_gbps", down_gbps, "GB/s",
       fmt::format("device->host while every GPU copies; one sample of {} copies of {} MiB{}",
                   down_copies, bytes / k_mib, bench.gated() ? "" : ", ungated")});
}

nlohmann::json own_child(const std::vector<std::string>& args) {
  // Alone, the check's result as the engine's three works give it on one GPU: the host copies,
  // then the device-local copy folded in (the copies together need several GPUs' children).
  const auto alone = [](DeviceSession& session, const KernelModule& module, nlohmann::json& out) {
    run_typed<Payload>(&host_work, session, module, out);
    release_kept();
    nlohmann::json local = nlohmann::json::object();
    run_typed<Payload>(&local_work, session, module, local);
    protocol::fold_local_copies(out, local);
  };
  const std::optional<protocol::Work> work = protocol::work_named(k_work);
  return gpu::run_single_work(args, {work.value_or(protocol::Work{}), alone, false, true});
}

} // namespace gpucheck::gpu_checks::bandwidth
