// gpu-cudnn child: cuDNN through dlopen on the driver API's primary context (methods §3).
// Convolutions in FP32 NCHW (FMA math: no TF32), FP16 and BF16 NHWC (tensor cores), checked
// against a CPU reference in double; the heuristic's algorithm and the fastest found by timing
// every algorithm, each timed with events; a deterministic algorithm run twice must match bit
// for bit; ReLU timed on a large tensor and ReLU, sigmoid and tanh checked against the CPU.
// The timed convolutions also run through cuDNN's graph (backend) API where the library has it:
// every engine config its heuristics offer (a few in a standard run) is screened, the fastest
// are timed like the legacy algorithms, and the best is verified; the reported TFLOP/s is the
// better of the two APIs.
#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <exception>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <thread>
#include <vector>

#include "gpu/child.hpp"
#include "gpu/cuda_call.hpp"
#include "gpu/cudnn_api.hpp"
#include "gpu/cudnn_graph.hpp"
#include "gpu/cudnn_reference.hpp"
#include "gpu/driver_objects.hpp"
#include "gpu/gpu_children.hpp"
#include "gpu/host_checks.hpp"
#include "gpu/kernel_module.hpp"
#include "gpu/random.hpp"
#include "gpu/session.hpp"
#include "kernels/gpucheck_values.h"

namespace gpucheck::platform::gpu {

namespace {
constexpr uint64_t k_mib = 1ULL << 20;
constexpr uint64_t k_workspace_cap = 256 * k_mib;
constexpr uint64_t k_small_workspace_cap = 16 * k_mib;
constexpr uint64_t k_chunk_bytes = 4 * k_mib;
constexpr int k_sampled_outputs = 512;
constexpr double k_sample_target_ms = 5.0;
constexpr int k_max_calls = 50;
constexpr int k_timing_samples = 3;
/// Graph API: one screening sample per engine config (ms), then the fastest few are timed like
/// the legacy algorithms.
constexpr double k_screen_target_ms = 1.0;
constexpr size_t k_graph_finalists_full = 3;

class CudnnError : public std::runtime_error {
public:
  CudnnError(std::string failed_call, int status_code, std::string status_name,
             std::string last_error)
      : std::runtime_error(failed_call + " failed"), call(std::move(failed_call)),
        status(status_code), name(std::move(status_name)), detail(std::move(last_error)) {}
  std::string call;
  int status;
  std::string name;
  std::string detail;
};

void check_dnn(const CudnnApi& api, cudnnStatus_t status, const char* call) {
  if (status == CUDNN_STATUS_SUCCESS) {
    return;
  }
  std::string detail;
  if (api.cudnnGetLastErrorString != nullptr) {
    char buffer[1024] = {};
    api.cudnnGetLastErrorString(buffer, sizeof buffer);
    detail = buffer;
  }
  throw CudnnError(call, static_cast<int>(status), api.cudnnGetErrorString(status), detail);
}
#define GPUCHECK_DNN(api, fn, ...) check_dnn((api), (api).fn(__VA_ARGS__), #fn)

cudnnDataType_t data_type(Precision p) {
  switch (p) {
  case Precision::fp16:
    return CUDNN_DATA_HALF;
  case Precision::bf16:
    return CUDNN_DATA_BFLOAT16;
  default:
    return CUDNN_DATA_FLOAT;
  }
}

cudnnMathType_t math_type(Precision p) {
  switch (p) {
  case Precision::fp32:
    return CUDNN_FMA_MATH; // no TF32: a true FP32 convolution
  case Precision::tf32:
    return CUDNN_DEFAULT_MATH;
  default:
    return CUDNN_TENSOR_OP_MATH;
  }
}

const char* algo_name(int algo) {
  static constexpr const char* k_names[] = {
      "IMPLICIT_GEMM", "IMPLICIT_PRECOMP_GEMM", "GEMM", "DIRECT", "FFT", "FFT_TILING",
      "WINOGRAD",      "WINOGRAD_NONFUSED"};
  return algo >= 0 && algo < 8 ? k_names[algo] : "UNKNOWN";
}

template <typename T, typename Destroy> class Descriptor {
public:
  Descriptor(T handle, Destroy destroy) : m_handle(handle), m_destroy(destroy) {}
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  ~Descriptor() { m_destroy(m_handle); }
  [[nodiscard]] T get() const { return m_handle; }

private:
  T m_handle;
  Destroy m_destroy;
};

struct ConvCase {
  std::string label;
  int n, c, h, w, k, r, s, pad, stride;
  Precision precision;
  bool nhwc;
  bool perf; ///< time heuristic and found algorithms; verify a sample (else verify every output)
};

class CudnnRunner {
public:
  /// `module`: gpucheck's kernels, which generate the inputs and hash outputs on the GPU; when
  /// they did not load, the host does both (slower, same values). Metrics and verifications go
  /// into `out` (the envelope), convolutions and determinism into `result`.
  CudnnRunner(const DeviceSession& session, const KernelModule& module, const CudnnApi& dnn,
              const CudnnBackendApi& graph, bool full, nlohmann::json& out,
              engine::CudnnPayload& result)
      : m_session(session), m_cuda(session.api()), m_module(module), m_dnn(dnn), m_graph(graph),
        m_full(full), m_out(out), m_result(result), m_stream(session), m_start(session),
        m_end(session), m_rng(fresh_seed()) {
    GPUCHECK_DNN(m_dnn, cudnnCreate, &m_handle);
    GPUCHECK_DNN(m_dnn, cudnnSetStream, m_handle, m_stream.get());
  }
  CudnnRunner(const CudnnRunner&) = delete;
  CudnnRunner& operator=(const CudnnRunner&) = delete;
  ~CudnnRunner() {
    if (m_handle != nullptr) {
      m_dnn.cudnnDestroy(m_handle);
    }
  }

