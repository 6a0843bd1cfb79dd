#include "render/inventory.hpp"

#include <fmt/format.h>

namespace gpucheck::render {

namespace {
constexpr uint64_t k_mib = 1024 * 1024;

std::string family_label(const std::string& family) {
  if (family == "cudart") {
    return "CUDA rt";
  }
  if (family == "cudnn") {
    return "cuDNN";
  }
  if (family == "cublas") {
    return "cuBLAS";
  }
  if (family == "nccl") {
    return "NCCL";
  }
  return family;
}

LibraryState state_of(const LibraryFamily& lib) {
  if (lib.failure) {
    return LibraryState::probe_failed;
  }
  if (lib.load.loaded) {
    return LibraryState::loaded;
  }
  if (lib.copies.empty()) {
    return LibraryState::not_found;
  }
  return lib.load.name.empty() ? LibraryState::not_loaded_in_this_mode
                               : LibraryState::does_not_load;
}

LibraryView library_view(const LibraryFamily& lib) {
  LibraryView view;
  view.family = &lib;
  view.label = family_label(lib.family);
  view.state = state_of(lib);
  view.path = loaded_path(lib.load);
  if (lib.cudnn && lib.cudnn->cudart_version) {
    view.built_for_cuda = *lib.cudnn->cudart_version;
  }
  for (const LibraryCopy& copy : lib.copies) {
    LibraryCopyView c;
    c.copy = &copy;
    c.version = copy.reported_version.value_or(copy.version);
    c.named_by_family =
        (lib.load.loaded && (copy.path == lib.load.path || copy.real_path == lib.load.real_path)) ||
        (view.state == LibraryState::not_loaded_in_this_mode && &copy == &lib.copies.front());
    view.copies.push_back(std::move(c));
  }
  return view;
}

GpuView gpu_view(const GpuInfo& gpu) {
  GpuView view;
  view.gpu = &gpu;
  if (gpu.memory_total_bytes) {
    view.memory_mib = *gpu.memory_total_bytes / k_mib;
  }
  if (gpu.pcie_gen_current && gpu.pcie_width_current) {
    view.pcie_current = std::pair{*gpu.pcie_gen_current, *gpu.pcie_width_current};
  }
  if (gpu.pcie_gen_max && gpu.pcie_width_max) {
    view.pcie_max = std::pair{*gpu.pcie_gen_max, *gpu.pcie_width_max};
  }
  if (gpu.cc_major) {
    view.compute_capability = fmt::format("{}.{}", *gpu.cc_major, gpu.cc_minor.value_or(0));
  }
  return view;
}
} // namespace

std::string loaded_path(const LibraryLoad& load) {
  return load.path.empty() ? load.real_path : load.path;
}

Inventory make_inventory(const SystemSnapshot& snapshot) {
  Inventory inventory;
  const KernelModuleInfo& km = snapshot.kernel_module;
  inventory.modules =
      fmt::format("nvidia {}, nvidia_uvm {}, nouveau {}", km.nvidia_loaded ? "loaded" : "absent",
                  km.uvm_loaded ? "loaded" : "absent", km.nouveau_loaded ? "loaded" : "absent");
  inventory.container = snapshot.environment.container.kind;
  if (snapshot.host.memory_total_bytes) {
    inventory.host_memory_gib = *snapshot.host.memory_total_bytes / (k_mib * 1024);
  }
  for (const GpuInfo& gpu : snapshot.gpus) {
    inventory.gpus.push_back(gpu_view(gpu));
  }
  for (const LibraryFamily& lib : snapshot.libraries) {
    inventory.libraries.push_back(library_view(lib));
  }
  return inventory;
}

} // namespace gpucheck::render
