#include "gpu_checks/cudnn/runner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include "gpu/child.hpp"
#include "gpu/cuda_call.hpp"
#include "gpu/host_checks.hpp"
#include "kernels/gpucheck_values.h"

namespace gpucheck::gpu_checks::cudnn {

using namespace gpucheck::gpu; // the children's stages, checks and helpers

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
} // namespace

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
ConvDescriptors::ConvDescriptors(const CudnnApi& dnn, const ConvCase& cc, int batch)
    : n(batch), x(nullptr, dnn.cudnnDestroyTensorDescriptor),
      y(nullptr, dnn.cudnnDestroyTensorDescriptor), w(nullptr, dnn.cudnnDestroyFilterDescriptor),
      conv(nullptr, dnn.cudnnDestroyConvolutionDescriptor) {
  const Precision p = cc.precision;
  const cudnnTensorFormat_t format = cc.nhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
  GPUCHECK_DNN(dnn, cudnnCreateTensorDescriptor, x.handle());
  GPUCHECK_DNN(dnn, cudnnCreateTensorDescriptor, y.handle());
  GPUCHECK_DNN(dnn, cudnnCreateFilterDescriptor, w.handle());
  GPUCHECK_DNN(dnn, cudnnCreateConvolutionDescriptor, conv.handle());
  GPUCHECK_DNN(dnn, cudnnSetTensor4dDescriptor, x.get(), format, data_type(p), n, cc.c, cc.h, cc.w);
  GPUCHECK_DNN(dnn, cudnnSetFilter4dDescriptor, w.get(), data_type(p), format, cc.k, cc.c, cc.r,
               cc.s);
  GPUCHECK_DNN(dnn, cudnnSetConvolution2dDescriptor, conv.get(), cc.pad, cc.pad, cc.stride,
               cc.stride, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT);
  GPUCHECK_DNN(dnn, cudnnSetConvolutionMathType, conv.get(), math_type(p));
  GPUCHECK_DNN(dnn, cudnnGetConvolution2dForwardOutputDim, conv.get(), x.get(), w.get(), &on, &ok,
               &oh, &ow);
  GPUCHECK_DNN(dnn, cudnnSetTensor4dDescriptor, y.get(), format, data_type(p), on, ok, oh, ow);
}

namespace {
/// The workspace a case may use: the timed cases' cap, a small one for the cases that run before
/// the gate beside other checks, within what the budget leaves beside its tensors.
uint64_t workspace_for(const DeviceSession& session, const ConvCase& cc, uint64_t used) {
  return std::min<uint64_t>(cc.perf ? k_workspace_cap : k_small_workspace_cap,
                            session.budget_bytes() > used ? session.budget_bytes() - used : 0);
}
} // namespace

ConvOperands::ConvOperands(const DeviceSession& session, const ConvCase& cc,
                           const ConvDescriptors& d, SplitMix64& rng)
    : x_count(uint64_t(d.n) * cc.c * cc.h * cc.w), w_count(uint64_t(cc.k) * cc.c * cc.r * cc.s),
      y_count(uint64_t(d.on) * d.ok * d.oh * d.ow), element_size(element_bytes(cc.precision)),
      workspace_cap(workspace_for(session, cc, (x_count + w_count + y_count) * element_size)),
      x(session, x_count * element_size), w(session, w_count * element_size),
      y(session, y_count * element_size),
      workspace(session, std::max<uint64_t>(workspace_cap, 256)),
      x_seed(static_cast<uint32_t>(rng.next())), w_seed(static_cast<uint32_t>(rng.next())),
      reference({.n = d.on,
                 .c = cc.c,
                 .h = cc.h,
                 .w = cc.w,
                 .k = d.ok,
                 .r = cc.r,
                 .s = cc.s,
                 .pad = cc.pad,
                 .stride = cc.stride,
                 .oh = d.oh,
                 .ow = d.ow,
                 .nhwc = cc.nhwc},
                cc.precision, x_seed, w_seed),
      flops(2.0 * double(d.on) * d.ok * d.oh * d.ow * cc.c * cc.r * cc.s),
      shape(fmt::format("{}x{}x{}x{}, {} filters {}x{}, pad {}, stride {}, {} {}", d.n, cc.c, cc.h,
                        cc.w, cc.k, cc.r, cc.s, cc.pad, cc.stride, precision_name(cc.precision),
                        cc.nhwc ? "NHWC" : "NCHW")) {}