  /// Time `call` with events: warm-up, then k_timing_samples samples; median ms per call.
  double time_calls(const std::function<void()>& call, double estimate_ms) {
    call();
    m_stream.synchronize();
    const int calls =
        std::clamp(static_cast<int>(std::ceil(k_sample_target_ms / std::max(estimate_ms, 1e-3))), 1,
                   k_max_calls);
    std::vector<double> per_call;
    for (int s = 0; s < k_timing_samples; ++s) {
      m_start.record(m_stream.get());
      for (int i = 0; i < calls; ++i) {
        call();
      }
      m_end.record(m_stream.get());
      per_call.push_back(elapsed_ms(m_cuda, m_start, m_end) / calls);
    }
    return median(per_call);
  }

  /// One sample of about k_screen_target_ms after one warm-up call: ms per call.
  double screen_calls(const std::function<void()>& call) {
    call();
    m_start.record(m_stream.get());
    call();
    m_end.record(m_stream.get());
    const double first_ms = elapsed_ms(m_cuda, m_start, m_end);
    const int calls = std::clamp(
        static_cast<int>(std::ceil(k_screen_target_ms / std::max(first_ms, 1e-3))), 1, k_max_calls);
    if (calls == 1) {
      return first_ms;
    }
    m_start.record(m_stream.get());
    for (int i = 0; i < calls; ++i) {
      call();
    }
    m_end.record(m_stream.get());
    return elapsed_ms(m_cuda, m_start, m_end) / calls;
  }

  void upload(const DeviceBuffer& dst, uint64_t elements, uint32_t seed, Precision p,
              float scale = 1.0F) {
    if (m_module.loaded()) {
      // On the GPU: the same values (kernels/gpucheck_values.h), without the host's work.
      CUdeviceptr ptr = dst.get();
      uint64_t n = elements;
      uint32_t type = p == Precision::fp16   ? gpucheck_fp16
                      : p == Precision::bf16 ? gpucheck_bf16
                                             : gpucheck_fp32;
      launch(m_cuda, m_module.kernels().fill_values, grid_for(m_session, n, 256), 256,
             m_stream.get(), {&ptr, &n, &seed, &type, &scale});
      return;
    }
    const size_t size = element_bytes(p);
    std::vector<unsigned char> chunk(k_chunk_bytes);
    const uint64_t per_chunk = k_chunk_bytes / size;
    for (uint64_t first = 0; first < elements; first += per_chunk) {
      const uint64_t count = std::min(per_chunk, elements - first);
      // Inputs are a pure function of the offset: fill the chunk on several host threads.
      parallel_for(count, [&](uint64_t lo, uint64_t hi) {
        for (uint64_t i = lo; i < hi; ++i) {
          store(chunk.data() + i * size, input_value(first + i, seed, p, scale), p);
        }
      });
      GPUCHECK_CU(m_cuda, cuMemcpyHtoD, dst.get() + first * size, chunk.data(),
                  static_cast<size_t>(count * size));
    }
  }

  void poison(const DeviceBuffer& buffer) {
    GPUCHECK_CU(m_cuda, cuMemsetD32Async, buffer.get(), 0xFFFFFFFFU,
                static_cast<size_t>(buffer.bytes() / 4), m_stream.get());
  }

