// gpu-streams child: the tuning features frameworks rely on. Streams with priorities exist and
// report the priority they were given, an event pair times a kernel, and a CUDA graph captured
// from a stream replays with the right result.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <vector>

#include "gpu/child.hpp"
#include "gpu/cuda_call.hpp"
#include "gpu/driver_objects.hpp"
#include "gpu/gpu_children.hpp"
#include "gpu/kernel_module.hpp"
#include "gpu/random.hpp"
#include "gpu/session.hpp"
#include "protocol/payloads.hpp"

namespace gpucheck::gpu {

namespace {
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
                        int applied, uint32_t mul, uint32_t add, Verification& v) {
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
} // namespace

void streams_work(DeviceSession& session, const KernelModule& module, nlohmann::json& out) {
  // Priorities, events and graphs need no second hardware queue (nothing here runs concurrently).
  const CudaApi& api = session.api();
  session.wait_for_gate();
  out["device"] = session.describe();
  const Kernels& k = module.kernels();

  set_stage("stream priorities");
  protocol::StreamsPayload own; // this child's own fields
  protocol::StreamPriorities& priorities = own.priorities;
  GPUCHECK_CU(api, cuCtxGetStreamPriorityRange, &priorities.least, &priorities.greatest);
  Stream high(session, priorities.greatest);
  Stream low(session, priorities.least);
  GPUCHECK_CU(api, cuStreamGetPriority, high.get(), &priorities.high_stream);
  GPUCHECK_CU(api, cuStreamGetPriority, low.get(), &priorities.low_stream);

  set_stage("event-timed kernel");
  SplitMix64 rng(fresh_seed());
  DeviceBuffer words(session, uint64_t{k_words} * 4);
  std::vector<uint32_t> host(k_words);
  for (uint32_t& w : host) {
    w = static_cast<uint32_t>(rng.next());
  }
  GPUCHECK_CU(api, cuMemcpyHtoDAsync, words.get(), host.data(), size_t{k_words} * 4, high.get());
  CUdeviceptr ptr = words.get();
  uint32_t n = k_words;
  uint32_t mul = static_cast<uint32_t>(rng.next()) | 1U;
  uint32_t add = static_cast<uint32_t>(rng.next());
  const unsigned grid = grid_for(session, n, k_block);
  Event start(session);
  Event end(session);
  // Nothing of cuDNN's lane inside the timed windows (the kernel, the replays).
  auto quiet = session.quiet();
  start.record(high.get());
  launch(api, k.affine_step, grid, k_block, high.get(), {&ptr, &n, &mul, &add});
  end.record(high.get());
  const double kernel_ms = elapsed_ms(api, start, end);
  own.event_ms = kernel_ms;
  // Written once both are known; a failure after this point keeps them in the payload.
  protocol::write_streams(own, out);
  out["metrics"].push_back(metric("event_timed_kernel_us", kernel_ms * 1e3, "us",
                                  fmt::format("one affine step over {} words", k_words)));
  int applied = 1;

  set_stage("graph capture");
  // The captured graph: two dependent steps on the low-priority stream.
  CapturedGraph graph(api);
  GPUCHECK_CU(api, cuStreamBeginCapture, low.get(), CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
  launch(api, k.affine_step, grid, k_block, low.get(), {&ptr, &n, &mul, &add});
  launch(api, k.affine_step, grid, k_block, low.get(), {&ptr, &n, &mul, &add});
  GPUCHECK_CU(api, cuStreamEndCapture, low.get(), &graph.graph());
  GPUCHECK_CU(api, cuGraphInstantiate, &graph.exec(), graph.graph(), 0ULL);
  set_stage("graph replay");
  Event replay_start(session);
  Event replay_end(session);
  // The median of several batches: one stall of the driver (a module another thread of the
  // child loads) is not the graph's replay time.
  std::vector<double> batch_ms;
  for (int b = 0; b < k_replay_batches; ++b) {
    replay_start.record(low.get());
    for (int r = 0; r < k_replays; ++r) {
      GPUCHECK_CU(api, cuGraphLaunch, graph.exec(), low.get());
      applied += 2;
    }
    replay_end.record(low.get());
    batch_ms.push_back(elapsed_ms(api, replay_start, replay_end));
  }
  quiet.reset();
  std::sort(batch_ms.begin(), batch_ms.end());
  const double replay_ms = batch_ms[batch_ms.size() / 2];
  out["metrics"].push_back(
      metric("graph_replay_us", replay_ms * 1e3 / k_replays, "us",
             fmt::format("per replay of a 2-kernel graph, median of {} batches of {} replays",
                         k_replay_batches, k_replays)));
  if (fault_planted("graph")) {
    GPUCHECK_CU(api, cuMemsetD32Async, words.get() + 4ULL * (rng.next() % k_words), 0x0BADF00DU,
                size_t{1}, low.get());
  }
  std::vector<uint32_t> result(k_words);
  GPUCHECK_CU(api, cuMemcpyDtoHAsync, result.data(), words.get(), size_t{k_words} * 4, low.get());
  low.synchronize();
  session.done_with_gpu();
  Verification v{"graph", fmt::format("1 event-timed + {} graph-replayed affine steps over {} "
                                      "words",
                                      2 * k_replays * k_replay_batches, k_words)};
  check_affine_steps(host, result, applied, mul, add, v);
  out["verify"].push_back(protocol::to_json(v));
}

} // namespace gpucheck::gpu
