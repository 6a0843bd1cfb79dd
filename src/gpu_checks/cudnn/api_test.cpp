// The cuDNN API tables against the fake cuDNN 9 shim (tests/fakes/README.md), which exports
// neither the legacy convolution API nor the backend (graph) API: the graph path must then be
// "not available" without counting against the legacy API's missing symbols.
#include "gpu_checks/cudnn/api.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>

namespace gpucheck::gpu_checks::cudnn {
namespace {

std::string fake_library(const char* name) {
  return (std::filesystem::path(GPUCHECK_FAKE_LIB_DIR) / name).string();
}

bool contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

TEST(CudnnApi, BackendApiAbsentMeansGraphPathNotAvailable) {
  platform::DynamicLibrary lib = platform::DynamicLibrary::open(fake_library("libcudnn.so.9"));
  ASSERT_TRUE(lib.loaded()) << lib.load().error;
  const CudnnBackendApi graph = load_cudnn_backend_api(lib);
  EXPECT_FALSE(graph.available);
  EXPECT_EQ(graph.missing,
            (std::vector<std::string>{"cudnnBackendCreateDescriptor", "cudnnBackendSetAttribute",
                                      "cudnnBackendGetAttribute", "cudnnBackendFinalize",
                                      "cudnnBackendExecute", "cudnnBackendDestroyDescriptor"}));
  EXPECT_EQ(graph.cudnnBackendExecute, nullptr);
  // Optional symbols are not the library's missing symbols: those name the legacy API only.
  for (const std::string& name : lib.load().missing_symbols) {
    EXPECT_FALSE(name.starts_with("cudnnBackend")) << name;
  }
}

TEST(CudnnApi, LegacyTableIsJudgedOnItsOwnRequiredSymbols) {
  platform::DynamicLibrary lib = platform::DynamicLibrary::open(fake_library("libcudnn.so.9"));
  ASSERT_TRUE(lib.loaded()) << lib.load().error;
  const CudnnBackendApi graph = load_cudnn_backend_api(lib);
  const CudnnApi legacy = load_cudnn_api(lib);
  // The fake shim has the version entry points but no convolution API.
  EXPECT_NE(legacy.cudnnGetVersion, nullptr);
  EXPECT_FALSE(legacy.usable);
  EXPECT_TRUE(contains(lib.load().missing_symbols, "cudnnConvolutionForward"));
  EXPECT_FALSE(contains(lib.load().missing_symbols, "cudnnGetLastErrorString")); // optional
  EXPECT_FALSE(contains(lib.load().missing_symbols, "cudnnBackendExecute"));
  EXPECT_FALSE(graph.available);
}

TEST(CudnnApi, NothingResolvesFromALibraryThatDidNotLoad) {
  platform::DynamicLibrary lib = platform::DynamicLibrary::open(fake_library("libcudnn.so.0"));
  ASSERT_FALSE(lib.loaded());
  const CudnnBackendApi graph = load_cudnn_backend_api(lib);
  EXPECT_FALSE(graph.available);
  EXPECT_TRUE(graph.missing.empty());
  EXPECT_TRUE(lib.load().missing_symbols.empty());
}

} // namespace
} // namespace gpucheck::gpu_checks::cudnn
