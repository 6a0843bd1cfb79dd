// gpu.memtest's child side (the long level): the classic patterns of
// memtest86 and cuda_memtest (walking ones and zeros, moving inversions, random data, address in
// address, modulo-20) over nearly all free device memory, in chunks, every word checked on the
// GPU by gpucheck's own kernels (kernels/gpucheck_kernels.cu, gpucheck_memtest_*). A pattern is
// a list of states: the first is written, each next one is written in the same pass that checks
// the one before (so each pass reads and writes every word once), the last is checked alone.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "gpu/child.hpp"
#include "gpu/cuda_call.hpp"
#include "gpu/driver_objects.hpp"
#include "gpu/kernel_module.hpp"
#include "gpu/memtest_patterns.hpp"
#include "gpu/random.hpp"
#include "gpu/session.hpp"
#include "gpu_checks/memtest/memtest.hpp"
#include "protocol/messages.hpp"
#include "protocol/payloads.hpp"

namespace gpucheck::gpu_checks::memtest {

namespace {
using namespace gpucheck::gpu; // the children's sessions, buffers, kernels and stages
using Clock = std::chrono::steady_clock;
constexpr unsigned k_block = 256;
constexpr uint64_t k_mib = 1ULL << 20;
constexpr uint64_t k_chunk_bytes = 1024 * k_mib;    // one allocation, at most
constexpr uint64_t k_min_chunk_bytes = 64 * k_mib;  // below this, what is left stays untested
constexpr uint64_t k_alignment = 2 * k_mib;         // chunks are whole large pages
constexpr double k_target_fraction = 0.96;          // of the free memory at the gate
constexpr uint64_t k_keep_free_bytes = 256 * k_mib; // for the driver and the error record

struct Chunk {
  CUdeviceptr ptr = 0;
  uint64_t bytes = 0;
  uint64_t first_word = 0; ///< its first word's index in the whole tested range
};

/// The tested memory: chunks allocated until the target is reached or the device says no.
class ChunkSet {
public:
  ChunkSet(const DeviceSession& session, uint64_t target) : m_api(&session.api()) {
    uint64_t chunk = k_chunk_bytes;
    while (m_bytes + k_min_chunk_bytes <= target) {
      const uint64_t want = std::min(chunk, (target - m_bytes) / k_alignment * k_alignment);
      CUdeviceptr ptr = 0;
      const CUresult got = m_api->cuMemAlloc(&ptr, static_cast<size_t>(want));
      if (got == CUDA_ERROR_OUT_OF_MEMORY) {
        if (chunk / 2 < k_min_chunk_bytes) {
          break;
        }
        chunk /= 2; // fragmented or shrinking free memory: smaller pieces
        continue;
      }
      check_cu(got, "cuMemAlloc");
      m_chunks.push_back({ptr, want, m_bytes / 4});
      m_bytes += want;
    }
  }
  ChunkSet(const ChunkSet&) = delete;
  ChunkSet& operator=(const ChunkSet&) = delete;
  ~ChunkSet() {
    for (const Chunk& c : m_chunks) {
      m_api->cuMemFree(c.ptr);
    }
  }
  [[nodiscard]] const std::vector<Chunk>& chunks() const { return m_chunks; }
  [[nodiscard]] uint64_t bytes() const { return m_bytes; }

private:
  const CudaApi* m_api;
  std::vector<Chunk> m_chunks;
  uint64_t m_bytes = 0;
};

class Tester {
public:
  Tester(const DeviceSession& session, const Kernels& kernels, const ChunkSet& chunks,
         const Stream& stream, CUdeviceptr errors)
      : m_session(session), m_kernels(kernels), m_chunks(chunks), m_stream(stream),
        m_errors(errors) {}

  /// Write `state` into every word.
  void write(const gpu::memtest::State& state) { pass(state, nullptr, false); }

  /// Check every word against `state`; write `next` in the same pass when given.
  void check(const gpu::memtest::State& state, const gpu::memtest::State* next) {
    pass(state, next, true);
  }

  /// Flip one bit of one word in the middle of the last chunk (GPUCHECK_PLANT_FAULT=memtest).
  void plant_fault() {
    const Chunk& c = m_chunks.chunks().back();
    const CUdeviceptr where = c.ptr + (c.bytes / 2 / 4) * 4;
    uint32_t word = 0;
    GPUCHECK_CU(m_session.api(), cuMemcpyDtoH, &word, where, size_t{4});
    word ^= 1U << 7;
    GPUCHECK_CU(m_session.api(), cuMemcpyHtoD, where, &word, size_t{4});
  }

