#include "gpu/kernel_module.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdlib>
#include <span>
#include <string_view>

#include "gpu/child.hpp"
#include "gpu/cuda_call.hpp"
#include "gpu/kernel_image.hpp"
#include "gpu/session.hpp"
#include "kernel_build.hpp"

namespace gpucheck::gpu {

namespace {
constexpr size_t k_log_bytes = 8192;

std::string trim_log(const char* text) {
  std::string log(text);
  while (!log.empty() && (log.back() == '\n' || log.back() == '\0' || log.back() == ' ')) {
    log.pop_back();
  }
  return log;
}
} // namespace

KernelModule::KernelModule(const DeviceSession& session)
    : KernelModule(session.api(),
                   {session.driver_version(), session.cc_major(), session.cc_minor()}) {}

KernelModule::KernelModule(const CudaApi& api, ModuleTarget target) : m_api(&api) {
  load(target);
  m_report = protocol::to_json(m_load);
}

namespace {
/// cuModuleLoadDataEx answers that mean "this image does not suit this driver or GPU": the next
/// image may. Anything else (out of memory, a lost GPU) is the machine's answer and stops the
/// tries.
bool image_rejected(CUresult result) {
  switch (result) {
  case CUDA_ERROR_INVALID_IMAGE:
  case CUDA_ERROR_NO_BINARY_FOR_GPU:
  case CUDA_ERROR_INVALID_PTX:
  case CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
  case CUDA_ERROR_JIT_COMPILER_NOT_FOUND:
  case CUDA_ERROR_INVALID_SOURCE:
    return true;
  default:
    return static_cast<int>(result) == 225; // CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC
  }
}

/// CUDA_FORCE_PTX_JIT=1: the driver ignores every SASS entry and JIT-compiles the PTX.
bool force_ptx_jit() {
  const char* value = std::getenv("CUDA_FORCE_PTX_JIT");
  return value != nullptr && std::string_view(value) == "1";
}
/// Resolve and touch every kernel now (nvbandwidth's preload): under lazy loading the first use
/// would otherwise load it, which must never happen while a copy gate is closed. False, with
/// the failed call in `load`, when one is missing.
bool resolve_kernels(const CudaApi& api, CUmodule module, Kernels& kernels,
                     protocol::KernelModuleReport& load) {
  const std::array<std::pair<const char*, CUfunction*>, 14> wanted{{
      {"gpucheck_fma_chain", &kernels.fma_chain},
      {"gpucheck_reduce_sum", &kernels.reduce_sum},
      {"gpucheck_fill_pattern", &kernels.fill_pattern},
      {"gpucheck_check_pattern", &kernels.check_pattern},
      {"gpucheck_spin_gate", &kernels.spin_gate},
      {"gpucheck_affine_step", &kernels.affine_step},
      {"gpucheck_fill_values", &kernels.fill_values},
      {"gpucheck_hash_words", &kernels.hash_words},
      {"gpucheck_memtest_write", &kernels.memtest_write},
      {"gpucheck_memtest_check", &kernels.memtest_check},
      {"gpucheck_compare_words", &kernels.compare_words},
      {"gpucheck_nccl_fill", &kernels.nccl_fill},
      {"gpucheck_nccl_check", &kernels.nccl_check},
      {"gpucheck_relu_check", &kernels.relu_check},
  }};
  for (const auto& [name, slot] : wanted) {
    const CUresult got = api.cuModuleGetFunction(slot, module, name);
    if (got != CUDA_SUCCESS) {
      load.call = fmt::format("cuModuleGetFunction({})", name);
      load.code = static_cast<int>(got);
      load.name = cuda_error_name(static_cast<int>(got));
      load.text = cuda_error_text(static_cast<int>(got));
      return false;
    }
    int registers = 0;
    if (api.cuFuncGetAttribute != nullptr) {
      api.cuFuncGetAttribute(&registers, CU_FUNC_ATTRIBUTE_NUM_REGS, *slot);
    }
  }
  return true;
}
} // namespace

void KernelModule::load(ModuleTarget target) {
  const std::vector<KernelImage>& images = embedded_images();
  m_load.loaded = false;
  if (images.empty() || !kernel_build::k_kernels_built) {
    m_load.toolkit = kernel_build::k_toolkit_release;
    m_load.route = "none";
    m_load.call = "build";
    m_load.code = -2;
    m_load.name = "no kernels built";
    m_load.text = "this gpucheck was built without nvcc, so it carries no GPU kernels";
    return;
  }
  const char* only = std::getenv("GPUCHECK_KERNEL_IMAGE");
  const ImageChoice choice =
      choose_images(images, target.driver_version, target.cc_major, target.cc_minor,
                    force_ptx_jit(), only != nullptr ? only : "");
  if (choice.candidates.empty()) {
    m_load.route = "none";
    m_load.reason = choice.none_reason;
    m_load.call = "choose";
    m_load.code = -3;
    m_load.name = "no image fits";
    m_load.text = choice.none_reason;
    return;
  }
  set_stage("load kernels");
  const auto start = std::chrono::steady_clock::now();
  for (const ImageCandidate& candidate : choice.candidates) {
    const KernelImage& image = images.at(candidate.image);
    m_load.image_name = image.name();
    m_load.toolkit = image.toolkit;
    m_load.image_bytes = image.fatbin.size();
    m_load.image.clear();
    for (const FatbinEntry& entry : image.entries) {
      m_load.image.push_back(to_string(entry));
    }
    m_load.route = candidate.route;
    m_load.reason = candidate.why;
    m_load.fallback = candidate.image != 0;
    const CUresult result = load_image(image.fatbin);
    m_load.attempts.push_back({image.name(), candidate.route, m_load.code, m_load.name});
    if (result == CUDA_SUCCESS || !image_rejected(result)) {
      break;
    }
  }
  m_load.load_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (m_module == nullptr) {
    return;
  }
  if (!resolve_kernels(*m_api, m_module, m_kernels, m_load)) {
    return;
  }
  m_loaded = true;
  m_load.loaded = true;
}

CUresult KernelModule::load_image(std::span<const std::byte> image) {
  std::array<char, k_log_bytes> error_log{};
  std::array<char, k_log_bytes> info_log{};
  std::array<CUjit_option, 5> options{CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                                      CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
                                      CU_JIT_LOG_VERBOSE};
  // The driver reads sizes and flags from the pointer slots themselves (cuda.h's convention).
  std::array<void*, 5> values{
      error_log.data(), reinterpret_cast<void*>(static_cast<uintptr_t>(k_log_bytes - 1)), // NOLINT
      info_log.data(), reinterpret_cast<void*>(static_cast<uintptr_t>(k_log_bytes - 1)),  // NOLINT
      reinterpret_cast<void*>(static_cast<uintptr_t>(0))};                                // NOLINT
  // GPUCHECK_PLANT_FAULT=kernel-load: hand the driver every image with a broken header, so the
  // GPU tests see a real load failure and that the checks needing no kernel still run.
  std::vector<std::byte> broken;
  const void* data = image.data();
  if (fault_planted("kernel-load")) {
    broken.assign(image.begin(), image.end());
    broken[0] = std::byte{0};
    data = broken.data();
  }
  const CUresult result =
      m_api->cuModuleLoadDataEx == nullptr
          ? CUDA_ERROR_NOT_FOUND
          : m_api->cuModuleLoadDataEx(&m_module, data, static_cast<unsigned>(options.size()),
                                      options.data(), values.data());
  m_load.call = "cuModuleLoadDataEx";
  m_load.code = static_cast<int>(result);
  m_load.name = cuda_error_name(static_cast<int>(result));
  m_load.text = cuda_error_text(static_cast<int>(result));
  m_load.error_log = trim_log(error_log.data());
  m_load.info_log = trim_log(info_log.data());
  if (result != CUDA_SUCCESS) {
    m_module = nullptr;
  }
  return result;
}

KernelModule::~KernelModule() {
  if (m_module != nullptr && m_api->cuModuleUnload != nullptr) {
    m_api->cuModuleUnload(m_module);
  }
}

void launch(const CudaApi& api, CUfunction function, unsigned grid, unsigned block, CUstream stream,
            std::vector<void*> params) {
  GPUCHECK_CU(api, cuLaunchKernel, function, grid, 1U, 1U, block, 1U, 1U, 0U, stream, params.data(),
              static_cast<void**>(nullptr));
}

unsigned grid_for(const DeviceSession& session, uint64_t n, unsigned block) {
  return grid_for(session.sm_count(), n, block);
}

unsigned grid_for(int sm_count, uint64_t n, unsigned block) {
  const uint64_t needed = (n + block - 1) / block;
  const uint64_t full = static_cast<uint64_t>(std::max(1, sm_count)) * 8;
  return static_cast<unsigned>(std::max<uint64_t>(1, std::min(needed, full)));
}

} // namespace gpucheck::gpu
