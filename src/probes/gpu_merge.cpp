// STUB: to be replaced by the real probe.
#include "probes/collect.hpp"

namespace gpucheck::probes {
std::vector<GpuInfo> merge_gpus(std::vector<GpuInfo> nvml_gpus, const CudaDriverInfo&) {
  return nvml_gpus;
}
std::string normalize_bus_id(std::string_view bus_id) {
  return std::string(bus_id);
}
} // namespace gpucheck::probes
