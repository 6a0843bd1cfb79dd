// gpu-devices: the CUDA devices a driver-API child sees, for a run whose snapshot carries no
// driver-API facts (protocol::DeviceListing).
#include <nlohmann/json.hpp>

#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "gpu/cuda_call.hpp"
#include "gpu/gpu_children.hpp"
#include "protocol/payloads.hpp"

namespace gpucheck::gpu {

nlohmann::json child_gpu_devices(const std::vector<std::string>& /*args*/) {
  protocol::DeviceListing listing;
  std::optional<LoadedDriver> driver;
  try {
    driver = load_driver();
  } catch (const std::exception& e) {
    listing.error = e.what();
    return protocol::to_json(listing);
  }
  const CudaApi& api = driver->api;
  const CUresult init = api.cuInit(0);
  listing.init = static_cast<int>(init);
  listing.init_name = cuda_error_name(static_cast<int>(init));
  int count = 0;
  if (init != CUDA_SUCCESS || api.cuDeviceGetCount(&count) != CUDA_SUCCESS) {
    return protocol::to_json(listing);
  }
  for (int ordinal = 0; ordinal < count; ++ordinal) {
    CUdevice device = 0;
    char name[256] = {};
    if (api.cuDeviceGet(&device, ordinal) != CUDA_SUCCESS ||
        api.cuDeviceGetName(name, static_cast<int>(sizeof name), device) != CUDA_SUCCESS) {
      continue;
    }
    listing.devices.push_back({ordinal, name});
  }
  return protocol::to_json(listing);
}

} // namespace gpucheck::gpu
