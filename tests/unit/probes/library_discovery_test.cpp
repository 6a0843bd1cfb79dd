#include <gtest/gtest.h>

#include "probes/collect.hpp"
#include "support/fixture_tree.hpp"

namespace gpucheck {
/// Readable failures: one line per copy.
void PrintTo(const LibraryCopy& c, std::ostream* os) {
  *os << "{" << c.path << " -> " << c.real_path << ", " << c.origin << ", v'" << c.version
      << "', selected=" << c.selected << ", shadowed=" << c.shadowed << "}";
}
} // namespace gpucheck

namespace gpucheck::probes {
namespace {

using gpucheck::testing::FixtureTree;
using Vars = std::map<std::string, std::string>;

const LibraryFamily& family(const std::vector<LibraryFamily>& families, std::string_view name) {
  for (const LibraryFamily& f : families) {
    if (f.family == name) {
      return f;
    }
  }
  throw std::logic_error("family missing");
}

LibraryCopy copy(std::string path, std::string real, std::string origin, std::string version,
                 bool selected, bool shadowed) {
  LibraryCopy c;
  c.path = std::move(path);
  c.real_path = std::move(real);
  c.origin = std::move(origin);
  c.version = std::move(version);
  c.selected = selected;
  c.shadowed = shadowed;
  return c;
}

constexpr const char* k_site = "/opt/venv/lib/python3.11/site-packages";

/// A machine with a driver, a CUDA 12.4 toolkit plus forward-compat libcuda, a system cuDNN,
/// and a virtualenv with cuDNN and cudart wheels.
void build_machine(FixtureTree& tree) {
  const std::string site = k_site;
  tree.file("/usr/lib/x86_64-linux-gnu/libcuda.so.580.159.04", "driver")
      .symlink("/usr/lib/x86_64-linux-gnu/libcuda.so.1", "libcuda.so.580.159.04")
      .file("/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.580.159.04", "nvml")
      .symlink("/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1", "libnvidia-ml.so.580.159.04")
      .file("/usr/lib/x86_64-linux-gnu/libcudnn.so.9.19.0", "cudnn")
      .symlink("/usr/lib/x86_64-linux-gnu/libcudnn.so.9", "libcudnn.so.9.19.0")
      .file("/usr/lib/x86_64-linux-gnu/libcudnn_ops.so.9", "not the shim")
      .file("/usr/local/cuda-12.4/lib64/libcudart.so.12.4.127", "cudart")
      .symlink("/usr/local/cuda-12.4/lib64/libcudart.so.12", "libcudart.so.12.4.127")
      .symlink("/usr/local/cuda-12.4/lib64/libcudart.so", "libcudart.so.12")
      .file("/usr/local/cuda-12.4/lib64/libcublasLt.so.12.4.5.8", "not cublas")
      .file("/usr/local/cuda-12.4/lib64/stubs/libcuda.so", "stub")
      .file("/usr/local/cuda-12.4/compat/libcuda.so.570.86.10", "compat")
      .symlink("/usr/local/cuda-12.4/compat/libcuda.so.1", "libcuda.so.570.86.10")
      .symlink("/usr/local/cuda", "/usr/local/cuda-12.4")
      .file(site + "/nvidia/cudnn/lib/libcudnn.so.9", "wheel cudnn")
      .file(site + "/nvidia_cudnn_cu12-9.1.0.70.dist-info/RECORD",
            "nvidia/cudnn/lib/libcudnn.so.9,sha256=x,1\n")
      .file(site + "/nvidia/cuda_runtime/lib/libcudart.so.12", "wheel cudart")
      .file(site + "/nvidia_cuda_runtime_cu12-12.1.105.dist-info/RECORD")
      .file("/etc/ld.so.cache.txt",
            "5 libs found in cache `/etc/ld.so.cache'\n"
            "\tlibcudnn.so.9 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libcudnn.so.9\n"
            "\tlibcudart.so.12 (libc6,x86-64) => /usr/local/cuda/lib64/libcudart.so.12\n"
            "\tlibcudart.so.12 (libc6) => /usr/lib32/libcudart.so.12\n"
            "\tlibcuda.so.1 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libcuda.so.1\n"
            "\tlibnvidia-ml.so.1 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1\n");
}

TEST(LibraryDiscovery, EveryFamilyPresentEvenWhenEmpty) {
  FixtureTree tree;
  const auto families = discover_libraries(Sysroot(tree.root()), Environment());
  std::vector<std::string> names;
  for (const LibraryFamily& f : families) {
    names.push_back(f.family);
    EXPECT_TRUE(f.copies.empty()) << f.family;
  }
  EXPECT_EQ(names, (std::vector<std::string>{"cuda", "nvml", "cudart", "cudnn", "cublas", "nccl"}));
}

TEST(LibraryDiscovery, CopiesOriginsVersionsAndTheLoadersChoice) {
  FixtureTree tree;
  build_machine(tree);
  const std::string site = k_site;
  const Environment env(Vars{{"LD_LIBRARY_PATH", site + "/nvidia/cudnn/lib::relative/lib:/missing"},
                             {"VIRTUAL_ENV", "/opt/venv"}});
  const auto families = discover_libraries(Sysroot(tree.root()), env);

  EXPECT_EQ(family(families, "cudnn").copies,
            (std::vector<LibraryCopy>{copy(site + "/nvidia/cudnn/lib/libcudnn.so.9",
                                           site + "/nvidia/cudnn/lib/libcudnn.so.9",
                                           "LD_LIBRARY_PATH", "9.1.0", true, false),
                                      copy("/usr/lib/x86_64-linux-gnu/libcudnn.so.9",
                                           "/usr/lib/x86_64-linux-gnu/libcudnn.so.9.19.0",
                                           "ldconfig", "9.19.0", false, true)}));
  EXPECT_EQ(family(families, "cudart").copies,
            (std::vector<LibraryCopy>{copy("/usr/local/cuda/lib64/libcudart.so.12",
                                           "/usr/local/cuda-12.4/lib64/libcudart.so.12.4.127",
                                           "ldconfig", "12.4.127", true, false),
                                      copy(site + "/nvidia/cuda_runtime/lib/libcudart.so.12",
                                           site + "/nvidia/cuda_runtime/lib/libcudart.so.12", "pip",
                                           "12.1.105", false, true)}));
  // The stub under lib64/stubs is not a search directory; compat is.
  EXPECT_EQ(family(families, "cuda").copies,
            (std::vector<LibraryCopy>{copy("/usr/lib/x86_64-linux-gnu/libcuda.so.1",
                                           "/usr/lib/x86_64-linux-gnu/libcuda.so.580.159.04",
                                           "ldconfig", "580.159.04", true, false),
                                      copy("/usr/local/cuda/compat/libcuda.so.1",
                                           "/usr/local/cuda-12.4/compat/libcuda.so.570.86.10",
                                           "cuda_toolkit", "570.86.10", false, true)}));
  EXPECT_EQ(family(families, "nvml").copies,
            (std::vector<LibraryCopy>{copy("/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1",
                                           "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.580.159.04",
                                           "ldconfig", "580.159.04", true, false)}));
  EXPECT_TRUE(family(families, "cublas").copies.empty());
  EXPECT_TRUE(family(families, "nccl").copies.empty());
}

TEST(LibraryDiscovery, StubOnLdLibraryPathWinsOverTheDriver) {
  FixtureTree tree;
  build_machine(tree);
  // The Dockerfile trap (F12/F34): libcuda.so.1 -> stubs/libcuda.so on LD_LIBRARY_PATH.
  tree.symlink("/usr/local/cuda-12.4/lib64/stubs/libcuda.so.1", "libcuda.so");
  const Environment env(Vars{{"LD_LIBRARY_PATH", "/usr/local/cuda/lib64/stubs"}});
  const auto families = discover_libraries(Sysroot(tree.root()), env);
  const auto& copies = family(families, "cuda").copies;
  ASSERT_EQ(copies.size(), 3U);
  EXPECT_EQ(copies[0], copy("/usr/local/cuda/lib64/stubs/libcuda.so.1",
                            "/usr/local/cuda-12.4/lib64/stubs/libcuda.so", "LD_LIBRARY_PATH", "",
                            true, false));
  EXPECT_TRUE(copies[1].shadowed);
  EXPECT_EQ(copies[1].origin, "ldconfig");
  EXPECT_TRUE(copies[2].shadowed);
}

TEST(LibraryDiscovery, SameFileReachedTwiceKeepsTheFirstOrigin) {
  FixtureTree tree;
  build_machine(tree);
  const Environment env(Vars{{"LD_LIBRARY_PATH", "/usr/local/cuda-12.4/lib64"}});
  const auto families = discover_libraries(Sysroot(tree.root()), env);
  const auto& copies = family(families, "cudart").copies;
  ASSERT_EQ(copies.size(), 1U); // no VIRTUAL_ENV: the wheel is not looked for
  EXPECT_EQ(copies[0], copy("/usr/local/cuda-12.4/lib64/libcudart.so.12",
                            "/usr/local/cuda-12.4/lib64/libcudart.so.12.4.127", "LD_LIBRARY_PATH",
                            "12.4.127", true, false));
}

TEST(LibraryDiscovery, CondaAndUnreachableWheelAreNeitherSelectedNorShadowed) {
  FixtureTree tree;
  tree.file("/opt/conda/lib/libnccl.so.2.21.5", "nccl")
      .symlink("/opt/conda/lib/libnccl.so.2", "libnccl.so.2.21.5")
      .file("/opt/conda/lib/python3.12/site-packages/nvidia/nccl/lib/libnccl.so.2", "wheel")
      .file("/opt/conda/lib/python3.12/site-packages/nvidia_nccl_cu12-2.27.3.dist-info/RECORD")
      .file("/root/.pyenv/versions/3.10.14/lib/python3.10/site-packages/nvidia/cu13/lib/"
            "libcublas.so.13",
            "wheel cublas")
      .file("/root/.pyenv/versions/3.10.14/lib/python3.10/site-packages/"
            "nvidia_cublas-13.1.0.3.dist-info/RECORD");
  const auto families =
      discover_libraries(Sysroot(tree.root()), Environment(Vars{{"CONDA_PREFIX", "/opt/conda"}}));
  const std::string site = "/opt/conda/lib/python3.12/site-packages";
  EXPECT_EQ(family(families, "nccl").copies,
            (std::vector<LibraryCopy>{
                copy("/opt/conda/lib/libnccl.so.2", "/opt/conda/lib/libnccl.so.2.21.5", "conda",
                     "2.21.5", false, false),
                copy(site + "/nvidia/nccl/lib/libnccl.so.2", site + "/nvidia/nccl/lib/libnccl.so.2",
                     "pip", "2.27.3", false, false)}));
  const auto& cublas = family(families, "cublas").copies;
  ASSERT_EQ(cublas.size(), 1U);
  EXPECT_EQ(cublas[0].origin, "pip");
  EXPECT_EQ(cublas[0].version, "13.1.0.3");
}

TEST(LibraryDiscovery, BrokenLinksAndGarbageAreSkipped) {
  FixtureTree tree;
  tree.symlink("/usr/lib64/libcudnn.so.9", "libcudnn.so.9.1.0") // dangling
      .symlink("/usr/lib64/libnccl.so.2", "libnccl.so.2")       // loop
      .dir("/usr/lib64/libcublas.so.12")                        // a directory
      .file("/etc/ld.so.cache.txt", "\tlibcuda.so.1 (libc6,x86-64) => /usr/lib64/libcuda.so.1\n");
  const auto families = discover_libraries(
      Sysroot(tree.root()), Environment(Vars{{"LD_LIBRARY_PATH", ":::;"}, {"HOME", "relative"}}));
  for (const LibraryFamily& f : families) {
    EXPECT_TRUE(f.copies.empty()) << f.family;
  }
}

TEST(LibraryDiscovery, RealMachineFindsTheToolkitsCudnnAndCudart) {
  // The build host: CUDA 13 and cuDNN 9.19 (installed from wheels) under /usr/local/cuda.
  const Sysroot root("/");
  if (!root.exists("/usr/local/cuda/lib64/libcudnn.so.9")) {
    GTEST_SKIP() << "no cuDNN under /usr/local/cuda";
  }
  const auto families = discover_libraries(root, Environment());
  auto find = [&](std::string_view name, std::string_view file) -> const LibraryCopy* {
    for (const LibraryCopy& c : family(families, name).copies) {
      if (c.real_path.ends_with(file)) {
        return &c;
      }
    }
    return nullptr;
  };
  const LibraryCopy* cudnn = find("cudnn", "/libcudnn.so.9");
  ASSERT_NE(cudnn, nullptr);
  EXPECT_EQ(cudnn->version, "9.19.0");
  EXPECT_TRUE(cudnn->selected);
  const LibraryCopy* cudart = find("cudart", "/libcudart.so.13");
  ASSERT_NE(cudart, nullptr);
  EXPECT_TRUE(cudart->version.starts_with("13.0.")) << cudart->version;
  EXPECT_TRUE(cudart->selected);
}

} // namespace
} // namespace gpucheck::probes

