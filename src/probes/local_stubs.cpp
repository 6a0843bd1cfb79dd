// TEMPORARY: replaced file by file by the real probes.
#include "probes/collect.hpp"

namespace gpucheck::probes {
KernelModuleInfo probe_kernel_module(const Sysroot&) { return {}; }
EnvironmentInfo probe_environment(const Sysroot&, const Environment&) { return {}; }
HostInfo probe_host(const Sysroot&) { return {}; }
ToolkitInfo probe_toolkit(const Sysroot&, const Environment&) { return {}; }
std::vector<LibraryFamily> discover_libraries(const Sysroot&, const Environment&) { return {}; }
std::vector<GpuInfo> merge_gpus(std::vector<GpuInfo> nvml_gpus, const CudaDriverInfo&) { return nvml_gpus; }
std::string normalize_bus_id(std::string_view bus_id) { return std::string(bus_id); }
} // namespace gpucheck::probes