  /// `warm_only`: create the descriptors and ask the legacy heuristic for its algorithms, and
  /// nothing else (no buffer, no GPU work): its first call per data type is 0.15-0.25 s of host
  /// work inside cuDNN (H200 machines), done ahead, beside the other checks' work.
  void convolution(const ConvCase& cc, bool warm_only = false) {
    set_stage("cudnn convolution " + cc.label);
    const Precision p = cc.precision;
    const cudnnTensorFormat_t format = cc.nhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
    int n = cc.n;
    // Courtesy: halve the batch until the tensors fit the memory budget.
    const auto bytes_for = [&](int batch) {
      const uint64_t p_out = (cc.h + 2 * cc.pad - cc.r) / cc.stride + 1;
      const uint64_t q_out = (cc.w + 2 * cc.pad - cc.s) / cc.stride + 1;
      return element_bytes(p) *
             (uint64_t(batch) * cc.c * cc.h * cc.w + uint64_t(cc.k) * cc.c * cc.r * cc.s +
              uint64_t(batch) * cc.k * p_out * q_out);
    };
    while (n > 1 && bytes_for(n) + k_workspace_cap / 4 > m_session.budget_bytes()) {
      n /= 2;
    }
    cudnnTensorDescriptor_t x_raw = nullptr;
    cudnnTensorDescriptor_t y_raw = nullptr;
    cudnnFilterDescriptor_t w_raw = nullptr;
    cudnnConvolutionDescriptor_t conv_raw = nullptr;
    GPUCHECK_DNN(m_dnn, cudnnCreateTensorDescriptor, &x_raw);
    Descriptor x_desc(x_raw, m_dnn.cudnnDestroyTensorDescriptor);
    GPUCHECK_DNN(m_dnn, cudnnCreateTensorDescriptor, &y_raw);
    Descriptor y_desc(y_raw, m_dnn.cudnnDestroyTensorDescriptor);
    GPUCHECK_DNN(m_dnn, cudnnCreateFilterDescriptor, &w_raw);
    Descriptor w_desc(w_raw, m_dnn.cudnnDestroyFilterDescriptor);
    GPUCHECK_DNN(m_dnn, cudnnCreateConvolutionDescriptor, &conv_raw);
    Descriptor conv_desc(conv_raw, m_dnn.cudnnDestroyConvolutionDescriptor);
    GPUCHECK_DNN(m_dnn, cudnnSetTensor4dDescriptor, x_raw, format, data_type(p), n, cc.c, cc.h,
                 cc.w);
    GPUCHECK_DNN(m_dnn, cudnnSetFilter4dDescriptor, w_raw, data_type(p), format, cc.k, cc.c, cc.r,
                 cc.s);
    GPUCHECK_DNN(m_dnn, cudnnSetConvolution2dDescriptor, conv_raw, cc.pad, cc.pad, cc.stride,
                 cc.stride, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT);
    GPUCHECK_DNN(m_dnn, cudnnSetConvolutionMathType, conv_raw, math_type(p));
    int on = 0;
    int ok = 0;
    int oh = 0;
    int ow = 0;
    GPUCHECK_DNN(m_dnn, cudnnGetConvolution2dForwardOutputDim, conv_raw, x_raw, w_raw, &on, &ok,
                 &oh, &ow);
    GPUCHECK_DNN(m_dnn, cudnnSetTensor4dDescriptor, y_raw, format, data_type(p), on, ok, oh, ow);
    if (warm_only) {
      int count = 0;
      GPUCHECK_DNN(m_dnn, cudnnGetConvolutionForwardAlgorithmMaxCount, m_handle, &count);
      std::vector<cudnnConvolutionFwdAlgoPerf_t> offered(static_cast<size_t>(std::max(count, 1)));
      int got = 0;
      GPUCHECK_DNN(m_dnn, cudnnGetConvolutionForwardAlgorithm_v7, m_handle, x_raw, w_raw, conv_raw,
                   y_raw, count, &got, offered.data());
      return;
    }

    const size_t size = element_bytes(p);
    const uint64_t x_count = uint64_t(n) * cc.c * cc.h * cc.w;
    const uint64_t w_count = uint64_t(cc.k) * cc.c * cc.r * cc.s;
    const uint64_t y_count = uint64_t(on) * ok * oh * ow;
    const uint64_t used = (x_count + w_count + y_count) * size;
    // The small cases run before the gate, beside other checks: a small workspace for them.
    const uint64_t workspace_cap =
        std::min<uint64_t>(cc.perf ? k_workspace_cap : k_small_workspace_cap,
                           m_session.budget_bytes() > used ? m_session.budget_bytes() - used : 0);
    DeviceBuffer x(m_session, x_count * size);
    DeviceBuffer w(m_session, w_count * size);
    DeviceBuffer y(m_session, y_count * size);
    DeviceBuffer workspace(m_session, std::max<uint64_t>(workspace_cap, 256));
    const uint32_t x_seed = static_cast<uint32_t>(m_rng.next());
    const uint32_t w_seed = static_cast<uint32_t>(m_rng.next());
    upload(x, x_count, x_seed, p);
    upload(w, w_count, w_seed, p);

    set_stage("cudnn heuristic " + cc.label);
    int max_algos = 0;
    GPUCHECK_DNN(m_dnn, cudnnGetConvolutionForwardAlgorithmMaxCount, m_handle, &max_algos);
    std::vector<cudnnConvolutionFwdAlgoPerf_t> perf(static_cast<size_t>(std::max(max_algos, 1)));
    int returned = 0;
    if (cc.perf) {
      GPUCHECK_DNN(m_dnn, cudnnGetConvolutionForwardAlgorithm_v7, m_handle, x_raw, w_raw, conv_raw,
                   y_raw, max_algos, &returned, perf.data());
    } else {
      // The small verified cases run one fixed algorithm (every data type and layout here has
      // it), so that they need not wait for the heuristic's first call (warm_only).
      returned = 1;
      perf[0].algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
      perf[0].status = CUDNN_STATUS_SUCCESS;
      perf[0].memory = 0;
    }
    int heuristic = -1;
    for (int i = 0; i < returned; ++i) {
      if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].memory <= workspace_cap) {
        heuristic = perf[i].algo;
        break;
      }
    }
    if (heuristic < 0) {
      throw CudnnError("cudnnGetConvolutionForwardAlgorithm_v7", 0, "no usable algorithm",
                       fmt::format("none of {} algorithms fits a {} MiB workspace", returned,
                                   workspace_cap / k_mib));
    }

