// Child side of the driver API probe: load libcuda.so.1, ask its version, cuInit, list devices.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <array>

#include "gpucheck/model/json_io.hpp"
#include "platform/cuda_api.hpp"
#include "platform/probes_child.hpp"

namespace gpucheck::platform {

namespace {

constexpr int k_name_buffer = 256;
constexpr int k_bus_id_buffer = 32;

/// The name of a CUresult: the built-in table first (the stub libcuda cannot name codes), the
/// driver's own cuGetErrorName for codes newer than the table.
std::string result_name(const CudaApi& api, int code) {
  std::string name = cuda_error_name(code);
  if (name != "CUDA_ERROR_" + std::to_string(code) || api.cuGetErrorName == nullptr) {
    return name;
  }
  const char* driver_name = nullptr;
  if (api.cuGetErrorName(static_cast<CUresult>(code), &driver_name) == CUDA_SUCCESS &&
      driver_name != nullptr) {
    return driver_name;
  }
  return name;
}

std::string result_text(const CudaApi& api, int code) {
  std::string text = cuda_error_text(code);
  if (cuda_error_name(code) != "CUDA_ERROR_" + std::to_string(code) ||
      api.cuGetErrorString == nullptr) {
    return text;
  }
  const char* driver_text = nullptr;
  if (api.cuGetErrorString(static_cast<CUresult>(code), &driver_text) == CUDA_SUCCESS &&
      driver_text != nullptr) {
    return driver_text;
  }
  return text;
}

std::string format_uuid(const CUuuid& uuid) {
  std::string out = "GPU-";
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) {
      out += '-';
    }
    out += fmt::format("{:02x}", static_cast<unsigned char>(uuid.bytes[i]));
  }
  return out;
}

int attribute(const CudaApi& api, CUdevice device, CUdevice_attribute which) {
  int value = 0;
  if (api.cuDeviceGetAttribute(&value, which, device) != CUDA_SUCCESS) {
    return 0;
  }
  return value;
}

CudaDevice read_device(const CudaApi& api, int ordinal, CUdevice device) {
  CudaDevice out;
  out.ordinal = ordinal;
  std::array<char, k_name_buffer> name{};
  if (api.cuDeviceGetName(name.data(), static_cast<int>(name.size()), device) == CUDA_SUCCESS) {
    out.name = name.data();
  }
  if (api.cuDeviceGetUuid != nullptr) {
    CUuuid uuid{};
    if (api.cuDeviceGetUuid(&uuid, device) == CUDA_SUCCESS) {
      out.uuid = format_uuid(uuid);
    }
  }
  if (api.cuDeviceGetPCIBusId != nullptr) {
    std::array<char, k_bus_id_buffer> bus_id{};
    if (api.cuDeviceGetPCIBusId(bus_id.data(), static_cast<int>(bus_id.size()), device) ==
        CUDA_SUCCESS) {
      out.pci_bus_id = bus_id.data();
    }
  }
  out.cc_major = attribute(api, device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  out.cc_minor = attribute(api, device, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  out.sm_count = attribute(api, device, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  if (int timeout = 0; api.cuDeviceGetAttribute(&timeout, CU_DEVICE_ATTRIBUTE_KERNEL_EXEC_TIMEOUT,
                                                device) == CUDA_SUCCESS) {
    out.kernel_exec_timeout = timeout != 0;
  }
  size_t bytes = 0;
  if (api.cuDeviceTotalMem(&bytes, device) == CUDA_SUCCESS) {
    out.total_memory_bytes = bytes;
  }
  return out;
}

} // namespace

nlohmann::json child_probe_cuda(const std::vector<std::string>& /*args*/) {
  CudaDriverInfo info;
  DynamicLibrary lib = DynamicLibrary::open("libcuda.so.1");
  // Resolve only from a loaded library: otherwise every name would count as a missing symbol.
  const CudaApi api = lib.loaded() ? load_cuda_api(lib) : CudaApi{};
  // The version first: it works even where cuInit fails, and it names the driver that failed.
  if (api.cuDriverGetVersion != nullptr) {
    int version = 0;
    if (api.cuDriverGetVersion(&version) == CUDA_SUCCESS) {
      info.driver_version = version;
    }
  }
  if (api.cuInit != nullptr) {
    const int rc = api.cuInit(0);
    info.init_result = rc;
    info.init_result_name = result_name(api, rc);
    info.init_result_text = result_text(api, rc);
    if (rc == CUDA_SUCCESS && api.usable) {
      int count = 0;
      if (api.cuDeviceGetCount(&count) == CUDA_SUCCESS) {
        info.device_count = count;
        for (int ordinal = 0; ordinal < count; ++ordinal) {
          CUdevice device = 0;
          if (api.cuDeviceGet(&device, ordinal) == CUDA_SUCCESS) {
            info.devices.push_back(read_device(api, ordinal, device));
          }
        }
      }
    }
  }
  info.library = lib.load();
  return info;
}

} // namespace gpucheck::platform
