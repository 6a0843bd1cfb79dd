// One GpuInfo per physical GPU: NVML's view, joined with the driver API's (after
// CUDA_VISIBLE_DEVICES) by PCI bus id, then by UUID.
#include <cctype>
#include <cstdlib>

#include <fmt/format.h>

#include "gpucheck/model/text.hpp"
#include "probes/collect.hpp"

namespace gpucheck::probes {

namespace {

bool same_uuid(const std::string& a, const std::string& b) {
  return !a.empty() && lower(a) == lower(b);
}

/// The NVML GPU that is this CUDA device, or nullptr.
GpuInfo* find_match(std::vector<GpuInfo>& gpus, const CudaDevice& device) {
  const std::string bus_id = normalize_bus_id(device.pci_bus_id);
  if (!device.pci_bus_id.empty()) {
    for (GpuInfo& gpu : gpus) {
      if (!gpu.pci_bus_id.empty() && normalize_bus_id(gpu.pci_bus_id) == bus_id) {
        return &gpu;
      }
    }
  }
  for (GpuInfo& gpu : gpus) {
    if (same_uuid(gpu.uuid, device.uuid)) {
      return &gpu;
    }
  }
  return nullptr;
}

/// Fill what NVML did not give from the driver API; NVML's own values win.
void fill_from_cuda(GpuInfo& gpu, const CudaDevice& device) {
  gpu.cuda_ordinal = device.ordinal;
  if (gpu.name.empty()) {
    gpu.name = device.name;
  }
  if (gpu.uuid.empty()) {
    gpu.uuid = device.uuid;
  }
  if (gpu.pci_bus_id.empty()) {
    gpu.pci_bus_id = device.pci_bus_id;
  }
  if (!gpu.cc_major) {
    gpu.cc_major = device.cc_major;
    gpu.cc_minor = device.cc_minor;
  }
  if (!gpu.sm_count) {
    gpu.sm_count = device.sm_count;
  }
  if (!gpu.memory_total_bytes) {
    gpu.memory_total_bytes = device.total_memory_bytes;
  }
  gpu.kernel_exec_timeout = device.kernel_exec_timeout;
}

} // namespace

std::vector<GpuInfo> merge_gpus(std::vector<GpuInfo> nvml_gpus, const CudaDriverInfo& cuda) {
  std::vector<GpuInfo> merged = std::move(nvml_gpus);
  int next_index = 0;
  for (const GpuInfo& gpu : merged) {
    next_index = std::max(next_index, gpu.index + 1);
  }
  for (const CudaDevice& device : cuda.devices) {
    if (GpuInfo* gpu = find_match(merged, device)) {
      fill_from_cuda(*gpu, device);
      continue;
    }
    // NVML gave nothing (or not this device): the driver API's view is all there is.
    GpuInfo gpu;
    gpu.index = next_index++;
    fill_from_cuda(gpu, device);
    merged.push_back(std::move(gpu));
  }
  return merged;
}

std::string normalize_bus_id(std::string_view bus_id) {
  // domain:bus:device.function, every part hex; the domain may be absent or 4 or 8 digits.
  const std::string text = lower(bus_id);
  const auto last_colon = text.rfind(':');
  const auto dot = text.rfind('.');
  if (last_colon == std::string::npos || dot == std::string::npos || dot < last_colon) {
    return text;
  }
  const auto first_colon = text.find(':');
  const std::string domain =
      first_colon == last_colon ? std::string("0") : text.substr(0, first_colon);
  const std::string bus = first_colon == last_colon
                              ? text.substr(0, last_colon)
                              : text.substr(first_colon + 1, last_colon - first_colon - 1);
  const std::string device = text.substr(last_colon + 1, dot - last_colon - 1);
  const std::string function = text.substr(dot + 1);
  auto hex = [](const std::string& part, unsigned long& value) {
    char* end = nullptr;
    value = std::strtoul(part.c_str(), &end, 16);
    return !part.empty() && end != nullptr && *end == '\0';
  };
  unsigned long d = 0;
  unsigned long b = 0;
  unsigned long dev = 0;
  unsigned long f = 0;
  if (!hex(domain, d) || !hex(bus, b) || !hex(device, dev) || !hex(function, f)) {
    return text;
  }
  return fmt::format("{:04x}:{:02x}:{:02x}.{:x}", d, b, dev, f);
}

} // namespace gpucheck::probes