    // The CPU reference over the same hashed inputs, with the layouts' geometry.
    const ConvReference ref({.n = on,
                             .c = cc.c,
                             .h = cc.h,
                             .w = cc.w,
                             .k = ok,
                             .r = cc.r,
                             .s = cc.s,
                             .pad = cc.pad,
                             .stride = cc.stride,
                             .oh = oh,
                             .ow = ow,
                             .nhwc = cc.nhwc},
                            p, x_seed, w_seed);
    const double flops = 2.0 * double(on) * ok * oh * ow * cc.c * cc.r * cc.s;
    const std::string shape = fmt::format("{}x{}x{}x{}, {} filters {}x{}, pad {}, stride {}, {} {}",
                                          n, cc.c, cc.h, cc.w, cc.k, cc.r, cc.s, cc.pad, cc.stride,
                                          precision_name(p), cc.nhwc ? "NHWC" : "NCHW");

    const auto run_algo = [&](int algo) {
      size_t ws = 0;
      GPUCHECK_DNN(m_dnn, cudnnGetConvolutionForwardWorkspaceSize, m_handle, x_raw, w_raw, conv_raw,
                   y_raw, static_cast<cudnnConvolutionFwdAlgo_t>(algo), &ws);
      const float alpha = 1.0F;
      const float beta = 0.0F;
      GPUCHECK_DNN(m_dnn, cudnnConvolutionForward, m_handle, &alpha, x_raw, x.raw(), w_raw, w.raw(),
                   conv_raw, static_cast<cudnnConvolutionFwdAlgo_t>(algo), workspace.raw(), ws,
                   &beta, y_raw, y.raw());
    };
    // Verify y: every output for small cases, k_sampled_outputs random ones for large ones. The
    // samples are drawn once per convolution and shared by all its verifications (legacy and
    // graph API), so each reference is computed once.
    struct Sample {
      int ni, ki, pi, qi;
      double want, sum_abs;
    };
    std::vector<Sample> samples;
    const auto verify = [&](const std::function<void()>& run, const std::string& what, bool plant) {
      poison(y);
      run();
      if (plant) {
        GPUCHECK_CU(m_cuda, cuMemsetD32Async, y.get() + (m_rng.next() % (y_count * size / 4)) * 4,
                    0x47C35000U /* 100000.0f */, size_t{1}, m_stream.get());
      }
      m_stream.synchronize();
      Verification v{"cudnn_conv", fmt::format("convolution {} with {}", shape, what)};
      const auto judge = [&](int ni, int ki, int pi, int qi, float got, double want,
                             double sum_abs) {
        ++v.checked;
        if (!(std::abs(double(got) - want) <= tolerance(p) * sum_abs + 1e-6)) {
          if (v.mismatches++ == 0) {
            v.first_index = ref.y_at(ni, ki, pi, qi);
            v.got = fmt::format("{:.6g}", got);
            v.want = fmt::format("{:.6g} (tolerance {:.2g})", want, tolerance(p) * sum_abs + 1e-6);
          }
        }
      };
      if (!cc.perf) {
        std::vector<unsigned char> host(y_count * size);
        GPUCHECK_CU(m_cuda, cuMemcpyDtoH, host.data(), y.get(), host.size());
        for (int ni = 0; ni < on; ++ni) {
          for (int ki = 0; ki < ok; ++ki) {
            for (int pi = 0; pi < oh; ++pi) {
              for (int qi = 0; qi < ow; ++qi) {
                double sum_abs = 0.0;
                const double want = ref.output(ni, ki, pi, qi, sum_abs);
                judge(ni, ki, pi, qi, load(host.data() + ref.y_at(ni, ki, pi, qi) * size, p), want,
                      sum_abs);
              }
            }
          }
        }
      } else {
        if (samples.empty()) {
          for (int sample = 0; sample < k_sampled_outputs; ++sample) {
            Sample& sm = samples.emplace_back();
            sm.ni = static_cast<int>(m_rng.next() % on);
            sm.ki = static_cast<int>(m_rng.next() % ok);
            sm.pi = static_cast<int>(m_rng.next() % oh);
            sm.qi = static_cast<int>(m_rng.next() % ow);
          }
          parallel_for(
              samples.size(),
              [&](uint64_t lo, uint64_t hi) {
                for (uint64_t i = lo; i < hi; ++i) {
                  Sample& sm = samples[i];
                  sm.want = ref.output(sm.ni, sm.ki, sm.pi, sm.qi, sm.sum_abs);
                }
              },
              64);
        }
        for (const Sample& sm : samples) {
          unsigned char bytes[4] = {};
          GPUCHECK_CU(m_cuda, cuMemcpyDtoH, bytes,
                      y.get() + ref.y_at(sm.ni, sm.ki, sm.pi, sm.qi) * size, size);
          judge(sm.ni, sm.ki, sm.pi, sm.qi, load(bytes, p), sm.want, sm.sum_abs);
        }
      }
      m_out["verify"].push_back(engine::to_json(v));
    };

