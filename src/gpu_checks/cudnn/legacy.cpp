// The cuDNN check's legacy API (cudnnConvolutionForward): the heuristic's algorithm and the
// fastest of cudnnFind's first two, each timed and verified, and determinism in FP32.
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "gpu/child.hpp"
#include "gpu_checks/cudnn/runner.hpp"

namespace gpucheck::gpu_checks::cudnn {

using namespace gpucheck::gpu; // the children's stages, checks and helpers

namespace {
constexpr uint64_t k_mib = 1ULL << 20;
/// cudnnFind's results timed again: at most this many, within this factor of its fastest.
constexpr size_t k_find_finalists = 2;
constexpr float k_find_close = 1.5F;
} // namespace

std::vector<size_t> find_finalists(const std::vector<FoundAlgo>& found) {
  // cudnnFind times each algorithm once, and one disturbed reading can rank a slower one first
  // (docs/performance.md): its first two that ran, within k_find_close of the first, are both
  // timed as the figures are, and the faster kept.
  std::vector<size_t> finalists;
  for (size_t i = 0; i < found.size() && finalists.size() < k_find_finalists; ++i) {
    if (found[i].ran &&
        (finalists.empty() || found[i].ms <= k_find_close * found[finalists[0]].ms)) {
      finalists.push_back(i);
    }
  }
  return finalists;
}

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

int CudnnRunner::heuristic_algo(const ConvCase& cc, const ConvDescriptors& d,
                                const ConvOperands& ops) {
  int max_algos = 0;
  GPUCHECK_DNN(m_dnn, cudnnGetConvolutionForwardAlgorithmMaxCount, m_handle, &max_algos);
  std::vector<cudnnConvolutionFwdAlgoPerf_t> perf(static_cast<size_t>(std::max(max_algos, 1)));
  int returned = 0;
  if (cc.perf) {
    GPUCHECK_DNN(m_dnn, cudnnGetConvolutionForwardAlgorithm_v7, m_handle, d.x.get(), d.w.get(),
                 d.conv.get(), d.y.get(), max_algos, &returned, perf.data());
  } else {
    // The small verified cases run one fixed algorithm (every data type and layout here has
    // it), so that they need not wait for the heuristic's first call (warm_only).
    returned = 1;
    perf[0].algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM;
    perf[0].status = CUDNN_STATUS_SUCCESS;
    perf[0].memory = 0;
  }
  for (int i = 0; i < returned; ++i) {
    if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].memory <= ops.workspace_cap) {
      return perf[i].algo;
    }
  }
  throw CudnnError("cudnnGetConvolutionForwardAlgorithm_v7", 0, "no usable algorithm",
                   fmt::format("none of {} algorithms fits a {} MiB workspace", returned,
                               ops.workspace_cap / k_mib));
}

void CudnnRunner::run_algo(const ConvDescriptors& d, ConvOperands& ops, int algo) {
  size_t ws = 0;
  GPUCHECK_DNN(m_dnn, cudnnGetConvolutionForwardWorkspaceSize, m_handle, d.x.get(), d.w.get(),
               d.conv.get(), d.y.get(), static_cast<cudnnConvolutionFwdAlgo_t>(algo), &ws);
  const float alpha = 1.0F;
  const float beta = 0.0F;
  GPUCHECK_DNN(m_dnn, cudnnConvolutionForward, m_handle, &alpha, d.x.get(), ops.x.raw(), d.w.get(),
               ops.w.raw(), d.conv.get(), static_cast<cudnnConvolutionFwdAlgo_t>(algo),
               ops.workspace.raw(), ws, &beta, d.y.get(), ops.y.raw());
}

LegacyTiming CudnnRunner::time_legacy(const ConvCase& cc, const ConvDescriptors& d,
                                      ConvOperands& ops, int heuristic) {
  set_stage("cudnn find algorithm " + cc.label);
  int max_algos = 0;
  GPUCHECK_DNN(m_dnn, cudnnGetConvolutionForwardAlgorithmMaxCount, m_handle, &max_algos);
  std::vector<cudnnConvolutionFwdAlgoPerf_t> perf(static_cast<size_t>(std::max(max_algos, 1)));
  int returned = 0;
  GPUCHECK_DNN(m_dnn, cudnnFindConvolutionForwardAlgorithmEx, m_handle, d.x.get(), ops.x.raw(),
               d.w.get(), ops.w.raw(), d.conv.get(), d.y.get(), ops.y.raw(), max_algos, &returned,
               perf.data(), ops.workspace.raw(), static_cast<size_t>(ops.workspace_cap));
  std::vector<FoundAlgo> found_list;
  for (int i = 0; i < returned; ++i) {
    found_list.push_back({perf[i].status == CUDNN_STATUS_SUCCESS, perf[i].time});
  }
  std::vector<const cudnnConvolutionFwdAlgoPerf_t*> finalists;
  for (const size_t i : find_finalists(found_list)) {
    finalists.push_back(&perf[i]);
  }
  LegacyTiming timing;
  const double estimate = finalists.empty() ? 1.0 : finalists.front()->time;
  set_stage("cudnn timing " + cc.label);
  timing.heuristic_ms = time_calls([&] { run_algo(d, ops, heuristic); }, estimate);
  for (const cudnnConvolutionFwdAlgoPerf_t* f : finalists) {
    const int algo = f->algo;
    const double ms = algo == heuristic ? timing.heuristic_ms
                                        : time_calls([&] { run_algo(d, ops, algo); }, f->time);
    if (timing.found < 0 || ms < timing.found_ms) {
      timing.found = algo;
      timing.found_ms = ms;
      timing.found_determinism = f->determinism;
    }
  }
  if (timing.found < 0) {
    timing.found = heuristic;
    timing.found_ms = timing.heuristic_ms;
  }
  const int found = timing.found;
  verify(
      cc, ops, [&] { run_algo(d, ops, heuristic); }, algo_name(heuristic), false);
  if (found != heuristic) {
    verify(
        cc, ops, [&] { run_algo(d, ops, found); }, algo_name(found), false);
  }
  return timing;
}

void CudnnRunner::determinism(const ConvCase& cc, const ConvDescriptors& d, ConvOperands& ops,
                              const LegacyTiming& legacy) {
  set_stage("cudnn determinism " + cc.label);
  const int algo =
      legacy.found_determinism == CUDNN_DETERMINISTIC ? legacy.found : 0; // IMPLICIT_GEMM
  uint64_t hashes[2] = {0, 0};
  for (uint64_t& hash : hashes) {
    poison(ops.y);
    run_algo(d, ops, algo);
    m_stream.synchronize();
    hash = hash_device(ops.y);
  }
  m_result.determinism = protocol::CudnnDeterminism{
      cc.label,
      algo_name(algo),
      {fmt::format("{:016x}", hashes[0]), fmt::format("{:016x}", hashes[1])},
      hashes[0] == hashes[1]};
}

} // namespace gpucheck::gpu_checks::cudnn