  [[nodiscard]] uint64_t moved() const { return m_moved; }
  [[nodiscard]] uint64_t checked_words() const { return m_checked_words; }

private:
  /// One pass over every chunk: write `state` (no check), or check it and write `next` if given.
  void pass(const gpu::memtest::State& state, const gpu::memtest::State* next, bool check) {
    for (const Chunk& c : m_chunks.chunks()) {
      CUdeviceptr words = c.ptr;
      uint64_t n4 = c.bytes / 16;
      uint64_t first = c.first_word;
      uint32_t kind = state.kind;
      uint32_t a = state.a;
      uint32_t b = state.b;
      const unsigned grid = grid_for(m_session, n4, k_block);
      if (!check) {
        launch(m_session.api(), m_kernels.memtest_write, grid, k_block, m_stream.get(),
               {&words, &n4, &first, &kind, &a, &b});
        continue;
      }
      uint32_t rewrite = next != nullptr ? 1 : 0;
      uint32_t kind2 = next != nullptr ? next->kind : 0;
      uint32_t a2 = next != nullptr ? next->a : 0;
      uint32_t b2 = next != nullptr ? next->b : 0;
      CUdeviceptr errors = m_errors;
      launch(m_session.api(), m_kernels.memtest_check, grid, k_block, m_stream.get(),
             {&words, &n4, &first, &kind, &a, &b, &rewrite, &kind2, &a2, &b2, &errors});
    }
    m_stream.synchronize();
    // A write pass writes every byte; a check reads every byte, and writes it again with `next`.
    m_moved += m_chunks.bytes() * (check && next != nullptr ? 2 : 1);
    if (check) {
      m_checked_words += m_chunks.bytes() / 4;
    }
  }

  const DeviceSession& m_session;
  const Kernels& m_kernels;
  const ChunkSet& m_chunks;
  const Stream& m_stream;
  CUdeviceptr m_errors;
  uint64_t m_moved = 0;
  uint64_t m_checked_words = 0;
};

GpucheckMemtestErrors read_errors(const CudaApi& api, CUdeviceptr errors) {
  GpucheckMemtestErrors host{};
  GPUCHECK_CU(api, cuMemcpyDtoH, &host, errors, sizeof host);
  return host;
}
} // namespace

namespace {
/// The patterns, round after round, until the duration passes or the engine asks to stop (then
/// the pattern under way is checked as far as it was written); errors noted as they come.
class PatternRounds {
public:
  PatternRounds(const CudaApi& api, Tester& tester, CUdeviceptr errors,
                std::chrono::milliseconds duration, protocol::MemtestReport& report)
      : m_api(api), m_tester(tester), m_errors(errors), m_duration(duration), m_report(report) {}

  /// Run every round; the report gets each pattern's passes and errors, and `rounds`.
  void run() {
    uint32_t round_seed = static_cast<uint32_t>(fresh_seed());
    for (;;) {
      bool complete = true;
      for (const gpu::memtest::Pattern& pattern : gpu::memtest::round(round_seed)) {
        if (over() && !m_report.patterns.empty()) {
          complete = false;
          break;
        }
        if (!run_pattern(pattern)) {
          complete = false;
          break;
        }
      }
      if (complete) {
        ++m_report.rounds;
      }
      if (!complete || over()) {
        break;
      }
      round_seed = round_seed * 0x9E3779B1U + 1U;
    }
    m_report.elapsed_s = std::chrono::duration<double>(Clock::now() - m_start).count();
    m_report.interrupted = m_interrupted;
  }

private:
  bool over() {
    if (protocol::gate::stop_requested()) {
      m_interrupted = true;
    }
    return m_interrupted || Clock::now() - m_start >= m_duration;
  }

  /// One pattern: written, then checked state by state; false when time ran out before its
  /// last state (what was written is still checked).
  bool run_pattern(const gpu::memtest::Pattern& pattern) {
    const std::vector<gpu::memtest::State>& states = pattern.states;
    m_tester.write(states.front());
    if (!m_planted) {
      m_tester.plant_fault();
      m_planted = true;
    }
    int count = 1;
    size_t s = 0;
    for (; s + 1 < states.size(); ++s) {
      if (over()) {
        break;
      }
      m_tester.check(states[s], &states[s + 1]);
      ++count;
    }
    m_tester.check(states[s], nullptr);
    ++count;
    note_errors(pattern.name);
    std::vector<protocol::MemtestPattern>& passes = m_report.patterns;
    const auto it = std::find_if(passes.begin(), passes.end(),
                                 [&](const auto& p) { return p.name == pattern.name; });
    if (it == passes.end()) {
      passes.push_back({pattern.name, count});
    } else {
      it->passes += count;
    }
    return s + 1 >= states.size();
  }

