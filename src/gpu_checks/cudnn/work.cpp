// gpu-cudnn child: cuDNN through dlopen on the driver API's primary context (methods §3).
// Convolutions in FP32 NCHW (FMA math: no TF32), FP16 and BF16 NHWC (tensor cores), checked
// against a CPU reference in double; the heuristic's algorithm and the fastest found by timing
// every algorithm, each timed with events; a deterministic algorithm run twice must match bit
// for bit; ReLU timed on a large tensor and ReLU, sigmoid and tanh checked against the CPU.
// The timed convolutions also run through cuDNN's graph (backend) API where the library has it:
// every engine config its heuristics offer (a few in a standard run) is screened, the fastest
// are timed like the legacy algorithms, and the best is verified; the reported TFLOP/s is the
// better of the two APIs.
//
// This file is the child: its cases, the preparation before the gate on several threads, and the
// timed work after it. One case's work is CudnnRunner's (runner.hpp).
#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>
#include <vector>

#include "gpu/child.hpp"
#include "gpu/cuda_call.hpp"
#include "gpu/driver_objects.hpp"
#include "gpu/host_checks.hpp"
#include "gpu/kernel_module.hpp"
#include "gpu/random.hpp"
#include "gpu/session.hpp"
#include "gpu/work_lane.hpp"
#include "gpu_checks/cudnn/api.hpp"
#include "gpu_checks/cudnn/cudnn.hpp"
#include "gpu_checks/cudnn/reference.hpp"
#include "gpu_checks/cudnn/runner.hpp"
#include "kernels/gpucheck_values.h"
#include "process/child_process.hpp"

