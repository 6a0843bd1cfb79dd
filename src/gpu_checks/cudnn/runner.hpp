#pragma once
/// The cuDNN check's work on one handle and stream: the gpu-cudnn child (work.cpp) runs one
/// CudnnRunner on its main thread and one on each preparation thread. Its convolutions are set up
/// here (runner.cpp: descriptors, operands, verification against the CPU reference of
/// reference.hpp), timed through the legacy API (legacy.cpp: the heuristic's and the
/// fastest found algorithm, determinism) and through the graph API (graph_path.cpp: engine
/// configs screened, the fastest timed, the best verified).

#include <cudnn.h>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu/driver_objects.hpp"
#include "gpu/kernel_module.hpp"
#include "gpu/random.hpp"
#include "gpu/session.hpp"
#include "gpu_checks/cudnn/api.hpp"
#include "gpu_checks/cudnn/reference.hpp"
#include "protocol/payloads.hpp"

namespace gpucheck::gpu_checks::cudnn {

// The GPU children's types this check's work is built of.
using gpu::DeviceBuffer;
using gpu::DeviceSession;
using gpu::Event;
using gpu::KernelModule;
using gpu::PinnedBuffer;
using gpu::SplitMix64;
using gpu::Stream;
using platform::CudaApi;

class ConvGraph; // gpu_checks/cudnn/graph.hpp

/// A cuDNN call that did not return CUDNN_STATUS_SUCCESS: the payload's `failure` of gpu.cudnn.
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

/// Throw CudnnError (with cuDNN's last error text) unless `status` is CUDNN_STATUS_SUCCESS.
void check_dnn(const CudnnApi& api, cudnnStatus_t status, const char* call);
#define GPUCHECK_DNN(api, fn, ...) check_dnn((api), (api).fn(__VA_ARGS__), #fn)

/// A legacy-API descriptor, destroyed with its owner.
template <typename T, typename Destroy> class Descriptor {
public:
  Descriptor(T handle, Destroy destroy) : m_handle(handle), m_destroy(destroy) {}
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  ~Descriptor() {
    if (m_handle != nullptr) {
      m_destroy(m_handle);
    }
  }
  [[nodiscard]] T get() const { return m_handle; }
  /// Where cudnnCreate*Descriptor writes the handle of a descriptor made empty.
  [[nodiscard]] T* handle() { return &m_handle; }

private:
  T m_handle;
  Destroy m_destroy;
};

using TensorDescriptor =
    Descriptor<cudnnTensorDescriptor_t, decltype(CudnnApi::cudnnDestroyTensorDescriptor)>;
using FilterDescriptor =
    Descriptor<cudnnFilterDescriptor_t, decltype(CudnnApi::cudnnDestroyFilterDescriptor)>;
using ConvolutionDescriptor =
    Descriptor<cudnnConvolutionDescriptor_t, decltype(CudnnApi::cudnnDestroyConvolutionDescriptor)>;

/// cuDNN's data type and math type for a precision (FP32: FMA math, no TF32).
cudnnDataType_t data_type(Precision p);
cudnnMathType_t math_type(Precision p);
/// A legacy forward algorithm's name ("IMPLICIT_GEMM", ...).
const char* algo_name(int algo);

/// One convolution the check runs: its shape, precision and layout.
struct ConvCase {
  std::string label;
  int n, c, h, w, k, r, s, pad, stride;
  Precision precision;
  bool nhwc;
  bool perf; ///< time heuristic and found algorithms; verify a sample (else verify every output)
};

/// A case's legacy-API descriptors: the batch `n` (halved until the tensors fit the budget) and the
/// output's dimensions.
struct ConvDescriptors {
  ConvDescriptors(const CudnnApi& dnn, const ConvCase& cc, int batch);
  ConvDescriptors(const ConvDescriptors&) = delete;
  ConvDescriptors& operator=(const ConvDescriptors&) = delete;

