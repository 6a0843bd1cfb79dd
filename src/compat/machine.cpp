#include "compat/machine.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "compat/lookup.hpp"
#include "gpucheck/model/stack_versions.hpp"

namespace gpucheck::compat {

namespace {

bool in_compat_dir(const std::string& path) {
  return path.find("/compat/") != std::string::npos;
}

std::optional<Version> cuda_of_text(const std::string& text) {
  std::optional<Version> v = Version::parse(text);
  if (!v || v->parts().size() < 2) {
    return std::nullopt;
  }
  return v->truncated(2);
}

void add_runtime(MachineFacts& facts, std::string what, const Version& cuda) {
  const bool seen = std::any_of(facts.runtimes.begin(), facts.runtimes.end(),
                                [&](const CudaBuild& b) { return b.cuda == cuda; });
  if (!seen) {
    facts.runtimes.push_back({std::move(what), cuda});
  }
}

void add_cudnn(MachineFacts& facts, InstalledCudnn cudnn) {
  const bool seen = std::any_of(facts.cudnn.begin(), facts.cudnn.end(), [&](const auto& c) {
    return c.version == cudnn.version && c.built_for == cudnn.built_for;
  });
  if (!seen && !cudnn.version.empty()) {
    facts.cudnn.push_back(std::move(cudnn));
  }
}

void read_libraries(const SystemSnapshot& snapshot, MachineFacts& facts) {
  if (const LibraryFamily* cudart = snapshot.library("cudart")) {
    if (cudart->load.loaded) {
      std::optional<Version> cuda = cuda_of_text(cudart->load.version);
      if (!cuda && cudart->load.version_raw) {
        cuda = cuda_from_int(*cudart->load.version_raw);
      }
      if (cuda) {
        add_runtime(facts,
                    fmt::format("the CUDA runtime {} ({})",
                                cudart->load.version.empty() ? cuda->str() : cudart->load.version,
                                cudart->load.real_path.empty() ? cudart->load.name
                                                               : cudart->load.real_path),
                    *cuda);
      }
    }
    for (const LibraryCopy& copy : cudart->copies) {
      if (std::optional<Version> cuda = cuda_of_text(copy.version)) {
        add_runtime(facts, fmt::format("the CUDA runtime {} ({})", copy.version, copy.path), *cuda);
      }
    }
  }
  if (const LibraryFamily* cudnn = snapshot.library("cudnn")) {
    if (cudnn->load.loaded) {
      InstalledCudnn c;
      c.version = cudnn->load.version;
      c.value = Version::parse(c.version);
      if (cudnn->cudnn && cudnn->cudnn->cudart_version) {
        c.built_for = cuda_from_int(*cudnn->cudnn->cudart_version);
      }
      c.path = cudnn->load.real_path.empty() ? cudnn->load.name : cudnn->load.real_path;
      add_cudnn(facts, std::move(c));
    }
    for (const LibraryCopy& copy : cudnn->copies) {
      InstalledCudnn c;
      c.version = copy.reported_version.value_or(copy.version);
      c.value = Version::parse(c.version);
      if (copy.cudart_version) {
        c.built_for = cuda_from_int(*copy.cudart_version);
      }
      c.path = copy.path;
      add_cudnn(facts, std::move(c));
    }
  }
}

void read_libcuda(const SystemSnapshot& snapshot, MachineFacts& facts) {
  for (const std::string* path : {&snapshot.cuda.library.real_path, &snapshot.cuda.library.path}) {
    if (snapshot.cuda.library.loaded && in_compat_dir(*path)) {
      facts.compat_libcuda = *path;
      return;
    }
  }
  if (const LibraryFamily* cuda = snapshot.library("cuda")) {
    if (cuda->load.loaded && in_compat_dir(cuda->load.real_path + cuda->load.path)) {
      facts.compat_libcuda = cuda->load.real_path.empty() ? cuda->load.path : cuda->load.real_path;
    }
  }
}

void read_gpus(const SystemSnapshot& snapshot, const Matrix& matrix, MachineFacts& facts) {
  for (const GpuInfo& info : snapshot.gpus) {
    MachineGpu gpu;
    gpu.index = info.index;
    gpu.name = info.name;
    gpu.pci_device_id = info.pci_device_id;
    if (info.cc_major && info.cc_minor) {
      gpu.cc = Version({*info.cc_major, *info.cc_minor});
    }
    gpu.product = gpu_by_name(matrix, info.name);
    if (gpu.product == nullptr && info.pci_device_id) {
      gpu.product = gpu_by_pci_id(matrix, *info.pci_device_id);
    }
    if (!gpu.cc && gpu.product != nullptr) {
      gpu.cc = gpu.product->cc;
    }
    facts.gpus.push_back(std::move(gpu));
  }
  if (!snapshot.gpus.empty()) {
    return;
  }
  // No NVML view: fall back to the devices the driver API listed.
  for (const CudaDevice& device : snapshot.cuda.devices) {
    MachineGpu gpu;
    gpu.index = device.ordinal;
    gpu.name = device.name;
    gpu.cc = Version({device.cc_major, device.cc_minor});
    gpu.product = gpu_by_name(matrix, device.name);
    facts.gpus.push_back(std::move(gpu));
  }
}

} // namespace

MachineFacts machine_facts(const SystemSnapshot& snapshot, const Matrix& matrix) {
  MachineFacts facts;
  facts.driver_text = driver_version(snapshot);
  if (facts.driver_text) {
    facts.driver = Version::parse(*facts.driver_text);
  }
  if (const std::optional<int> cuda = driver_cuda_version(snapshot)) {
    facts.driver_cuda = cuda_from_int(*cuda);
  }
  read_libcuda(snapshot, facts);
  read_gpus(snapshot, matrix, facts);
  read_libraries(snapshot, facts);
  facts.nvcc_text = snapshot.toolkit.nvcc_version;
  if (facts.nvcc_text) {
    facts.nvcc = cuda_of_text(*facts.nvcc_text);
  }
  return facts;
}

} // namespace gpucheck::compat
