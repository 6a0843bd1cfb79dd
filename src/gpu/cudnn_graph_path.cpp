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
#include "gpu/cudnn_graph.hpp"
#include "gpu/cudnn_runner.hpp"

namespace gpucheck::gpu {

namespace {
/// Configs timed after screening with `full` (a standard run times the fastest one).
constexpr size_t k_graph_finalists_full = 3;
} // namespace

std::string CudnnRunner::time_graph(const ConvCase& cc, const ConvDescriptors& d, ConvOperands& ops,
                                    protocol::ConvGraph& graph_record, BestConvolution& best) {
  std::string graph_text = "graph API not available";
  graph_record.available = m_graph.available;
  if (m_graph.available) {
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
      const std::vector<GraphEngineConfig>& configs = graph.configs();
      const std::vector<size_t> chosen =
          configs_to_try(configs, m_full, cc.precision == Precision::fp32);
      struct Screened {
        size_t config;
        int plan;
        double ms;
      };
      std::vector<Screened> screened;
      int refused = 0;
      int too_large = 0;
      int failed = 0;
      std::map<std::string, int> statuses; // why configs were skipped
      const auto count_status = [&](cudnnStatus_t status) {
        ++statuses[m_dnn.cudnnGetErrorString(status)];
      };
      const auto run_plan = [&](int plan) {
        const cudnnStatus_t status = graph.execute(plan);
        check_dnn(m_dnn, status, "cudnnBackendExecute");
      };
      set_stage("cudnn graph plans " + cc.label);
      for (const size_t i : chosen) {
        int64_t ws = 0;
        cudnnStatus_t status = CUDNN_STATUS_SUCCESS;
        const int plan = graph.build_plan(i, ws, status);
        if (plan < 0) {
          ++refused;
          count_status(status);
          continue;
        }
        if (static_cast<uint64_t>(ws) > ops.workspace_cap) {
          ++too_large;
          continue;
        }
        status = graph.execute(plan);
        if (status != CUDNN_STATUS_SUCCESS) {
          ++failed;
          count_status(status);
          continue;
        }
        screened.push_back({i, plan, screen_calls([&] { run_plan(plan); })});
      }
      std::stable_sort(screened.begin(), screened.end(),
                       [](const Screened& a, const Screened& b) { return a.ms < b.ms; });
      protocol::ConvGraphScreening& screening = graph_record.screening.emplace();
      for (const Screened& sc : screened) {
        screening.screened.push_back({describe(configs[sc.config]),
                                      configs[sc.config].fallback ? "fallback" : "A",
                                      configs[sc.config].rank, sc.ms});
      }
      screening.offered = configs.size();
      screening.tried = chosen.size();
      screening.refused = refused;
      screening.workspace_too_large = too_large;
      screening.failed = failed;
      screening.skipped_statuses = std::move(statuses);
      if (!screened.empty()) {
        const size_t finalists =
            std::min(screened.size(), m_full ? k_graph_finalists_full : size_t{1});
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
        graph_record.best = protocol::ConvGraphBest{config.engine,
                                                    describe(config),
                                                    config.numerical_notes,
                                                    config.fallback ? "fallback" : "A",
                                                    config.rank,
                                                    best_graph_ms,
                                                    ops.flops / (best_graph_ms * 1e-3) / 1e12};
        graph_text = fmt::format("graph API {} {:.3f} ms ({} of {} configs screened)",
                                 describe(config), best_graph_ms, screened.size(), configs.size());
        if (best_graph_ms < best.ms) {
          best = {what, best_graph_ms};
        }
      } else {
        graph_text = fmt::format("graph API: none of {} configs ran", configs.size());
      }
    } catch (const CudnnGraphError& e) {
      graph_record.error = protocol::ConvGraphError{e.call, static_cast<int>(e.status),
                                                    m_dnn.cudnnGetErrorString(e.status)};
      graph_text =
          fmt::format("graph API: {} returned {}", e.call, m_dnn.cudnnGetErrorString(e.status));
    }
  }
  return graph_text;
}

} // namespace gpucheck::gpu
