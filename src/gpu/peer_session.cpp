#include "gpu/peer_session.hpp"

#include <array>
#include <cstdlib>
#include <string>
#include <string_view>
#include <thread>

#include "gpu/child.hpp"
#include "gpu/cuda_call.hpp"
#include "gpu/session.hpp"
#include "protocol/messages.hpp"

namespace gpucheck::gpu {

PeerSession::PeerSession(const std::vector<int>& ordinals) {
  set_stage("driver");
  set_hardware_queues(1); // as the per-GPU children: copies and NCCL need no more
  LoadedDriver driver = load_driver();
  m_lib = std::move(driver.lib);
  m_api = driver.api;
  GPUCHECK_CU(m_api, cuInit, 0U);
  // GPUCHECK_CONTEXTS_AT_START (the engine's rule span_beside_on_idle_gpus): the contexts now,
  // and the setup then releases what follows them.
  const char* at_start = std::getenv("GPUCHECK_CONTEXTS_AT_START");
  const bool early = at_start != nullptr && std::string_view(at_start) == "1";
  if (!early) {
    m_allowance = protocol::gate::await_setup();
  }
  set_stage("context");
  // Every GPU's context at once, one thread each, rather than one after another.
  std::vector<CUdevice> devices(ordinals.size(), 0);
  std::vector<CUcontext> contexts(ordinals.size(), nullptr);
  std::vector<CUresult> results(ordinals.size(), CUDA_SUCCESS);
  std::vector<const char*> calls(ordinals.size(), "cuDeviceGet");
  {
    std::vector<std::thread> threads;
    for (size_t i = 0; i < ordinals.size(); ++i) {
      threads.emplace_back([&, i] {
        results[i] = m_api.cuDeviceGet(&devices[i], ordinals[i]);
        if (results[i] == CUDA_SUCCESS) {
          calls[i] = "cuDevicePrimaryCtxRetain";
          results[i] = m_api.cuDevicePrimaryCtxRetain(&contexts[i], devices[i]);
        }
      });
    }
    for (std::thread& t : threads) {
      t.join();
    }
  }
  for (size_t i = 0; i < ordinals.size(); ++i) {
    if (contexts[i] != nullptr) {
      m_gpus.push_back({devices[i], contexts[i]}); // released in the destructor from here on
    }
  }
  for (size_t i = 0; i < ordinals.size(); ++i) {
    check_cu(results[i], calls[i]); // the first failure, in the GPUs' order
  }
  for (size_t i = 0; i < ordinals.size(); ++i) {
    const int ordinal = ordinals[i];
    PeerGpu& own = m_gpus[i];
    const PeerGpu& gpu = own;
    GPUCHECK_CU(m_api, cuCtxSetCurrent, own.context);
    if (m_api.cuCtxSetLimit != nullptr) {
      // As DeviceSession: gpucheck's copies need no per-thread stack.
      m_api.cuCtxSetLimit(CU_LIMIT_STACK_SIZE, 16);
    }
    std::array<char, 128> name{};
    GPUCHECK_CU(m_api, cuDeviceGetName, name.data(), static_cast<int>(name.size()), gpu.device);
    std::array<char, 32> bus{};
    if (m_api.cuDeviceGetPCIBusId != nullptr) {
      m_api.cuDeviceGetPCIBusId(bus.data(), static_cast<int>(bus.size()), gpu.device);
    }
    own.description = {ordinal, std::string(name.data()), std::string(bus.data())};
  }
  if (early) {
    set_stage("waiting to prepare");
    m_allowance = protocol::gate::await_setup();
  }
  protocol::gate::context_built();
}

PeerSession::~PeerSession() {
  for (PeerGpu& gpu : m_gpus) {
    if (m_api.cuCtxSetCurrent != nullptr) {
      m_api.cuCtxSetCurrent(gpu.context);
    }
    gpu.module.reset();
    for (const CUdeviceptr ptr : {gpu.source, gpu.destination, gpu.counters}) {
      if (ptr != 0 && m_api.cuMemFree != nullptr) {
        m_api.cuMemFree(ptr);
      }
    }
    if (m_api.cuDevicePrimaryCtxRelease != nullptr) {
      m_api.cuDevicePrimaryCtxRelease(gpu.device);
    }
  }
}

void PeerSession::make_current(const PeerGpu& gpu) const {
  GPUCHECK_CU(m_api, cuCtxSetCurrent, gpu.context);
}

void PeerSession::load_kernels() {
  if (m_kernels_tried) {
    return;
  }
  m_kernels_tried = true;
  set_stage("load kernels");
  int driver = 0;
  if (m_api.cuDriverGetVersion != nullptr) {
    m_api.cuDriverGetVersion(&driver);
  }
  for (PeerGpu& gpu : m_gpus) {
    make_current(gpu);
    ModuleTarget target{driver, 0, 0};
    m_api.cuDeviceGetAttribute(&target.cc_major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                               gpu.device);
    m_api.cuDeviceGetAttribute(&target.cc_minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                               gpu.device);
    m_api.cuDeviceGetAttribute(&gpu.sm_count, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, gpu.device);
    auto module = std::make_shared<KernelModule>(m_api, target);
    if (module->loaded() && m_api.cuMemAlloc(&gpu.counters, 16) == CUDA_SUCCESS) {
      gpu.module = std::move(module);
    }
  }
}

Mismatches count_on_gpu(PeerSession& session, const PeerGpu& gpu,
                        const std::function<void(CUdeviceptr, CUdeviceptr)>& launch_check) {
  const CudaApi& api = session.api();
  session.make_current(gpu);
  CUstream legacy = nullptr; // the check is queued behind these on the same stream
  GPUCHECK_CU(api, cuMemsetD32Async, gpu.counters, 0U, size_t{2}, legacy);
  GPUCHECK_CU(api, cuMemsetD32Async, gpu.counters + 8, 0xFFFFFFFFU, size_t{2}, legacy);
  launch_check(gpu.counters, gpu.counters + 8);
  std::array<unsigned long long, 2> counts{};
  GPUCHECK_CU(api, cuMemcpyDtoH, counts.data(), gpu.counters, sizeof counts);
  return {counts[0], counts[0] > 0 ? counts[1] : 0};
}

} // namespace gpucheck::gpu