  int n = 0;
  int on = 0, ok = 0, oh = 0, ow = 0; ///< the output's N, K, P, Q
  TensorDescriptor x;
  TensorDescriptor y;
  FilterDescriptor w;
  ConvolutionDescriptor conv;
};

/// A case's operands on the GPU, filled with hashed inputs; the workspace; the CPU reference over
/// the same inputs; and the sampled outputs its verifications share.
struct ConvOperands {
  /// Sizes, allocates (the workspace: the timed cases' cap, or a small one for the cases that
  /// run before the gate, within what the budget leaves) and draws the inputs' seeds; the caller
  /// fills x and w.
  ConvOperands(const DeviceSession& session, const ConvCase& cc, const ConvDescriptors& d,
               SplitMix64& rng);
  ConvOperands(const ConvOperands&) = delete;
  ConvOperands& operator=(const ConvOperands&) = delete;

  /// One output sampled for verification and its reference.
  struct Sample {
    int ni, ki, pi, qi;
    double want, sum_abs;
  };

  uint64_t x_count = 0, w_count = 0, y_count = 0;
  size_t element_size = 0;
  uint64_t workspace_cap = 0;
  DeviceBuffer x;
  DeviceBuffer w;
  DeviceBuffer y;
  DeviceBuffer workspace;
  uint32_t x_seed = 0;
  uint32_t w_seed = 0;
  ConvReference reference;
  double flops = 0.0;
  std::string shape;           ///< "64x64x56x56, 64 filters 3x3, pad 1, stride 1, FP32 NCHW"
  std::vector<Sample> samples; ///< drawn at the first verification of a timed case
};

/// What the legacy API's timing found.
struct LegacyTiming {
  int found = -1;
  double heuristic_ms = 0.0;
  double found_ms = 0.0;
  cudnnDeterminism_t found_determinism = CUDNN_NON_DETERMINISTIC;
};

/// One of cudnnFind's results, in its order: whether the algorithm ran, and its time.
struct FoundAlgo {
  bool ran = false;
  float ms = 0.0F;
};

/// The results of cudnnFind to time again (indices into `found`): its first two that ran, the
/// second only when within 1.5x of the first's time.
std::vector<size_t> find_finalists(const std::vector<FoundAlgo>& found);

/// The fastest way found so far to run a timed case (legacy or graph API).
struct BestConvolution {
  std::string what; ///< "legacy API FFT_TILING", "graph API eng0 ..."
  double ms = 0.0;
};

class CudnnRunner {
public:
  /// `module`: gpucheck's kernels, which generate the inputs and hash outputs on the GPU; when
  /// they did not load, the host does both (slower, same values). Metrics and verifications go
  /// into `out` (the envelope), convolutions and determinism into `result`.
  CudnnRunner(const DeviceSession& session, const KernelModule& module, const CudnnApi& dnn,
              const CudnnBackendApi& graph, bool full, nlohmann::json& out,
              protocol::CudnnPayload& result);
  CudnnRunner(const CudnnRunner&) = delete;
  CudnnRunner& operator=(const CudnnRunner&) = delete;
  ~CudnnRunner();

  /// One case: a small one verified on every output with one fixed algorithm; a timed one through
  /// both APIs, verified on sampled outputs, with its TFLOP/s metric and, in FP32, determinism.
  /// `warm_only`: create the descriptors and ask the legacy heuristic for its algorithms, and
  /// nothing else (no buffer, no GPU work): its first call per data type is long host work
  /// inside cuDNN, done ahead, beside the other checks' work.
  void convolution(const ConvCase& cc, bool warm_only = false);