CudnnRunner::CudnnRunner(const DeviceSession& session, const KernelModule& module,
                         const CudnnApi& dnn, const CudnnBackendApi& graph, bool full,
                         nlohmann::json& out, protocol::CudnnPayload& result)
    : m_session(session), m_cuda(session.api()), m_module(module), m_dnn(dnn), m_graph(graph),
      m_full(full), m_out(out), m_result(result), m_stream(session), m_start(session),
      m_end(session), m_rng(fresh_seed()) {
  GPUCHECK_DNN(m_dnn, cudnnCreate, &m_handle);
  GPUCHECK_DNN(m_dnn, cudnnSetStream, m_handle, m_stream.get());
}

CudnnRunner::~CudnnRunner() {
  if (m_handle != nullptr) {
    m_dnn.cudnnDestroy(m_handle);
  }
}

void CudnnRunner::convolution(const ConvCase& cc, bool warm_only) {
  set_stage("cudnn convolution " + cc.label);
  const ConvDescriptors d(m_dnn, cc, fitted_batch(cc));
  if (warm_only) {
    int count = 0;
    GPUCHECK_DNN(m_dnn, cudnnGetConvolutionForwardAlgorithmMaxCount, m_handle, &count);
    std::vector<cudnnConvolutionFwdAlgoPerf_t> offered(static_cast<size_t>(std::max(count, 1)));
    int got = 0;
    GPUCHECK_DNN(m_dnn, cudnnGetConvolutionForwardAlgorithm_v7, m_handle, d.x.get(), d.w.get(),
                 d.conv.get(), d.y.get(), count, &got, offered.data());
    return;
  }
  ConvOperands ops(m_session, cc, d, m_rng);
  upload(ops.x, ops.x_count, ops.x_seed, cc.precision);
  upload(ops.w, ops.w_count, ops.w_seed, cc.precision);
  set_stage("cudnn heuristic " + cc.label);
  const int heuristic = heuristic_algo(cc, d, ops);

  protocol::ConvRecord record;
  record.label = cc.label;
  record.shape = ops.shape;
  record.gflop = ops.flops / 1e9;
  // A small case runs one fixed algorithm, not the heuristic's pick: its record says so.
  record.heuristic.algo =
      cc.perf ? std::string(algo_name(heuristic)) : fmt::format("{} (fixed)", algo_name(heuristic));
  if (!cc.perf) {
    set_stage("cudnn run and verify " + cc.label);
    verify(
        cc, ops, [&] { run_algo(d, ops, heuristic); }, algo_name(heuristic),
        cc.precision == Precision::fp32 && fault_planted("cudnn"));
    m_result.convolutions.push_back(record);
    return;
  }
  const LegacyTiming legacy = time_legacy(cc, d, ops, heuristic);
  const auto tflops = [&ops](double ms) { return ops.flops / (ms * 1e-3) / 1e12; };
  record.heuristic = {algo_name(heuristic), legacy.heuristic_ms, tflops(legacy.heuristic_ms)};
  record.found =
      protocol::ConvAlgoTiming{algo_name(legacy.found), legacy.found_ms, tflops(legacy.found_ms)};
  BestConvolution best{fmt::format("legacy API {}", algo_name(legacy.found)), legacy.found_ms};
  const std::string graph_text = time_graph(cc, d, ops, record.graph.emplace(), best);
  record.best = protocol::ConvBest{best.what.starts_with("graph") ? "graph" : "legacy", best.what,
                                   best.ms, tflops(best.ms)};
  m_result.convolutions.push_back(record);
  m_out["metrics"].push_back(metric(
      "conv_" + cc.label + "_tflops", tflops(best.ms), "TFLOP/s",
      fmt::format("{}; best: {} {:.3f} ms; legacy API: timed best {} {:.3f} ms, heuristic {} "
                  "{:.3f} ms; {}",
                  ops.shape, best.what, best.ms, algo_name(legacy.found), legacy.found_ms,
                  algo_name(heuristic), legacy.heuristic_ms, graph_text)));
  if (cc.precision == Precision::fp32) {
    determinism(cc, d, ops, legacy);
  }
}

int CudnnRunner::fitted_batch(const ConvCase& cc) const {
  // Courtesy: halve the batch until the tensors fit the memory budget.
  const auto bytes_for = [&cc](int batch) {
    const uint64_t p_out = (cc.h + 2 * cc.pad - cc.r) / cc.stride + 1;
    const uint64_t q_out = (cc.w + 2 * cc.pad - cc.s) / cc.stride + 1;
    return element_bytes(cc.precision) *
           (uint64_t(batch) * cc.c * cc.h * cc.w + uint64_t(cc.k) * cc.c * cc.r * cc.s +
            uint64_t(batch) * cc.k * p_out * q_out);
  };
  int n = cc.n;
  while (n > 1 && bytes_for(n) + k_workspace_cap / 4 > m_session.budget_bytes()) {
    n /= 2;
  }
  return n;
}

