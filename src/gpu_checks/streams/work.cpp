// gpu.streams' child side: stream priorities, an event-timed kernel, a captured graph replayed
// and its result checked against the CPU.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <vector>

#include "gpu/child.hpp"
#include "gpu/cuda_call.hpp"
#include "gpu/driver_objects.hpp"
#include "gpu/kernel_module.hpp"
#include "gpu/random.hpp"
#include "gpu/session.hpp"
#include "gpu_checks/streams/streams.hpp"

namespace gpucheck::gpu_checks::streams {

namespace {
using gpu::CudaApi;
using gpu::DeviceBuffer;
using gpu::DeviceSession;
using gpu::Event;
using gpu::Kernels;
using gpu::Stream;
constexpr uint32_t k_words = 1U << 20;
constexpr unsigned k_block = 256;
constexpr int k_replays = 3;
constexpr int k_replay_batches = 5;

/// RAII for a captured graph and its executable instance.
class CapturedGraph {
public:
  explicit CapturedGraph(const CudaApi& api) : m_api(api) {}
  CapturedGraph(const CapturedGraph&) = delete;
  CapturedGraph& operator=(const CapturedGraph&) = delete;
  ~CapturedGraph() {
    if (m_exec != nullptr && m_api.cuGraphExecDestroy != nullptr) {
      m_api.cuGraphExecDestroy(m_exec);
    }
    if (m_graph != nullptr && m_api.cuGraphDestroy != nullptr) {
      m_api.cuGraphDestroy(m_graph);
    }
  }
  CUgraph& graph() { return m_graph; }
  CUgraphExec& exec() { return m_exec; }

private:
  const CudaApi& m_api;
  CUgraph m_graph = nullptr;
  CUgraphExec m_exec = nullptr;
};

/// Each word of `result` against its `host` value after `applied` steps x -> x * mul + add,
/// composed once (wrapping, as on the GPU) into x -> scale * x + shift.
void check_affine_steps(const std::vector<uint32_t>& host, const std::vector<uint32_t>& result,
                        int applied, uint32_t mul, uint32_t add, protocol::PayloadVerification& v) {
  uint32_t scale = 1;
  uint32_t shift = 0;
  for (int step = 0; step < applied; ++step) {
    scale *= mul;
    shift = shift * mul + add;
  }
  v.checked = host.size();
  for (size_t i = 0; i < host.size(); ++i) {
    const uint32_t want = scale * host[i] + shift;
    if (result[i] != want && v.mismatches++ == 0) {
      v.first_index = i;
      v.got = fmt::format("0x{:08X}", result[i]);
      v.want = fmt::format("0x{:08X}", want);
    }
  }
}

/// One launch of the affine step x -> x * mul + add over `n` words at `ptr`.
struct AffineStep {
  CUdeviceptr ptr = 0;
  uint32_t n = 0;
  uint32_t mul = 1;
  uint32_t add = 0;
  unsigned grid = 1;
  void launch(const CudaApi& api, CUfunction affine, CUstream stream) {
    gpu::launch(api, affine, grid, k_block, stream, {&ptr, &n, &mul, &add});
  }
};

/// Two steps captured from `low` into a graph and replayed in batches (the caller keeps cuDNN's
/// lane quiet); the median batch per replay is a metric of `out`. Returns the steps applied.
int replay_graph(DeviceSession& session, CUfunction affine, AffineStep& step, const Stream& low,
                 Output<Payload>& out) {
  const CudaApi& api = session.api();
  gpu::set_stage("graph capture");
  CapturedGraph graph(api);
  GPUCHECK_CU(api, cuStreamBeginCapture, low.get(), CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
  step.launch(api, affine, low.get());
  step.launch(api, affine, low.get());
  GPUCHECK_CU(api, cuStreamEndCapture, low.get(), &graph.graph());
  GPUCHECK_CU(api, cuGraphInstantiate, &graph.exec(), graph.graph(), 0ULL);
  gpu::set_stage("graph replay");
  Event replay_start(session);
  Event replay_end(session);
  // The median of several batches: one stall of the driver (a module another thread of the
  // child loads) is not the graph's replay time.
  std::vector<double> batch_ms;
  int applied = 0;
  for (int b = 0; b < k_replay_batches; ++b) {
    replay_start.record(low.get());
    for (int r = 0; r < k_replays; ++r) {
      GPUCHECK_CU(api, cuGraphLaunch, graph.exec(), low.get());
      applied += 2;
    }
    replay_end.record(low.get());
    batch_ms.push_back(gpu::elapsed_ms(api, replay_start, replay_end));
  }
  std::sort(batch_ms.begin(), batch_ms.end());
  const double replay_ms = batch_ms[batch_ms.size() / 2];
  out.metrics.push_back(
      {"graph_replay_us", replay_ms * 1e3 / k_replays, "us",
       fmt::format("per replay of a 2-kernel graph, median of {} batches of {} replays",
                   k_replay_batches, k_replays)});
  return applied;
}
} // namespace

void work(DeviceSession& session, const gpu::KernelModule& module, Output<Payload>& out) {
  // Priorities, events and graphs need no second hardware queue (nothing here runs concurrently).
  const CudaApi& api = session.api();
  session.wait_for_gate();
  const Kernels& k = module.kernels();

  gpu::set_stage("stream priorities");
  Priorities& priorities = out.payload.priorities;
  GPUCHECK_CU(api, cuCtxGetStreamPriorityRange, &priorities.least, &priorities.greatest);
  Stream high(session, priorities.greatest);
  Stream low(session, priorities.least);
  GPUCHECK_CU(api, cuStreamGetPriority, high.get(), &priorities.high_stream);
  GPUCHECK_CU(api, cuStreamGetPriority, low.get(), &priorities.low_stream);

  gpu::set_stage("event-timed kernel");
  gpu::SplitMix64 rng(gpu::fresh_seed());
  DeviceBuffer words(session, uint64_t{k_words} * 4);
  std::vector<uint32_t> host(k_words);
  for (uint32_t& w : host) {
    w = static_cast<uint32_t>(rng.next());
  }
  GPUCHECK_CU(api, cuMemcpyHtoDAsync, words.get(), host.data(), size_t{k_words} * 4, high.get());
  AffineStep step{words.get(), k_words, static_cast<uint32_t>(rng.next()) | 1U,
                  static_cast<uint32_t>(rng.next()), gpu::grid_for(session, k_words, k_block)};
  Event start(session);
  Event end(session);
  // Nothing of cuDNN's lane inside the timed windows (the kernel, the replays).
  auto quiet = session.quiet();
  start.record(high.get());
  step.launch(api, k.affine_step, high.get());
  end.record(high.get());
  const double kernel_ms = gpu::elapsed_ms(api, start, end);
  out.payload.event_ms = kernel_ms;
  out.metrics.push_back({"event_timed_kernel_us", kernel_ms * 1e3, "us",
                         fmt::format("one affine step over {} words", k_words)});

  const int applied = 1 + replay_graph(session, k.affine_step, step, low, out);
  quiet.reset();
  if (gpu::fault_planted("graph")) {
    GPUCHECK_CU(api, cuMemsetD32Async, words.get() + 4ULL * (rng.next() % k_words), 0x0BADF00DU,
                size_t{1}, low.get());
  }
  std::vector<uint32_t> result(k_words);
  GPUCHECK_CU(api, cuMemcpyDtoHAsync, result.data(), words.get(), size_t{k_words} * 4, low.get());
  low.synchronize();
  session.done_with_gpu();
  protocol::PayloadVerification v{
      std::string(k_verify_kind),
      fmt::format("1 event-timed + {} graph-replayed affine steps over {} "
                  "words",
                  2 * k_replays * k_replay_batches, k_words)};
  check_affine_steps(host, result, applied, step.mul, step.add, v);
  out.verify.push_back(v);
}

} // namespace gpucheck::gpu_checks::streams
