#pragma once
/// One forward convolution through cuDNN's backend (graph) API: tensor, convolution and operation
/// descriptors, an operation graph, the engine configs its heuristics offer (mode A, and FALLBACK
/// on request), an execution plan per config tried, and one variant pack binding the buffers.
/// This is what PyTorch reaches through cudnn-frontend; the legacy API offers fewer kernels.

#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "gpu_checks/cudnn/api.hpp"

namespace gpucheck::gpu_checks::cudnn {

/// Engine configs timed in a standard (not `full`) run: the first few of heuristic mode A.
inline constexpr size_t k_standard_graph_configs = 3;

/// The geometry and types of one forward convolution. Logical dimensions: X n,c,h,w; W k,c,r,s;
/// Y n,k,p,q (whatever the layout).
struct GraphConvSpec {
  int64_t n = 0, c = 0, h = 0, w = 0, k = 0, r = 0, s = 0, pad = 0, stride = 1, p = 0, q = 0;
  cudnnDataType_t data_type = CUDNN_DATA_FLOAT;
  bool nhwc = false;
};

/// Strides of a packed 4-d tensor whose logical dimensions are {d0, d1, d2, d3} (N,C,H,W or
/// K,C,R,S), laid out as NCHW (d1 outer to d2) or NHWC (d1 innermost).
std::array<int64_t, 4> packed_strides(const std::array<int64_t, 4>& dims, bool nhwc);

/// What the heuristics say about one engine config.
struct GraphEngineConfig {
  bool fallback = false;                          ///< from mode FALLBACK (else mode A)
  int rank = 0;                                   ///< position in its mode's list
  int64_t engine = -1;                            ///< CUDNN_ATTR_ENGINE_GLOBAL_INDEX
  std::vector<std::pair<int64_t, int64_t>> knobs; ///< (knob type, value), in cuDNN's order
  std::vector<std::string> numerical_notes;       ///< e.g. "TENSOR_CORE", "FFT", "WINOGRAD"
  bool runtime_compiled = false;                  ///< CUDNN_BEHAVIOR_NOTE_RUNTIME_COMPILATION
};

/// "engine 12, knobs 3=1 5=0" (knob types as cuDNN numbers them).
std::string describe(const GraphEngineConfig& config);

/// The name of a numerical note ("TENSOR_CORE", ...), or its number for one this code does not
/// know.
std::string numerical_note_name(int note);

/// Whether a config may run a true FP32 convolution (TF32 off): none of its notes says tensor
/// cores or down-converted inputs (PyTorch filters the same notes when allow_tf32 is off).
bool fits_strict_fp32(const GraphEngineConfig& config);

/// Indices into `configs` to build plans for and time, in order: every config in a `full` run,
/// else the first k_standard_graph_configs mode-A configs that need no runtime compilation (a
/// compile costs a run hundreds of milliseconds). Always without duplicates (same engine and
/// knobs) and, when `strict_fp32`, without configs that fail fits_strict_fp32().
std::vector<size_t> configs_to_try(const std::vector<GraphEngineConfig>& configs, bool full,
                                   bool strict_fp32);

/// A backend call that failed: which, and its status.
class CudnnGraphError : public std::runtime_error {
public:
  CudnnGraphError(std::string failed_call, cudnnStatus_t status_code)
      : std::runtime_error(failed_call + " failed"), call(std::move(failed_call)),
        status(status_code) {}
  std::string call;
  cudnnStatus_t status;
};

/// An owned backend descriptor (destroyed with it).
class BackendDescriptor {
public:
  /// Creates one; throws CudnnGraphError.
  BackendDescriptor(const CudnnBackendApi& api, cudnnBackendDescriptorType_t type);
  BackendDescriptor(BackendDescriptor&& other) noexcept;
  BackendDescriptor& operator=(BackendDescriptor&&) = delete;
  BackendDescriptor(const BackendDescriptor&) = delete;
  BackendDescriptor& operator=(const BackendDescriptor&) = delete;
  ~BackendDescriptor();

  [[nodiscard]] cudnnBackendDescriptor_t get() const { return m_desc; }
  /// cudnnBackendSetAttribute; throws CudnnGraphError naming `what`.
  void set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, int64_t count,
           const void* values, const char* what);
  /// cudnnBackendFinalize; throws CudnnGraphError naming `what`.
  void finalize(const char* what);

private:
  const CudnnBackendApi* m_api;
  cudnnBackendDescriptor_t m_desc = nullptr;
};

/// The operation graph of one forward convolution (alpha 1, beta 0, FP32 accumulation), its
/// engine configs and the plans built from them. Every descriptor lives as long as this object.
class ConvGraph {
public:
  /// Builds and finalizes the operation graph on `handle`; throws CudnnGraphError.
  ConvGraph(const CudnnBackendApi& api, cudnnHandle_t handle, const GraphConvSpec& spec);

  /// Appends the configs of heuristic mode A, then (when `fallback`) of mode FALLBACK, to
  /// configs(). Throws CudnnGraphError when mode A fails; a failing FALLBACK adds nothing.
  void query_heuristics(bool fallback);
  [[nodiscard]] const std::vector<GraphEngineConfig>& configs() const { return m_configs; }

  /// Builds the execution plan of configs()[config]. Returns its index for execute(), or -1 when
  /// cuDNN refuses it (finalize fails, e.g. CUDNN_STATUS_NOT_SUPPORTED); `status` says why.
  int build_plan(size_t config, int64_t& workspace_bytes, cudnnStatus_t& status);

  /// Binds the device buffers every later execute() uses; throws CudnnGraphError.
  void bind(void* x, void* w, void* y, void* workspace);
  /// cudnnBackendExecute of a plan on the handle's stream (asynchronous); its status.
  cudnnStatus_t execute(int plan);

private:
  void query_mode(cudnnBackendHeurMode_t mode, bool fallback);

  const CudnnBackendApi& m_api;
  cudnnHandle_t m_handle;
  std::vector<BackendDescriptor> m_keep; ///< tensors, convolution, operation, graph
  std::vector<BackendDescriptor> m_engine_configs;
  std::vector<GraphEngineConfig> m_configs;
  std::vector<BackendDescriptor> m_plans;
  std::vector<BackendDescriptor> m_variant_pack;
};

} // namespace gpucheck::gpu_checks::cudnn
