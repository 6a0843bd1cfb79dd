#pragma once
/// The session of gpucheck's child over every GPU of a run (gpu-peers, span_child.cpp): libcuda,
/// cuInit and each listed GPU's primary context, held together in one process, on which the
/// spanning works (gpu.p2p's peer copies, gpu.nccl's all-reduce) run one after another.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "gpu/host_checks.hpp"
#include "gpu/kernel_module.hpp"
#include "platform/cuda_api.hpp"
#include "platform/dynlib.hpp"
#include "protocol/payloads.hpp"

namespace gpucheck::gpu {

/// One GPU of the child: its device, primary context and buffers.
struct PeerGpu {
  CUdevice device = 0;
  CUcontext context = nullptr;
  protocol::PeerDevice description;
  CUdeviceptr source = 0;      ///< the pattern this GPU sends
  CUdeviceptr destination = 0; ///< what it receives
  uint32_t seed = 0;
  /// gpucheck's kernels in this context: the patterns are written and checked on the GPU
  /// (null when they could not be loaded: the host does it, more slowly).
  std::shared_ptr<KernelModule> module;
  int sm_count = 1;
  CUdeviceptr counters = 0; ///< the checks' mismatch count and first bad index
};

/// libcuda, cuInit, every listed device's primary context; released in the destructor.
class PeerSession {
public:
  /// The contexts of `ordinals` (as this child sees them), one thread each; waits for the
  /// engine's setup before them, or after them with GPUCHECK_CONTEXTS_AT_START=1.
  explicit PeerSession(const std::vector<int>& ordinals);
  PeerSession(const PeerSession&) = delete;
  PeerSession& operator=(const PeerSession&) = delete;
  ~PeerSession();
  [[nodiscard]] const CudaApi& api() const { return m_api; }
  [[nodiscard]] std::vector<PeerGpu>& gpus() { return m_gpus; }
  /// The buffers this child may take on each GPU (the plan's allowance), nullopt when run alone.
  [[nodiscard]] std::optional<unsigned long long> allowance() const { return m_allowance; }
  void make_current(const PeerGpu& gpu) const;
  /// gpucheck's kernels in every context, once (a load takes about a millisecond): where one
  /// cannot be loaded, that GPU's patterns are written and checked by the host.
  void load_kernels();

private:
  DynamicLibrary m_lib;
  CudaApi m_api;
  std::vector<PeerGpu> m_gpus;
  std::optional<unsigned long long> m_allowance;
  bool m_kernels_tried = false;
};

/// A stream of the current context, destroyed with it.
class PeerStream {
public:
  explicit PeerStream(const CudaApi& api) : m_api(&api) {
    GPUCHECK_CU(api, cuStreamCreate, &m_stream, static_cast<unsigned>(CU_STREAM_NON_BLOCKING));
  }
  PeerStream(const PeerStream&) = delete;
  PeerStream& operator=(const PeerStream&) = delete;
  ~PeerStream() {
    if (m_stream != nullptr && m_api->cuStreamDestroy != nullptr) {
      m_api->cuStreamDestroy(m_stream);
    }
  }
  [[nodiscard]] CUstream get() const { return m_stream; }

private:
  const CudaApi* m_api;
  CUstream m_stream = nullptr;
};

/// Count on `gpu` the words its check kernel finds wrong (gpucheck_check_pattern or
/// gpucheck_nccl_check, launched by `launch_check` with the counters' addresses): the mismatches
/// and the first bad index.
Mismatches count_on_gpu(PeerSession& session, const PeerGpu& gpu,
                        const std::function<void(CUdeviceptr, CUdeviceptr)>& launch_check);

} // namespace gpucheck::gpu