namespace gpucheck::gpu_checks::cudnn {

namespace {
using namespace gpucheck::gpu; // the children's sessions, buffers, kernels and stages
constexpr uint64_t k_mib = 1ULL << 20;

std::vector<ConvCase> cases(bool full, int cc_major) {
  std::vector<ConvCase> list = {
      {"fp32_nchw_small", 2, 16, 20, 20, 24, 3, 3, 1, 1, Precision::fp32, false, false},
      {"fp16_nhwc_small", 2, 32, 16, 16, 32, 3, 3, 1, 1, Precision::fp16, true, false},
  };
  if (cc_major >= 8) {
    list.push_back(
        {"bf16_nhwc_small", 2, 32, 16, 16, 32, 3, 3, 1, 1, Precision::bf16, true, false});
  }
  list.push_back(
      {"fp32_nchw_64x64x56x56", 64, 64, 56, 56, 64, 3, 3, 1, 1, Precision::fp32, false, true});
  list.push_back(
      {"fp16_nhwc_32x256x56x56", 32, 256, 56, 56, 256, 3, 3, 1, 1, Precision::fp16, true, true});
  if (full) {
    list.push_back(
        {"fp16_nhwc_64x64x56x56", 64, 64, 56, 56, 64, 3, 3, 1, 1, Precision::fp16, true, true});
    list.push_back(
        {"fp32_nchw_32x256x56x56", 32, 256, 56, 56, 256, 3, 3, 1, 1, Precision::fp32, false, true});
    if (cc_major >= 8) {
      list.push_back({"tf32_nhwc_32x256x56x56", 32, 256, 56, 56, 256, 3, 3, 1, 1, Precision::tf32,
                      true, true});
      list.push_back({"bf16_nhwc_32x256x56x56", 32, 256, 56, 56, 256, 3, 3, 1, 1, Precision::bf16,
                      true, true});
    }
    list.push_back({"fp16_nhwc_128x3x224x224_7x7s2", 128, 3, 224, 224, 64, 7, 7, 3, 2,
                    Precision::fp16, true, true});
  }
  return list;
}

/// Host work inside cuDNN done ahead on a thread of its own: the legacy heuristic's first call
/// for each data type of the timed cases (a large share of the timed work: docs/performance.md).
/// It runs beside the
/// preparation and goes on past the gate while other checks time their copies (it touches no
/// GPU: no buffer, no kernel, no copy); the timed work joins it first.
class HeuristicWarmup {
public:
  HeuristicWarmup(const DeviceSession& session, const KernelModule& module, const CudnnApi& dnn,
                  const CudnnBackendApi& graph, bool full, const std::vector<ConvCase>& all)
      : m_thread([this, &session, &module, &dnn, &graph, full, all] {
          stages_off_on_this_thread();
          try {
            session.make_current();
            {
              const auto step = session.lane_step();
              m_runner =
                  std::make_unique<CudnnRunner>(session, module, dnn, graph, full, m_out, m_result);
            }
            for (const ConvCase& cc : all) {
              if (cc.perf) {
                // A lane step too: cuDNN may load modules here, which would stall a launch timed
                // beside it.
                const auto step = session.lane_step();
                m_runner->convolution(cc, /*warm_only=*/true);
              }
            }
          } catch (...) {
            m_error = std::current_exception();
          }
        }) {}
  HeuristicWarmup(const HeuristicWarmup&) = delete;
  HeuristicWarmup& operator=(const HeuristicWarmup&) = delete;
  ~HeuristicWarmup() { join(); }
  /// Wait for it; its failure, if any, is the child's.
  void join() {
    if (m_thread.joinable()) {
      m_thread.join();
      static_cast<void>(m_runner.release()); // like the other runners: exit frees it
    }
  }
  void rethrow() const {
    if (m_error) {
      std::rethrow_exception(m_error);
    }
  }

private:
  nlohmann::json m_out = {{"metrics", nlohmann::json::array()},
                          {"verify", nlohmann::json::array()},
                          {"convolutions", nlohmann::json::array()}};
  protocol::CudnnPayload m_result;
  std::unique_ptr<CudnnRunner> m_runner;
  std::exception_ptr m_error;
  std::thread m_thread; // last: it starts once the members above exist
};

/// One part of the preparation on a thread of its own, with its own handle and stream (a
/// CudnnRunner); what it found is merged into the child's payload after the join.
class PreparationThread {
public:
  PreparationThread(const DeviceSession& session, const KernelModule& module, const CudnnApi& dnn,
                    const CudnnBackendApi& graph, bool full, const ConvCase& cc)
      : m_thread([this, &session, &module, &dnn, &graph, full, &cc] {
          stages_off_on_this_thread();
          try {
            session.make_current();
            const auto step = session.lane_step();
            m_runner =
                std::make_unique<CudnnRunner>(session, module, dnn, graph, full, m_out, m_result);
            m_runner->convolution(cc);
          } catch (...) {
            m_error = std::current_exception();
          }
        }) {}
  PreparationThread(const PreparationThread&) = delete;
  PreparationThread& operator=(const PreparationThread&) = delete;
  PreparationThread(PreparationThread&&) = delete;
  PreparationThread& operator=(PreparationThread&&) = delete;
  ~PreparationThread() { join(); }
  void join() {
    if (m_thread.joinable()) {
      m_thread.join();
      static_cast<void>(m_runner.release()); // like the main runner: exit frees it
    }
  }
  /// Join, move its verifications and convolutions into the child's, rethrow its failure.
  void merge_into(nlohmann::json& out, protocol::CudnnPayload& result) {
    join();
    for (nlohmann::json& entry : m_out["verify"]) {
      out["verify"].push_back(std::move(entry));
    }
    for (protocol::ConvRecord& record : m_result.convolutions) {
      result.convolutions.push_back(std::move(record));
    }
    if (m_error) {
      std::rethrow_exception(m_error);
    }
  }

private:
  nlohmann::json m_out = {{"metrics", nlohmann::json::array()},
                          {"verify", nlohmann::json::array()}};
  protocol::CudnnPayload m_result;
  std::unique_ptr<CudnnRunner> m_runner;
  std::exception_ptr m_error;
  std::thread m_thread; // last: it starts once the members above exist
};

/// Before the gate, beside the other checks on this GPU: the small verified cases and the
/// activations, nothing timed. The first use of each kernel family (cuDNN loads it then) is most
/// of this child's time, so it overlaps the checks before it. That first use is host work: FP32
/// and the activations run on this thread, each tensor-core case (FP16, BF16) on a thread with
/// its own handle and stream, so the loads overlap (docs/performance.md measured one thread for
/// both against one each); the heuristic's first calls on another (HeuristicWarmup).
void prepare(const DeviceSession& session, const KernelModule& module, const CudnnApi& dnn,
             const CudnnBackendApi& graph, bool full, CudnnRunner& runner,
             const std::vector<ConvCase>& all, nlohmann::json& out,
             protocol::CudnnPayload& result) {
  std::vector<std::unique_ptr<PreparationThread>> threads;
  for (const ConvCase& cc : all) {
    if (!cc.perf && cc.precision != Precision::fp32) {
      threads.push_back(std::make_unique<PreparationThread>(session, module, dnn, graph, full, cc));
    }
  }
  // A throw here joins the threads first (their destructors).
  // Each step a lane step: none inside a measurement of the works beside it (QuietGate).
  for (const ConvCase& cc : all) {
    if (!cc.perf && cc.precision == Precision::fp32) {
      const auto step = session.lane_step();
      runner.convolution(cc);
    }
  }
  {
    const auto step = session.lane_step();
    runner.activations(0, false);
  }
  for (const std::unique_ptr<PreparationThread>& thread : threads) {
    thread->merge_into(out, result);
  }
}

/// When a cuDNN work is prepared, and when its turn for the gate comes: at once in a child of
/// its own (gpu-cudnn, no steps); in the shared child, its lane's (gpu/work_lane.hpp).
using CudnnSteps = LaneSteps;

/// The cuDNN work on a session that exists; its own fields go into `result`, which the caller
/// writes (whatever it threw). `shared_module`: the kernels the child loaded already (nullptr:
/// load them here).
void cudnn_work(const std::vector<std::string>& args, DeviceSession& session,
                const KernelModule* shared_module, nlohmann::json& out,
                protocol::CudnnPayload& result, const CudnnSteps& steps) {
  const bool full = std::find(args.begin(), args.end(), "full") != args.end();
  set_stage("load cuDNN");
  DynamicLibrary lib = DynamicLibrary::open_first({"libcudnn.so.9", "libcudnn.so.8"});
  if (!lib.loaded()) {
    result.missing = lib.load().error;
    return;
  }
  const CudnnApi dnn = load_cudnn_api(lib);
  if (!dnn.usable) {
    std::string missing;
    for (const std::string& name : lib.load().missing_symbols) {
      missing += (missing.empty() ? "" : ", ") + name;
    }
    result.missing = fmt::format("{} lacks {}", lib.load().real_path, missing);
    return;
  }
  const CudnnBackendApi graph = load_cudnn_backend_api(lib);
  result.library =
      protocol::CudnnLibrary{lib.load().real_path, static_cast<int64_t>(dnn.cudnnGetVersion()),
                             static_cast<int64_t>(dnn.cudnnGetCudartVersion()), graph.available,
                             graph.available ? std::vector<std::string>{} : graph.missing};
  // Resident memory before cuDNN touches the GPU: the rest of the peak is cuDNN's own.
  out["metrics"].push_back(metric("host_rss_before_cudnn_mib", resident_mib(), "MiB",
                                  "gpucheck child with the driver loaded"));
  try {
    std::unique_ptr<const KernelModule> owned_module;
    if (shared_module == nullptr) {
      set_stage("load kernels");
      owned_module = std::make_unique<const KernelModule>(session);
    }
    const KernelModule& module = shared_module != nullptr ? *shared_module : *owned_module;
    result.inputs_on = module.loaded() ? "gpu" : "host";
    set_stage("cudnn handle");
    session.make_current();
    auto step = session.lane_step();
    auto owned_runner =
        std::make_unique<CudnnRunner>(session, module, dnn, graph, full, out, result);
    step.reset();
    CudnnRunner& runner = *owned_runner;
    const std::vector<ConvCase> all = cases(full, session.cc_major());
    HeuristicWarmup warmup(session, module, dnn, graph, full, all);
    prepare(session, module, dnn, graph, full, runner, all, out, result);
    if (steps.prepared) {
      steps.prepared();
    }
    if (steps.turn) {
      set_stage("waiting for the works before it");
      steps.turn();
    }
    session.wait_for_gate();
    out["device"] = session.describe();
    set_stage("cudnn heuristic warm-up");
    warmup.join();
    warmup.rethrow();
    for (const ConvCase& cc : all) {
      if (cc.perf) {
        runner.convolution(cc);
      }
    }
    runner.activations(full ? 64 * k_mib : 16 * k_mib, true);
    session.done_with_gpu();
    // The child reports and exits right after this, and exit frees the handle and the module
    // with everything else: cudnnDestroy and cuModuleUnload (tens of milliseconds together, with
    // cuDNN's modules loaded) would only delay the end of the run.
    static_cast<void>(owned_runner.release());
    static_cast<void>(owned_module.release());
  } catch (const CudnnError& e) {
    result.failure = protocol::CudnnFailure{e.call, e.status, e.name, e.detail, current_stage()};
  }
}

/// `work` on the payload it fills, which is written into `out` also when it throws: what it did
/// before the failure stays in the payload.
template <typename Work> void with_payload(nlohmann::json& out, const Work& work) {
  protocol::CudnnPayload result;
  try {
    work(result);
  } catch (...) {
    protocol::write_cudnn(result, out);
    throw;
  }
  protocol::write_cudnn(result, out);
}

void run_cudnn(const std::vector<std::string>& args, int ordinal, nlohmann::json& out) {
  with_payload(out, [&](protocol::CudnnPayload& result) {
    DeviceSession session(ordinal, k_connections);
    out["device"] = session.describe();
    cudnn_work(args, session, nullptr, out, result, {});
  });
}

} // namespace

void lane_work(gpu::DeviceSession& session, const gpu::KernelModule& module, nlohmann::json& out,
               const gpu::LaneSteps& steps) {
  with_payload(out, [&](protocol::CudnnPayload& result) {
    cudnn_work({}, session, &module, out, result, steps);
  });
}

nlohmann::json own_child(const std::vector<std::string>& args) {
  return gpu::run_gpu_child(
      args, [&args](int ordinal, nlohmann::json& out) { run_cudnn(args, ordinal, out); });
}

} // namespace gpucheck::gpu_checks::cudnn