  /// Activation forward checked against the CPU (ReLU on the GPU where gpucheck's kernels are
  /// loaded): `timed` is ReLU over `elements` values, timed (gated work); otherwise sigmoid, tanh
  /// and ReLU over at most 1 Mi values (before the gate: their first use loads cuDNN's
  /// elementwise kernels, so the timed ReLU finds its kernel loaded).
  void activations(uint64_t elements, bool timed);

private:
  // runner.cpp: the case's setting up, running and verification.
  /// Time `call` with events: warm-up, then k_timing_samples samples; median ms per call.
  double time_calls(const std::function<void()>& call, double estimate_ms);
  /// One sample of about k_screen_target_ms after one warm-up call: ms per call.
  double screen_calls(const std::function<void()>& call);
  void upload(const DeviceBuffer& dst, uint64_t elements, uint32_t seed, Precision p,
              float scale = 1.0F);
  void poison(const DeviceBuffer& buffer);
  /// A hash of the buffer's contents: on the GPU (gpucheck_hash_words, order-independent), else
  /// FNV-1a on the host over its 64-bit words (a byte-wise tail, zero-padded). Compared only
  /// with a hash of the same kind.
  uint64_t hash_device(const DeviceBuffer& buffer);
  /// Every activation output in `y` against the CPU's (chunk by chunk; sigmoid and tanh with a
  /// tolerance of 1e-5 + 1e-3 x |expected|, ReLU exactly).
  void verify_activation_on_host(cudnnActivationMode_t mode, const DeviceBuffer& y, uint64_t n,
                                 uint32_t seed, float scale, protocol::PayloadVerification& v);
  /// Every ReLU output in `y` against max(input, 0) on the GPU (gpucheck_relu_check): the
  /// mismatches and the first one into `v`.
  void verify_relu_on_gpu(const DeviceBuffer& y, uint64_t n, uint32_t seed, float scale,
                          protocol::PayloadVerification& v);
  /// The timed ReLU's figure: bytes read and written per second.
  void time_relu(const std::function<void()>& call, uint64_t n);
  /// The largest batch, from the case's, whose tensors fit the memory budget.
  int fitted_batch(const ConvCase& cc) const;
  /// Poison y, `run`, and check y against the reference: every output for a small case,
  /// k_sampled_outputs for a timed one (drawn once per case and shared by all its verifications,
  /// so each reference is computed once). `plant`: corrupt one output first (GPU tests).
  void verify(const ConvCase& cc, ConvOperands& ops, const std::function<void()>& run,
              const std::string& what, bool plant);

  // legacy.cpp: the legacy API.
  /// The legacy heuristic's first algorithm that fits the workspace (a small case: one fixed
  /// algorithm instead); throws CudnnError when none fits.
  int heuristic_algo(const ConvCase& cc, const ConvDescriptors& d, const ConvOperands& ops);
  /// Run one legacy algorithm on the case's operands.
  void run_algo(const ConvDescriptors& d, ConvOperands& ops, int algo);
  /// cudnnFind's fastest algorithm; the heuristic's and it timed, each verified.
  LegacyTiming time_legacy(const ConvCase& cc, const ConvDescriptors& d, ConvOperands& ops,
                           int heuristic);
  /// FP32: a deterministic algorithm, run twice on the same input, must give the same bits.
  void determinism(const ConvCase& cc, const ConvDescriptors& d, ConvOperands& ops,
                   const LegacyTiming& legacy);

  // graph_path.cpp: the graph API.
  /// The engine configs its heuristics offer, screened, the fastest timed like the legacy
  /// algorithms, the best verified; fills `graph`, improves `best` when faster; returns the
  /// metric's words on it.
  std::string time_graph(const ConvCase& cc, const ConvDescriptors& d, ConvOperands& ops,
                         protocol::ConvGraph& graph, BestConvolution& best);
  /// A config whose plan built and ran once, and its screening time.
  struct ScreenedPlan {
    size_t config;
    int plan;
    double ms;
  };
  /// The plans of the configs worth trying, built, run once and screened, fastest first; what
  /// was refused, too large for the workspace or failed is counted in `screening`.
  std::vector<ScreenedPlan> screen_plans(ConvGraph& graph, const ConvCase& cc,
                                         const ConvOperands& ops,
                                         protocol::ConvGraphScreening& screening);
  /// The fastest screened plans timed like the legacy algorithms, the best verified and
  /// recorded in `record` (and in `best` when faster); the metric's words on it.
  std::string time_finalists(ConvGraph& graph, const ConvCase& cc, ConvOperands& ops,
                             const std::vector<ScreenedPlan>& screened, protocol::ConvGraph& record,
                             BestConvolution& best);

  const DeviceSession& m_session;
  const CudaApi& m_cuda;
  const KernelModule& m_module;
  const CudnnApi& m_dnn;
  const CudnnBackendApi& m_graph;
  bool m_full;
  nlohmann::json& m_out;
  protocol::CudnnPayload& m_result;
  Stream m_stream;
  Event m_start;
  Event m_end;
  SplitMix64 m_rng;
  cudnnHandle_t m_handle = nullptr;
};

} // namespace gpucheck::gpu_checks::cudnn
