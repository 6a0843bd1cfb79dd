// The cuDNN check's graph (backend) API: the engine configs cuDNN's heuristics offer for a timed
// convolution (a few in a standard run, every one with `full`) are screened with one short
// sample each, the fastest few timed like the legacy algorithms, and the best verified.
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "gpu/child.hpp"
#include "gpu_checks/cudnn/graph.hpp"
#include "gpu_checks/cudnn/runner.hpp"

namespace gpucheck::gpu_checks::cudnn {

using namespace gpucheck::gpu; // the children's stages, checks and helpers

namespace {
/// Configs timed after screening with `full` (a standard run times the fastest one).
constexpr size_t k_graph_finalists_full = 3;
} // namespace

std::vector<CudnnRunner::ScreenedPlan>
CudnnRunner::screen_plans(ConvGraph& graph, const ConvCase& cc, const ConvOperands& ops,
                          protocol::ConvGraphScreening& screening) {
  const std::vector<GraphEngineConfig>& configs = graph.configs();
  const std::vector<size_t> chosen =
      configs_to_try(configs, m_full, cc.precision == Precision::fp32);
  std::vector<ScreenedPlan> screened;
  const auto count_status = [&](cudnnStatus_t status) {
    ++screening.skipped_statuses[m_dnn.cudnnGetErrorString(status)];
  };
  set_stage("cudnn graph plans " + cc.label);
  for (const size_t i : chosen) {
    int64_t ws = 0;
    cudnnStatus_t status = CUDNN_STATUS_SUCCESS;
    const int plan = graph.build_plan(i, ws, status);
    if (plan < 0) {
      ++screening.refused;
      count_status(status);
      continue;
    }
    if (static_cast<uint64_t>(ws) > ops.workspace_cap) {
      ++screening.workspace_too_large;
      continue;
    }
    status = graph.execute(plan);
    if (status != CUDNN_STATUS_SUCCESS) {
      ++screening.failed;
      count_status(status);
      continue;
    }
    screened.push_back({i, plan, screen_calls([&] {
                          check_dnn(m_dnn, graph.execute(plan), "cudnnBackendExecute");
                        })});
  }
  std::stable_sort(screened.begin(), screened.end(),
                   [](const ScreenedPlan& a, const ScreenedPlan& b) { return a.ms < b.ms; });
  for (const ScreenedPlan& sc : screened) {
    screening.screened.push_back({describe(configs[sc.config]),
                                  configs[sc.config].fallback ? "fallback" : "A",
                                  configs[sc.config].rank, sc.ms});
  }
  screening.offered = configs.size();
  screening.tried = chosen.size();
  return screened;
}

std::string CudnnRunner::time_finalists(ConvGraph& graph, const ConvCase& cc, ConvOperands& ops,
                                        const std::vector<ScreenedPlan>& screened,
                                        protocol::ConvGraph& record, BestConvolution& best) {
  const std::vector<GraphEngineConfig>& configs = graph.configs();
  const auto run_plan = [&](int plan) {
    check_dnn(m_dnn, graph.execute(plan), "cudnnBackendExecute");
  };
  const size_t finalists = std::min(screened.size(), m_full ? k_graph_finalists_full : size_t{1});
  size_t fastest = 0;
  double best_graph_ms = 0.0;
  set_stage("cudnn graph timing " + cc.label);
  for (size_t f = 0; f < finalists; ++f) {
    const double ms = time_calls([&] { run_plan(screened[f].plan); }, screened[f].ms);
    if (f == 0 || ms < best_graph_ms) {
      fastest = f;
      best_graph_ms = ms;
    }
  }
  const GraphEngineConfig& config = configs[screened[fastest].config];
  const std::string what = "graph API " + describe(config);
  set_stage("cudnn graph verify " + cc.label);
  verify(
      cc, ops, [&] { run_plan(screened[fastest].plan); }, what, false);
  record.best = protocol::ConvGraphBest{config.engine,
                                        describe(config),
                                        config.numerical_notes,
                                        config.fallback ? "fallback" : "A",
                                        config.rank,
                                        best_graph_ms,
                                        ops.flops / (best_graph_ms * 1e-3) / 1e12};
  if (best_graph_ms < best.ms) {
    best = {what, best_graph_ms};
  }
  return fmt::format("graph API {} {:.3f} ms ({} of {} configs screened)", describe(config),
                     best_graph_ms, screened.size(), configs.size());
}

std::string CudnnRunner::time_graph(const ConvCase& cc, const ConvDescriptors& d, ConvOperands& ops,
                                    protocol::ConvGraph& graph_record, BestConvolution& best) {
  graph_record.available = m_graph.available;
  if (!m_graph.available) {
    return "graph API not available";
  }
  set_stage("cudnn graph " + cc.label);
  try {
    const GraphConvSpec spec{.n = d.n,
                             .c = cc.c,
                             .h = cc.h,
                             .w = cc.w,
                             .k = cc.k,
                             .r = cc.r,
                             .s = cc.s,
                             .pad = cc.pad,
                             .stride = cc.stride,
                             .p = d.oh,
                             .q = d.ow,
                             .data_type = data_type(cc.precision),
                             .nhwc = cc.nhwc};
    ConvGraph graph(m_graph, m_handle, spec);
    graph.query_heuristics(m_full);
    graph.bind(ops.x.raw(), ops.w.raw(), ops.y.raw(), ops.workspace.raw());
    protocol::ConvGraphScreening screening;
    const std::vector<ScreenedPlan> screened = screen_plans(graph, cc, ops, screening);
    graph_record.screening = std::move(screening); // only once every config was screened
    if (screened.empty()) {
      return fmt::format("graph API: none of {} configs ran", graph.configs().size());
    }
    return time_finalists(graph, cc, ops, screened, graph_record, best);
  } catch (const CudnnGraphError& e) {
    graph_record.error = protocol::ConvGraphError{e.call, static_cast<int>(e.status),
                                                  m_dnn.cudnnGetErrorString(e.status)};
    return fmt::format("graph API: {} returned {}", e.call, m_dnn.cudnnGetErrorString(e.status));
  }
}

} // namespace gpucheck::gpu_checks::cudnn
