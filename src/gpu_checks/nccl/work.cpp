// gpu.nccl's child side, a work of the child over every GPU after the peer copies
// (gpu/span_child.cpp): the libnccl.so.2 the loader picks, ncclCommInitAll prepared before the
// peer copies' gate, float32 sums over every GPU timed as nccl-tests times them, each verified.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "gpu/child.hpp"
#include "gpu/cuda_call.hpp"
#include "gpu/gpu_children.hpp"
#include "gpu/host_checks.hpp"
#include "gpu/kernel_module.hpp"
#include "gpu/peer_session.hpp"
#include "gpu/random.hpp"
#include "gpu/session.hpp"
#include "gpu_checks/nccl/nccl.hpp"
#include "kernels/gpucheck_values.h"
#include "platform/dynlib.hpp"
#include "protocol/messages.hpp"
#include "protocol/payloads.hpp"

namespace gpucheck::gpu_checks::nccl {

namespace {
using namespace gpucheck::gpu; // the children's sessions, kernels and stages
using Clock = std::chrono::steady_clock;

constexpr uint64_t k_mib = 1ULL << 20;

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
               bool leave_to_exit, Output<Payload>& out) {
  protocol::NcclPayload payload;
  payload.ranks = static_cast<int>(session.gpus().size());
  payload.library = loaded.library;
  payload.missing = loaded.missing;
  payload.version = loaded.version;
  out.payload = payload; // what was loaded, even if a later step fails
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
  out.payload = payload;
  out.verify.insert(out.verify.end(), verifications.begin(), verifications.end());
  if (leave_to_exit) {
    // The child's last work: its result goes out now and the process ends with _exit
    // (run_child_mode), which frees the communicators, the buffers and the contexts in the
    // kernel while the parent writes the report: ncclCommDestroy and the frees would be on the
    // run's critical path (docs/performance.md).
    run.leave_to_exit();
  }
}

/// What the child's steps share: the library (load), the communicators (prepare, run).
struct State {
  std::unique_ptr<LoadedNccl> loaded;
  NcclComms communicators;
};

State& state() {
  static State s;
  return s;
}
} // namespace

void load() {
  state().loaded = load_nccl();
}

void prepare(gpu::PeerSession& session) {
  State& s = state();
  if (!s.loaded || !s.loaded->missing.empty()) {
    return; // its work says why
  }
  try {
    nccl_init(session, *s.loaded, s.communicators);
  } catch (...) {
    s.communicators.error = std::current_exception();
  }
  set_stage("nccl initialised");
}

void work(gpu::PeerSession& session, const gpu::SpanStep& step, Output<Payload>& out) {
  State& s = state();
  if (!s.loaded) {
    load(); // run by hand, with nothing loaded before the session
  }
  nccl_work(session, *s.loaded, s.communicators, step.last, out);
}

} // namespace gpucheck::gpu_checks::nccl