    engine::ConvRecord record;
    record.label = cc.label;
    record.shape = shape;
    record.gflop = flops / 1e9;
    // A small case runs one fixed algorithm, not the heuristic's pick: its record says so.
    record.heuristic.algo = cc.perf ? std::string(algo_name(heuristic))
                                    : fmt::format("{} (fixed)", algo_name(heuristic));
    if (!cc.perf) {
      set_stage("cudnn run and verify " + cc.label);
      verify([&] { run_algo(heuristic); }, algo_name(heuristic),
             p == Precision::fp32 && fault_planted("cudnn"));
      m_result.convolutions.push_back(record);
      return;
    }
    set_stage("cudnn find algorithm " + cc.label);
    GPUCHECK_DNN(m_dnn, cudnnFindConvolutionForwardAlgorithmEx, m_handle, x_raw, x.raw(), w_raw,
                 w.raw(), conv_raw, y_raw, y.raw(), max_algos, &returned, perf.data(),
                 workspace.raw(), static_cast<size_t>(workspace_cap));
    int found = -1;
    double found_estimate = 1.0;
    cudnnDeterminism_t found_determinism = CUDNN_NON_DETERMINISTIC;
    for (int i = 0; i < returned; ++i) {
      if (perf[i].status == CUDNN_STATUS_SUCCESS) {
        found = perf[i].algo;
        found_estimate = perf[i].time;
        found_determinism = perf[i].determinism;
        break;
      }
    }
    if (found < 0) {
      found = heuristic;
    }
    set_stage("cudnn timing " + cc.label);
    const double heuristic_ms = time_calls([&] { run_algo(heuristic); }, found_estimate);
    const double found_ms =
        found == heuristic ? heuristic_ms : time_calls([&] { run_algo(found); }, found_estimate);
    verify([&] { run_algo(heuristic); }, algo_name(heuristic), false);
    if (found != heuristic) {
      verify([&] { run_algo(found); }, algo_name(found), false);
    }
    record.heuristic = {algo_name(heuristic), heuristic_ms, flops / (heuristic_ms * 1e-3) / 1e12};
    record.found =
        engine::ConvAlgoTiming{algo_name(found), found_ms, flops / (found_ms * 1e-3) / 1e12};

    // The graph (backend) API: the engine configs its heuristics offer, screened, the fastest
    // timed like the legacy algorithms, the best verified.
    std::string best_what = fmt::format("legacy API {}", algo_name(found));
    double best_ms = found_ms;
    std::string graph_text = "graph API not available";
    engine::ConvGraph& g = record.graph.emplace();
    g.available = m_graph.available;
    if (m_graph.available) {
      set_stage("cudnn graph " + cc.label);
      try {
        const GraphConvSpec spec{.n = n,
                                 .c = cc.c,
                                 .h = cc.h,
                                 .w = cc.w,
                                 .k = cc.k,
                                 .r = cc.r,
                                 .s = cc.s,
                                 .pad = cc.pad,
                                 .stride = cc.stride,
                                 .p = oh,
                                 .q = ow,
                                 .data_type = data_type(p),
                                 .nhwc = cc.nhwc};
        ConvGraph graph(m_graph, m_handle, spec);
        graph.query_heuristics(m_full);
        graph.bind(x.raw(), w.raw(), y.raw(), workspace.raw());
        const std::vector<GraphEngineConfig>& configs = graph.configs();
        const std::vector<size_t> chosen = configs_to_try(configs, m_full, p == Precision::fp32);
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
          if (static_cast<uint64_t>(ws) > workspace_cap) {
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
        engine::ConvGraphScreening& screening = g.screening.emplace();
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
          size_t best = 0;
          double best_graph_ms = 0.0;
          set_stage("cudnn graph timing " + cc.label);
          for (size_t f = 0; f < finalists; ++f) {
            const double ms = time_calls([&] { run_plan(screened[f].plan); }, screened[f].ms);
            if (f == 0 || ms < best_graph_ms) {
              best = f;
              best_graph_ms = ms;
            }
          }
          const GraphEngineConfig& config = configs[screened[best].config];
          const std::string what = "graph API " + describe(config);
          set_stage("cudnn graph verify " + cc.label);
          verify([&] { run_plan(screened[best].plan); }, what, false);
          g.best = engine::ConvGraphBest{config.engine,
                                         describe(config),
                                         config.numerical_notes,
                                         config.fallback ? "fallback" : "A",
                                         config.rank,
                                         best_graph_ms,
                                         flops / (best_graph_ms * 1e-3) / 1e12};
          graph_text =
              fmt::format("graph API {} {:.3f} ms ({} of {} configs screened)", describe(config),
                          best_graph_ms, screened.size(), configs.size());
          if (best_graph_ms < best_ms) {
            best_ms = best_graph_ms;
            best_what = what;
          }
        } else {
          graph_text = fmt::format("graph API: none of {} configs ran", configs.size());
        }
      } catch (const CudnnGraphError& e) {
        g.error = engine::ConvGraphError{e.call, static_cast<int>(e.status),
                                         m_dnn.cudnnGetErrorString(e.status)};
        graph_text =
            fmt::format("graph API: {} returned {}", e.call, m_dnn.cudnnGetErrorString(e.status));
      }
    }
    record.best = engine::ConvBest{best_what.starts_with("graph") ? "graph" : "legacy", best_what,
                                   best_ms, flops / (best_ms * 1e-3) / 1e12};
    m_result.convolutions.push_back(record);
    m_out["metrics"].push_back(metric(
        "conv_" + cc.label + "_tflops", flops / (best_ms * 1e-3) / 1e12, "TFLOP/s",
        fmt::format("{}; best: {} {:.3f} ms; legacy API: timed best {} {:.3f} ms, heuristic {} "
                    "{:.3f} ms; {}",
                    shape, best_what, best_ms, algo_name(found), found_ms, algo_name(heuristic),
                    heuristic_ms, graph_text)));