void CudnnRunner::verify(const ConvCase& cc, ConvOperands& ops, const std::function<void()>& run,
                         const std::string& what, bool plant) {
  const Precision p = cc.precision;
  const size_t size = ops.element_size;
  const ConvReference& ref = ops.reference;
  poison(ops.y);
  run();
  if (plant) {
    GPUCHECK_CU(m_cuda, cuMemsetD32Async,
                ops.y.get() + (m_rng.next() % (ops.y_count * size / 4)) * 4,
                0x47C35000U /* 100000.0f */, size_t{1}, m_stream.get());
  }
  m_stream.synchronize();
  Verification v{"cudnn_conv", fmt::format("convolution {} with {}", ops.shape, what)};
  const auto judge = [&](int ni, int ki, int pi, int qi, float got, double want, double sum_abs) {
    ++v.checked;
    if (!(std::abs(double(got) - want) <= tolerance(p) * sum_abs + 1e-6)) {
      if (v.mismatches++ == 0) {
        v.first_index = ref.y_at(ni, ki, pi, qi);
        v.got = fmt::format("{:.6g}", got);
        v.want = fmt::format("{:.6g} (tolerance {:.2g})", want, tolerance(p) * sum_abs + 1e-6);
      }
    }
  };
  const ConvGeometry& out = ref.geometry(); // n x k x oh x ow: the output's dimensions
  if (!cc.perf) {
    std::vector<unsigned char> host(ops.y_count * size);
    GPUCHECK_CU(m_cuda, cuMemcpyDtoH, host.data(), ops.y.get(), host.size());
    for (int ni = 0; ni < out.n; ++ni) {
      for (int ki = 0; ki < out.k; ++ki) {
        for (int pi = 0; pi < out.oh; ++pi) {
          for (int qi = 0; qi < out.ow; ++qi) {
            double sum_abs = 0.0;
            const double want = ref.output(ni, ki, pi, qi, sum_abs);
            judge(ni, ki, pi, qi, load(host.data() + ref.y_at(ni, ki, pi, qi) * size, p), want,
                  sum_abs);
          }
        }
      }
    }
  } else {
    if (ops.samples.empty()) {
      for (int sample = 0; sample < k_sampled_outputs; ++sample) {
        ConvOperands::Sample& sm = ops.samples.emplace_back();
        sm.ni = static_cast<int>(m_rng.next() % out.n);
        sm.ki = static_cast<int>(m_rng.next() % out.k);
        sm.pi = static_cast<int>(m_rng.next() % out.oh);
        sm.qi = static_cast<int>(m_rng.next() % out.ow);
      }
      parallel_for(
          ops.samples.size(),
          [&](uint64_t lo, uint64_t hi) {
            for (uint64_t i = lo; i < hi; ++i) {
              ConvOperands::Sample& sm = ops.samples[i];
              sm.want = ref.output(sm.ni, sm.ki, sm.pi, sm.qi, sm.sum_abs);
            }
          },
          64);
    }
    for (const ConvOperands::Sample& sm : ops.samples) {
      unsigned char bytes[4] = {};
      GPUCHECK_CU(m_cuda, cuMemcpyDtoH, bytes,
                  ops.y.get() + ref.y_at(sm.ni, sm.ki, sm.pi, sm.qi) * size, size);
      judge(sm.ni, sm.ki, sm.pi, sm.qi, load(bytes, p), sm.want, sm.sum_abs);
    }
  }
  m_out["verify"].push_back(protocol::to_json(v));
}