  void note_errors(const std::string& pattern) {
    const GpucheckMemtestErrors e = read_errors(m_api, m_errors);
    const uint64_t stored = std::min<uint64_t>(e.count, GPUCHECK_MEMTEST_RECORDED);
    for (uint64_t i = std::min<uint64_t>(m_seen_errors, GPUCHECK_MEMTEST_RECORDED); i < stored;
         ++i) {
      m_report.errors.push_back({fmt::format("0x{:x}", e.address[i]), pattern,
                                 fmt::format("0x{:08x}", e.expected[i]),
                                 fmt::format("0x{:08x}", e.observed[i])});
    }
    m_seen_errors = e.count;
  }

  const CudaApi& m_api;
  Tester& m_tester;
  CUdeviceptr m_errors;
  std::chrono::milliseconds m_duration;
  protocol::MemtestReport& m_report;
  Clock::time_point m_start = Clock::now();
  bool m_interrupted = false;
  bool m_planted = !fault_planted("memtest");
  uint64_t m_seen_errors = 0;
};

/// The memory test's report, figures and verification.
void write_results(const protocol::MemtestReport& report, const ChunkSet& chunks,
                   const Tester& tester, const GpucheckMemtestErrors& e, Output<Payload>& out) {
  out.payload = report;
  const double seconds = report.elapsed_s;
  out.metrics.push_back({"memtest_throughput_gbps",
                         seconds > 0 ? static_cast<double>(tester.moved()) / seconds / 1e9 : 0.0,
                         "GB/s", "bytes written plus bytes read, per second"});
  const uint64_t free_bytes = report.free_bytes;
  out.metrics.push_back({"memtest_coverage_percent",
                         free_bytes > 0 ? 100.0 * static_cast<double>(chunks.bytes()) /
                                              static_cast<double>(free_bytes)
                                        : 0.0,
                         "%",
                         fmt::format("{} of {} MiB free, in {} chunks", chunks.bytes() / k_mib,
                                     free_bytes / k_mib, chunks.chunks().size())});
  Verification v{std::string(k_verify_kind),
                 fmt::format("every word of {} MiB under {} patterns, {} full rounds",
                             chunks.bytes() / k_mib, report.patterns.size(), report.rounds)};
  v.checked = tester.checked_words();
  v.mismatches = e.count;
  if (e.count > 0) {
    v.first_index = 0;
    v.got = fmt::format("0x{:08x} at 0x{:x}", e.observed[0], e.address[0]);
    v.want = fmt::format("0x{:08x}", e.expected[0]);
  }
  out.verify.push_back(std::move(v));
}
} // namespace

void work(gpu::DeviceSession& session, const gpu::KernelModule& module, Output<Payload>& out) {
  using namespace gpucheck::gpu;
  const std::chrono::milliseconds duration = long_level_duration();
  session.wait_for_gate();
  const CudaApi& api = session.api();
  set_stage("memtest allocate");
  const uint64_t free_bytes = session.free_bytes();
  const uint64_t target =
      std::min(static_cast<uint64_t>(static_cast<double>(free_bytes) * k_target_fraction),
               free_bytes > k_keep_free_bytes ? free_bytes - k_keep_free_bytes : 0);
  DeviceBuffer errors(session, sizeof(GpucheckMemtestErrors));
  GPUCHECK_CU(api, cuMemsetD8, errors.get(), static_cast<unsigned char>(0),
              sizeof(GpucheckMemtestErrors));
  const ChunkSet chunks(session, target);
  protocol::MemtestReport report;
  report.free_bytes = free_bytes;
  report.tested_bytes = chunks.bytes();
  report.chunks = static_cast<int>(chunks.chunks().size());
  report.duration_s = std::chrono::duration<double>(duration).count();
  if (chunks.chunks().empty()) {
    throw std::runtime_error(fmt::format(
        "no memory to test: {} MiB free, none of it could be allocated", free_bytes / k_mib));
  }
  Stream stream(session);
  Tester tester(session, module.kernels(), chunks, stream, errors.get());
  set_stage("memtest patterns");
  PatternRounds(api, tester, errors.get(), duration, report).run();
  session.done_with_gpu();
  const GpucheckMemtestErrors e = read_errors(api, errors.get());
  report.bytes_moved = tester.moved();
  report.error_count = e.count;
  write_results(report, chunks, tester, e, out);
}

} // namespace gpucheck::gpu_checks::memtest