    if (p == Precision::fp32) {
      // Determinism: a deterministic algorithm, run twice on the same input, must match.
      set_stage("cudnn determinism " + cc.label);
      const int algo = found_determinism == CUDNN_DETERMINISTIC ? found : 0; // IMPLICIT_GEMM
      uint64_t hashes[2] = {0, 0};
      for (uint64_t& hash : hashes) {
        poison(y);
        run_algo(algo);
        m_stream.synchronize();
        hash = hash_device(y);
      }
      m_result.determinism = engine::CudnnDeterminism{
          cc.label,
          algo_name(algo),
          {fmt::format("{:016x}", hashes[0]), fmt::format("{:016x}", hashes[1])},
          hashes[0] == hashes[1]};
    }
  }

  /// A hash of the buffer's contents: on the GPU (gpucheck_hash_words, order-independent), else
  /// FNV-1a on the host over its 64-bit words (a byte-wise tail, zero-padded). Compared only
  /// with a hash of the same kind.
  uint64_t hash_device(const DeviceBuffer& buffer) {
    if (m_module.loaded()) {
      DeviceBuffer sum(m_session, 8);
      GPUCHECK_CU(m_cuda, cuMemsetD32Async, sum.get(), 0U, size_t{2}, m_stream.get());
      CUdeviceptr words = buffer.get();
      CUdeviceptr sum_ptr = sum.get();
      uint64_t n = buffer.bytes() / 4;
      launch(m_cuda, m_module.kernels().hash_words, grid_for(m_session, n, 256), 256,
             m_stream.get(), {&words, &n, &sum_ptr});
      uint64_t hash = 0;
      GPUCHECK_CU(m_cuda, cuMemcpyDtoHAsync, &hash, sum.get(), size_t{8}, m_stream.get());
      m_stream.synchronize();
      return hash;
    }
    std::vector<uint64_t> chunk(k_chunk_bytes / 8);
    uint64_t hash = 1469598103934665603ULL;
    for (uint64_t off = 0; off < buffer.bytes(); off += k_chunk_bytes) {
      const uint64_t count = std::min<uint64_t>(k_chunk_bytes, buffer.bytes() - off);
      std::fill(chunk.begin(), chunk.end(), 0);
      GPUCHECK_CU(m_cuda, cuMemcpyDtoH, chunk.data(), buffer.get() + off, size_t{count});
      for (uint64_t i = 0; i < (count + 7) / 8; ++i) {
        hash = (hash ^ chunk[i]) * 1099511628211ULL;
      }
    }
    return hash;
  }