double CudnnRunner::time_calls(const std::function<void()>& call, double estimate_ms) {
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

double CudnnRunner::screen_calls(const std::function<void()>& call) {
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

void CudnnRunner::upload(const DeviceBuffer& dst, uint64_t elements, uint32_t seed, Precision p,
                         float scale) {
  if (m_module.loaded()) {
    // On the GPU: the same values (kernels/gpucheck_values.h), without the host's work.
    CUdeviceptr ptr = dst.get();
    uint64_t n = elements;
    uint32_t type = p == Precision::fp16   ? gpucheck_fp16
                    : p == Precision::bf16 ? gpucheck_bf16
                                           : gpucheck_fp32;
    launch(m_cuda, m_module.kernels().fill_values, grid_for(m_session, n, 256), 256, m_stream.get(),
           {&ptr, &n, &seed, &type, &scale});
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

void CudnnRunner::poison(const DeviceBuffer& buffer) {
  GPUCHECK_CU(m_cuda, cuMemsetD32Async, buffer.get(), 0xFFFFFFFFU,
              static_cast<size_t>(buffer.bytes() / 4), m_stream.get());
}

uint64_t CudnnRunner::hash_device(const DeviceBuffer& buffer) {
  if (m_module.loaded()) {
    DeviceBuffer sum(m_session, 8);
    GPUCHECK_CU(m_cuda, cuMemsetD32Async, sum.get(), 0U, size_t{2}, m_stream.get());
    CUdeviceptr words = buffer.get();
    CUdeviceptr sum_ptr = sum.get();
    uint64_t n = buffer.bytes() / 4;
    launch(m_cuda, m_module.kernels().hash_words, grid_for(m_session, n, 256), 256, m_stream.get(),
           {&words, &n, &sum_ptr});
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

void CudnnRunner::activations(uint64_t elements, bool timed) {
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
  GPUCHECK_DNN(m_dnn, cudnnSetTensor4dDescriptor, desc_raw, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1,
               1, static_cast<int>(elements / 4096), 4096);
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
    Verification v{"cudnn_activation", fmt::format("{} forward over {} fp32 values", mode.name, n)};
    if (timed && fault_planted("relu")) {
      // GPUCHECK_PLANT_FAULT=relu: one output changed after cuDNN wrote it (GPU tests).
      GPUCHECK_CU(m_cuda, cuMemsetD32Async, y.get() + (n / 2) * 4, 0x7F7F7F7FU, size_t{1},
                  m_stream.get());
      m_stream.synchronize();
    }
    if (m_module.loaded() && mode.mode == CUDNN_ACTIVATION_RELU) {
      // On the GPU: every output against max(input, 0), without copying them to the host.
      verify_relu_on_gpu(y, n, seed, k_scale, v);
    } else {
      verify_activation_on_host(mode.mode, y, n, seed, k_scale, v);
    }
    m_out["verify"].push_back(protocol::to_json(v));
    if (timed) {
      time_relu(call, n);
    }
  }
}

void CudnnRunner::verify_activation_on_host(cudnnActivationMode_t mode, const DeviceBuffer& y,
                                            uint64_t n, uint32_t seed, float scale,
                                            protocol::PayloadVerification& v) {
  // (input, expected, tolerance) of element i.
  const auto expected = [mode, seed, scale](uint64_t i) {
    const double in = input_value(i, seed, Precision::fp32, scale);
    if (mode == CUDNN_ACTIVATION_RELU) {
      return std::array<double, 3>{in, in > 0.0 ? in : 0.0, 0.0};
    }
    const double want =
        mode == CUDNN_ACTIVATION_SIGMOID ? 1.0 / (1.0 + std::exp(-in)) : std::tanh(in);
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
}

void CudnnRunner::verify_relu_on_gpu(const DeviceBuffer& y, uint64_t n, uint32_t seed, float scale,
                                     Verification& v) {
  DeviceBuffer counters(m_session, 16);
  GPUCHECK_CU(m_cuda, cuMemsetD32Async, counters.get(), 0U, size_t{2}, m_stream.get());
  GPUCHECK_CU(m_cuda, cuMemsetD32Async, counters.get() + 8, 0xFFFFFFFFU, size_t{2}, m_stream.get());
  CUdeviceptr out = y.get();
  uint64_t count = n;
  CUdeviceptr mismatches = counters.get();
  CUdeviceptr first_bad = counters.get() + 8;
  launch(m_cuda, m_module.kernels().relu_check, grid_for(m_session, n, 256), 256, m_stream.get(),
         {&out, &count, &seed, &scale, &mismatches, &first_bad});
  std::array<uint64_t, 2> got{};
  GPUCHECK_CU(m_cuda, cuMemcpyDtoHAsync, got.data(), counters.get(), sizeof got, m_stream.get());
  m_stream.synchronize();
  v.checked = n;
  v.mismatches = got[0];
  if (got[0] != 0) {
    float bad = 0.0F;
    GPUCHECK_CU(m_cuda, cuMemcpyDtoH, &bad, y.get() + got[1] * 4, sizeof bad);
    const double in = input_value(got[1], seed, Precision::fp32, scale);
    v.first_index = got[1];
    v.got = fmt::format("{:.9g}", bad);
    v.want = fmt::format("{:.9g} (input {:.9g})", in > 0.0 ? in : 0.0, in);
  }
}

void CudnnRunner::time_relu(const std::function<void()>& call, uint64_t n) {
  set_stage("cudnn relu timing");
  const double ms = time_calls(call, 0.1);
  m_out["metrics"].push_back(
      metric("relu_fp32_gbps", 2.0 * double(n) * 4 / (ms * 1e-3) / 1e9, "GB/s",
             fmt::format("cudnnActivationForward ReLU over {} Mi fp32 values, bytes read + written",
                         n >> 20)));
}

} // namespace gpucheck::gpu_checks::cudnn
