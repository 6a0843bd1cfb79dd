#pragma once
// Builds SystemSnapshots for the compatibility tests from a few plain facts.

#include <string>
#include <utility>
#include <vector>

#include "gpucheck/model/snapshot.hpp"

namespace gpucheck::compat::testing {

struct TestGpu {
  std::string name;
  int cc_major = 0; ///< 0: not reported
  int cc_minor = 0;
};

struct TestMachine {
  std::string driver;   ///< kernel module version, "" = unknown
  int driver_cuda = 0;  ///< cuDriverGetVersion, 0 = not reported
  std::string cudart;   ///< loaded CUDA runtime version, "" = none
  std::string cudnn;    ///< loaded cuDNN version, "" = none
  int cudnn_cudart = 0; ///< cudnnGetCudartVersion, 0 = not reported
  std::vector<TestGpu> gpus;
  std::string nvcc;         ///< nvcc version, "" = none
  std::string libcuda_path; ///< where libcuda was loaded from
};

inline SystemSnapshot make_snapshot(const TestMachine& m) {
  SystemSnapshot s;
  if (!m.driver.empty()) {
    s.kernel_module.proc_version_present = true;
    s.kernel_module.version = m.driver;
    s.nvml.driver_version = m.driver;
  }
  if (m.driver_cuda != 0) {
    s.cuda.driver_version = m.driver_cuda;
  }
  s.cuda.library.name = "libcuda.so.1";
  s.cuda.library.loaded = true;
  s.cuda.library.path =
      m.libcuda_path.empty() ? "/usr/lib/x86_64-linux-gnu/libcuda.so.1" : m.libcuda_path;
  s.cuda.library.real_path = s.cuda.library.path;
  int index = 0;
  for (const TestGpu& g : m.gpus) {
    GpuInfo gpu;
    gpu.index = index++;
    gpu.name = g.name;
    if (g.cc_major != 0) {
      gpu.cc_major = g.cc_major;
      gpu.cc_minor = g.cc_minor;
    }
    s.gpus.push_back(gpu);
  }
  if (!m.cudart.empty()) {
    LibraryFamily cudart;
    cudart.family = "cudart";
    cudart.load.name = "libcudart.so";
    cudart.load.loaded = true;
    cudart.load.version = m.cudart;
    cudart.load.real_path = "/opt/lib/libcudart.so." + m.cudart;
    s.libraries.push_back(cudart);
  }
  if (!m.cudnn.empty()) {
    LibraryFamily cudnn;
    cudnn.family = "cudnn";
    cudnn.load.name = "libcudnn.so.9";
    cudnn.load.loaded = true;
    cudnn.load.version = m.cudnn;
    cudnn.load.real_path = "/opt/lib/libcudnn.so." + m.cudnn;
    CudnnDetails details;
    if (m.cudnn_cudart != 0) {
      details.cudart_version = m.cudnn_cudart;
    }
    cudnn.cudnn = details;
    s.libraries.push_back(cudnn);
  }
  if (!m.nvcc.empty()) {
    s.toolkit.nvcc_path = "/usr/local/cuda/bin/nvcc";
    s.toolkit.nvcc_version = m.nvcc;
  }
  return s;
}

} // namespace gpucheck::compat::testing
