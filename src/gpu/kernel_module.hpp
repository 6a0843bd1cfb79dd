#pragma once
/// Loads one of the embedded fatbins (the one chosen for this driver and GPU, with fallback to the
/// next on a rejection) into the current context with cuModuleLoadDataEx, capturing the JIT
/// error and info logs, and resolves every gpucheck_ kernel. A failed load is data (the CUresult
/// and the log), never an exception: the checks that need no kernel of ours still run.

#include <cuda.h>

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "gpu/session.hpp"
#include "protocol/payloads.hpp"

namespace gpucheck::gpu {

/// The kernels in kernels/gpucheck_kernels.cu.
struct Kernels {
  CUfunction fma_chain = nullptr;
  CUfunction reduce_sum = nullptr;
  CUfunction fill_pattern = nullptr;
  CUfunction check_pattern = nullptr;
  CUfunction spin_gate = nullptr;
  CUfunction affine_step = nullptr;
  CUfunction fill_values = nullptr;
  CUfunction hash_words = nullptr;
  CUfunction memtest_write = nullptr;
  CUfunction memtest_check = nullptr;
  CUfunction compare_words = nullptr;
  CUfunction nccl_fill = nullptr;
  CUfunction nccl_check = nullptr;
  CUfunction relu_check = nullptr;
};

/// What chooses the image: the driver's version (cuDriverGetVersion) and the GPU's compute
/// capability.
struct ModuleTarget {
  int driver_version = 0;
  int cc_major = 0;
  int cc_minor = 0;
};

class KernelModule {
public:
  /// Load into the session's (current) context. Never throws for a load failure.
  explicit KernelModule(const DeviceSession& session);
  /// Load into the current context, for a GPU of `target` (a child that holds several contexts).
  KernelModule(const CudaApi& api, ModuleTarget target);
  KernelModule(const KernelModule&) = delete;
  KernelModule& operator=(const KernelModule&) = delete;
  ~KernelModule();

  [[nodiscard]] bool loaded() const { return m_loaded; }
  [[nodiscard]] const Kernels& kernels() const { return m_kernels; }
  /// What the check reports on success or failure: the payload's "module".
  [[nodiscard]] const protocol::KernelModuleReport& load_report() const { return m_load; }
  /// load_report() as JSON (protocol::to_json).
  [[nodiscard]] const nlohmann::json& report() const { return m_report; }

private:
  /// The load itself: chooses the images (choose_images()), hands them to the driver in order
  /// until one loads or one fails for a reason other than the image; fills m_load, the module
  /// and the kernels.
  void load(ModuleTarget target);
  /// One cuModuleLoadDataEx of `image`: sets m_module on success, and m_load's call, code, name,
  /// text and logs.
  CUresult load_image(std::span<const std::byte> image);

  const CudaApi* m_api;
  CUmodule m_module = nullptr;
  bool m_loaded = false;
  Kernels m_kernels;
  protocol::KernelModuleReport m_load;
  nlohmann::json m_report;
};

/// Launch `function` with a 1-D grid; throws CudaCallError when the launch fails.
void launch(const CudaApi& api, CUfunction function, unsigned grid, unsigned block, CUstream stream,
            std::vector<void*> params);

/// A grid for a grid-stride loop over n items: enough blocks to fill the device, no more.
unsigned grid_for(const DeviceSession& session, uint64_t n, unsigned block);
/// The same for a GPU of `sm_count` multiprocessors.
unsigned grid_for(int sm_count, uint64_t n, unsigned block);

} // namespace gpucheck::gpu