  /// Activation forward checked against the CPU: `timed` is ReLU over `elements` values, timed
  /// (gated work); otherwise sigmoid, tanh and ReLU over at most 1 Mi values (before the gate:
  /// their first use loads cuDNN's elementwise kernels, so the timed ReLU finds its kernel
  /// loaded).
  void activations(uint64_t elements, bool timed) {
    set_stage(timed ? "cudnn relu" : "cudnn activation");
    elements = std::min<uint64_t>(timed ? elements : 1ULL << 20, m_session.budget_bytes() / 8);
    elements -= elements % 4096;
    DeviceBuffer x(m_session, elements * 4);
    DeviceBuffer y(m_session, elements * 4);
    const uint32_t seed = static_cast<uint32_t>(m_rng.next());
    constexpr float k_scale = 4.0F; // inputs in [-4, 4): sigmoid and tanh are not flat there
    upload(x, elements, seed, Precision::fp32, k_scale);
    cudnnActivationDescriptor_t act_raw = nullptr;
    GPUCHECK_DNN(m_dnn, cudnnCreateActivationDescriptor, &act_raw);
    Descriptor act(act_raw, m_dnn.cudnnDestroyActivationDescriptor);
    cudnnTensorDescriptor_t desc_raw = nullptr;
    GPUCHECK_DNN(m_dnn, cudnnCreateTensorDescriptor, &desc_raw);
    Descriptor desc(desc_raw, m_dnn.cudnnDestroyTensorDescriptor);
    GPUCHECK_DNN(m_dnn, cudnnSetTensor4dDescriptor, desc_raw, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT,
                 1, 1, static_cast<int>(elements / 4096), 4096);
    const float alpha = 1.0F;
    const float beta = 0.0F;

    struct Mode {
      cudnnActivationMode_t mode;
      const char* name;
    };
    const std::vector<Mode> modes = timed ? std::vector<Mode>{{CUDNN_ACTIVATION_RELU, "relu"}}
                                          : std::vector<Mode>{{CUDNN_ACTIVATION_SIGMOID, "sigmoid"},
                                                              {CUDNN_ACTIVATION_TANH, "tanh"},
                                                              {CUDNN_ACTIVATION_RELU, "relu"}};
    for (const Mode& mode : modes) {
      GPUCHECK_DNN(m_dnn, cudnnSetActivationDescriptor, act_raw, mode.mode, CUDNN_NOT_PROPAGATE_NAN,
                   0.0);
      const uint64_t n = elements;
      const auto call = [&] {
        GPUCHECK_DNN(m_dnn, cudnnActivationForward, m_handle, act_raw, &alpha, desc_raw, x.raw(),
                     &beta, desc_raw, y.raw());
      };
      poison(y);
      call();
      m_stream.synchronize();
      if (timed) {
        set_stage("cudnn relu verify");
      }
      Verification v{"cudnn_activation",
                     fmt::format("{} forward over {} fp32 values", mode.name, n)};
      // (input, expected, tolerance) of element i.
      const auto expected = [&mode, seed](uint64_t i) {
        const double in = input_value(i, seed, Precision::fp32, k_scale);
        if (mode.mode == CUDNN_ACTIVATION_RELU) {
          return std::array<double, 3>{in, in > 0.0 ? in : 0.0, 0.0};
        }
        const double want =
            mode.mode == CUDNN_ACTIVATION_SIGMOID ? 1.0 / (1.0 + std::exp(-in)) : std::tanh(in);
        return std::array<double, 3>{in, want, 1e-5 + 1e-3 * std::abs(want)};
      };
      std::vector<float> chunk(k_chunk_bytes / 4);
      for (uint64_t first = 0; first < n; first += chunk.size()) {
        const uint64_t count = std::min<uint64_t>(chunk.size(), n - first);
        GPUCHECK_CU(m_cuda, cuMemcpyDtoH, chunk.data(), y.get() + first * 4, size_t{count} * 4);
        const Mismatches bad = parallel_mismatches(count, [&](uint64_t i) {
          const auto [in, want, tol] = expected(first + i);
          return !(std::abs(double(chunk[i]) - want) <= tol);
        });
        if (bad.count != 0 && v.mismatches == 0) {
          const auto [in, want, tol] = expected(first + bad.first);
          v.first_index = first + bad.first;
          v.got = fmt::format("{:.9g}", chunk[bad.first]);
          v.want = fmt::format("{:.9g} (input {:.9g})", want, in);
        }
        v.mismatches += bad.count;
        v.checked += count;
      }
      m_out["verify"].push_back(engine::to_json(v));
      if (timed) {
        set_stage("cudnn relu timing");
        const double ms = time_calls(call, 0.1);
        m_out["metrics"].push_back(
            metric("relu_fp32_gbps", 2.0 * double(n) * 4 / (ms * 1e-3) / 1e9, "GB/s",
                   fmt::format("cudnnActivationForward ReLU over {} Mi fp32 values, bytes read + "
                               "written",
                               n >> 20)));
      }
    }
  }

private:
  const DeviceSession& m_session;
  const CudaApi& m_cuda;
  const KernelModule& m_module;
  const CudnnApi& m_dnn;
  const CudnnBackendApi& m_graph;
  bool m_full;
  nlohmann::json& m_out;
  engine::CudnnPayload& m_result;
  Stream m_stream;
  Event m_start;
  Event m_end;
  SplitMix64 m_rng;
  cudnnHandle_t m_handle = nullptr;
};

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
/// for each data type of the timed cases (0.15-0.25 s each on H200 machines). It runs beside the
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
            m_runner =
                std::make_unique<CudnnRunner>(session, module, dnn, graph, full, m_out, m_result);
            for (const ConvCase& cc : all) {
              if (cc.perf) {
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
  engine::CudnnPayload m_result;
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
  void merge_into(nlohmann::json& out, engine::CudnnPayload& result) {
    join();
    for (nlohmann::json& entry : m_out["verify"]) {
      out["verify"].push_back(std::move(entry));
    }
    for (engine::ConvRecord& record : m_result.convolutions) {
      result.convolutions.push_back(std::move(record));
    }
    if (m_error) {
      std::rethrow_exception(m_error);
    }
  }

private:
  nlohmann::json m_out = {{"metrics", nlohmann::json::array()},
                          {"verify", nlohmann::json::array()}};
  engine::CudnnPayload m_result;
  std::unique_ptr<CudnnRunner> m_runner;
  std::exception_ptr m_error;
  std::thread m_thread; // last: it starts once the members above exist
};

/// Before the gate, beside the other checks on this GPU: the small verified cases and the
/// activations, nothing timed. The first use of each kernel family (cuDNN loads it then) is most
/// of this child's time, so it overlaps the checks before it. That first use is host work
/// (0.1-0.4 s per family on H100 and H200 machines): FP32 and the activations run on this
/// thread, each tensor-core case (FP16, BF16) on a thread with its own handle and stream, so the
/// loads overlap (one tensor-core thread for both: ready at 467-547 ms on an H100; one each:
/// docs/performance.md); the heuristic's first calls on another (HeuristicWarmup).
void prepare(const DeviceSession& session, const KernelModule& module, const CudnnApi& dnn,
             const CudnnBackendApi& graph, bool full, CudnnRunner& runner,
             const std::vector<ConvCase>& all, nlohmann::json& out, engine::CudnnPayload& result) {
  std::vector<std::unique_ptr<PreparationThread>> threads;
  for (const ConvCase& cc : all) {
    if (!cc.perf && cc.precision != Precision::fp32) {
      threads.push_back(std::make_unique<PreparationThread>(session, module, dnn, graph, full, cc));
    }
  }
  // A throw here joins the threads first (their destructors).
  for (const ConvCase& cc : all) {
    if (!cc.perf && cc.precision == Precision::fp32) {
      runner.convolution(cc);
    }
  }
  runner.activations(0, false);
  for (const std::unique_ptr<PreparationThread>& thread : threads) {
    thread->merge_into(out, result);
  }
}

/// The cuDNN work; its own fields go into `result`, which the caller writes (whatever it threw).
void cudnn_work(const std::vector<std::string>& args, int ordinal, nlohmann::json& out,
                engine::CudnnPayload& result) {
  const bool full = std::find(args.begin(), args.end(), "full") != args.end();
  // Two queues: with one, cuDNN's FFT_TILING convolution took 0.30 ms instead of 0.22 (H200,
  // FP32 NCHW 64x64x56x56); with two it was as fast as with the default eight (0.23 ms;
  // docs/performance.md).
  DeviceSession session(ordinal, 2);
  out["device"] = session.describe();
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
      engine::CudnnLibrary{lib.load().real_path, static_cast<int64_t>(dnn.cudnnGetVersion()),
                           static_cast<int64_t>(dnn.cudnnGetCudartVersion()), graph.available,
                           graph.available ? std::vector<std::string>{} : graph.missing};
  // Resident memory before cuDNN touches the GPU: the rest of the peak is cuDNN's own.
  out["metrics"].push_back(metric("host_rss_before_cudnn_mib", resident_mib(), "MiB",
                                  "gpucheck child with the driver loaded"));
  try {
    set_stage("load kernels");
    auto owned_module = std::make_unique<const KernelModule>(session);
    const KernelModule& module = *owned_module;
    result.inputs_on = module.loaded() ? "gpu" : "host";
    set_stage("cudnn handle");
    auto owned_runner =
        std::make_unique<CudnnRunner>(session, module, dnn, graph, full, out, result);
    CudnnRunner& runner = *owned_runner;
    const std::vector<ConvCase> all = cases(full, session.cc_major());
    HeuristicWarmup warmup(session, module, dnn, graph, full, all);
    prepare(session, module, dnn, graph, full, runner, all, out, result);
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
    result.failure = engine::CudnnFailure{e.call, e.status, e.name, e.detail, current_stage()};
  }
}

void run_cudnn(const std::vector<std::string>& args, int ordinal, nlohmann::json& out) {
  engine::CudnnPayload result;
  try {
    cudnn_work(args, ordinal, out, result);
  } catch (...) {
    engine::write_cudnn(result, out); // what it did before the failure stays in the payload
    throw;
  }
  engine::write_cudnn(result, out);
}
} // namespace

nlohmann::json child_gpu_cudnn(const std::vector<std::string>& args) {
  return run_gpu_child(
      args, [&args](int ordinal, nlohmann::json& out) { run_cudnn(args, ordinal, out); });
}

} // namespace gpucheck::platform::gpu