namespace gpucheck::probes {
namespace {

TEST(LibraryDiscovery, VirtualEnvironmentOnPathIsSearchedWithoutActivation) {
  // A container whose PATH starts with /opt/torch/.venv/bin and no VIRTUAL_ENV (the GPU machine).
  gpucheck::testing::FixtureTree tree;
  const std::string site = "/opt/torch/.venv/lib/python3.12/site-packages";
  tree.file("/opt/torch/.venv/pyvenv.cfg", "home = /usr/bin\n")
      .file(site + "/nvidia/cudnn/lib/libcudnn.so.9", "wheel cudnn")
      .file(site + "/nvidia_cudnn_cu13-9.19.0.56.dist-info/RECORD",
            "nvidia/cudnn/lib/libcudnn.so.9,sha256=x,1\n");
  tree.file("/opt/other/lib/python3.12/site-packages/nvidia/cudnn/lib/libcudnn.so.9", "no venv");
  const Environment with_path(
      std::map<std::string, std::string>{{"PATH", "/opt/torch/.venv/bin:/opt/other/bin:/usr/bin"}});
  std::vector<std::string> paths;
  for (const LibraryFamily& f : discover_libraries(Sysroot(tree.root()), with_path)) {
    if (f.family == "cudnn") {
      for (const LibraryCopy& c : f.copies) {
        paths.push_back(c.path + " " + c.origin + " " + c.version);
      }
    }
  }
  // /opt/other/bin has no pyvenv.cfg or conda-meta: not an environment, not searched.
  EXPECT_EQ(paths, (std::vector<std::string>{site + "/nvidia/cudnn/lib/libcudnn.so.9 pip 9.19.0"}));
  const Environment without_path;
  for (const LibraryFamily& f : discover_libraries(Sysroot(tree.root()), without_path)) {
    if (f.family == "cudnn") {
      EXPECT_TRUE(f.copies.empty());
    }
  }
}

} // namespace
} // namespace gpucheck::probes
