// Child side of the library probe: dlopen one family's library by its bare names and ask it
// which version it is.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "gpucheck/model/json_io.hpp"
#include "gpucheck/model/stack_versions.hpp"
#include "platform/dynlib.hpp"
#include "platform/library_versions.hpp"
#include "platform/probes_child.hpp"

namespace gpucheck::platform {

namespace {

constexpr int k_library_property_major = 0; ///< libraryPropertyType MAJOR_VERSION
constexpr int k_library_property_minor = 1;
constexpr int k_library_property_patch = 2;

void read_cudart_version(DynamicLibrary& lib) {
  auto get = lib.function<int (*)(int*)>("cudaRuntimeGetVersion");
  int version = 0;
  if (get != nullptr && get(&version) == 0) {
    lib.load().version_raw = version;
    lib.load().version = cuda_version_text(version);
  }
}

void read_cublas_version(DynamicLibrary& lib) {
  auto get = lib.function<int (*)(int, int*)>("cublasGetProperty");
  int major = 0;
  int minor = 0;
  int patch = 0;
  if (get != nullptr && get(k_library_property_major, &major) == 0 &&
      get(k_library_property_minor, &minor) == 0 && get(k_library_property_patch, &patch) == 0) {
    // cuBLAS's own CUBLAS_VER_* encoding: major*10000 + minor*100 + patch.
    lib.load().version_raw = int64_t{major} * 10000 + minor * 100 + patch;
    lib.load().version = fmt::format("{}.{}.{}", major, minor, patch);
  }
}

void read_nccl_version(DynamicLibrary& lib) {
  auto get = lib.function<int (*)(int*)>("ncclGetVersion");
  int version = 0;
  if (get != nullptr && get(&version) == 0) {
    lib.load().version_raw = version;
    lib.load().version = nccl_version_string(version);
  }
}

} // namespace

nlohmann::json child_probe_library(const std::vector<std::string>& args) {
  if (args.empty()) {
    return LibraryLoad{.error = "library probe: no family given"};
  }
  const std::string& family = args.front();
  const std::vector<std::string> names(args.begin() + 1, args.end());
  DynamicLibrary lib = DynamicLibrary::open_first(names);
  if (lib.loaded()) {
    if (family == "cudart") {
      read_cudart_version(lib);
    } else if (family == "cublas") {
      read_cublas_version(lib);
    } else if (family == "nccl") {
      read_nccl_version(lib);
    }
  }
  return lib.load();
}

} // namespace gpucheck::platform
