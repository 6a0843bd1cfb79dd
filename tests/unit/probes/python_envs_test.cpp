// The Python environment probe: interpreters, metadata, build files and library resolution, on
// fixture trees, and when the probe runs an interpreter (python_files_test.cpp reads layouts).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <tuple>

#include "probes/collect.hpp"
#include "probes/elf_soname.hpp"
#include "probes/python_envs.hpp"
#include "support/elf_writer.hpp"
#include "support/fixture_tree.hpp"
#include "unit/python_fixture.hpp"

namespace gpucheck::probes {
namespace {

using gpucheck::testing::FixtureTree;
using namespace gpucheck::testing;
using Vars = std::map<std::string, std::string>;

std::vector<PythonEnvironment> environments(const FixtureTree& tree, const Vars& vars,
                                            const std::vector<std::string>& extra = {}) {
  const Sysroot root(tree.root());
  const Environment env(vars);
  return build_python_environments(root, env, find_python_candidates(root, env, extra), {}, {});
}

const ResolvedLibrary& library(const FrameworkInstall& fw, std::string_view family) {
  for (const ResolvedLibrary& lib : fw.libraries) {
    if (lib.family == family) {
      return lib;
    }
  }
  throw std::logic_error("family not resolved");
}

TEST(ElfDynamic, ReadsSonameNeededAndRunpath) {
  FixtureTree tree;
  tree.file("/lib.so", make_elf_object({.soname = "libtorch_cuda.so",
                                        .needed = {"libcudart.so.13", "libcudnn.so.9", "libc.so.6"},
                                        .runpath = "$ORIGIN/../../nvidia/cudnn/lib:$ORIGIN"}));
  const std::optional<ElfDynamic> dynamic = read_elf_dynamic(tree.host("/lib.so"));
  ASSERT_TRUE(dynamic);
  EXPECT_EQ(dynamic->soname, "libtorch_cuda.so");
  EXPECT_EQ(dynamic->needed,
            (std::vector<std::string>{"libcudart.so.13", "libcudnn.so.9", "libc.so.6"}));
  EXPECT_EQ(dynamic->runpath, "$ORIGIN/../../nvidia/cudnn/lib:$ORIGIN");
  EXPECT_EQ(dynamic->rpath, std::nullopt);
  EXPECT_EQ(read_elf_soname(tree.host("/lib.so")), "libtorch_cuda.so");
  tree.file("/empty.so", "");
  EXPECT_EQ(read_elf_dynamic(tree.host("/empty.so")), std::nullopt);
}

TEST(PythonCandidates, PathVirtualEnvCondaAndExplicitOnesEachOnce) {
  FixtureTree tree;
  make_venv(tree);
  tree.file("/usr/bin/python3", "", 0755).file("/opt/conda/bin/python", "", 0755);
  const Vars vars{{"PATH", "/opt/torch/.venv/bin:/usr/bin"},
                  {"VIRTUAL_ENV", "/opt/torch/.venv"},
                  {"CONDA_PREFIX", "/opt/conda"}};
  const auto found = find_python_candidates(Sysroot(tree.root()), Environment(vars),
                                            {"/usr/bin/python3", "/nowhere/python"});
  // PATH has no `python`; $VIRTUAL_ENV/bin/python is absent, so its bin/python3 is taken: the
  // same interpreter as PATH's.
  ASSERT_EQ(found.size(), 4U);
  EXPECT_EQ(found[0].interpreter, "/opt/torch/.venv/bin/python3");
  EXPECT_EQ(found[0].found_by, (std::vector<std::string>{"PATH", "VIRTUAL_ENV"}));
  EXPECT_EQ(found[1].interpreter, "/opt/conda/bin/python");
  EXPECT_EQ(found[1].found_by, (std::vector<std::string>{"CONDA_PREFIX"}));
  EXPECT_EQ(found[2].interpreter, "/usr/bin/python3");
  EXPECT_EQ(found[2].found_by, (std::vector<std::string>{"--python"}));
  EXPECT_EQ(found[3].interpreter, "/nowhere/python");
}

TEST(PythonDistributions, MetadataNamesVersionsAndWheelLibraries) {
  FixtureTree tree;
  const std::string site = make_venv(tree);
  make_torch(tree, site, "2.11.0+cu130", "13.0");
  make_cu13_wheels(tree, site);
  make_dist(tree, site, "requests", "2.32.0");
  tree.file(site + "/jaxlib-0.8.0.egg-info",
            "Metadata-Version: 1.0\nName: jaxlib\nVersion: 0.8.0\n");
  const auto dists = read_distributions(Sysroot(tree.root()), {site});
  std::vector<std::string> names;
  for (const PythonDistribution& d : dists) {
    names.push_back(d.name + " " + d.version);
  }
  EXPECT_EQ(names,
            (std::vector<std::string>{"jaxlib 0.8.0", "nvidia-cublas 13.1.0.3",
                                      "nvidia-cuda-runtime 13.0.96", "nvidia-cudnn-cu13 9.19.0.56",
                                      "nvidia-nccl-cu13 2.28.9", "torch 2.11.0+cu130"}));
  EXPECT_EQ(dists[1].libraries, (std::vector<std::string>{"nvidia/cu13/lib/libcublas.so.13",
                                                          "nvidia/cu13/lib/libcublasLt.so.13"}));
  EXPECT_EQ(normalize_dist_name("Jax_CUDA12.Plugin"), "jax-cuda12-plugin");
}

/// The GPU machine's layout: torch 2.11+cu130 with its wheels, a system cuDNN 9.14 in the loader
/// cache, LD_LIBRARY_PATH naming only the driver directory.
TEST(PythonFrameworks, TorchCu130LoadsItsOwnWheelsThroughRunpath) {
  FixtureTree tree;
  const std::string site = make_venv(tree);
  make_torch(
      tree, site, "2.11.0+cu130", "13.0",
      ElfSpec{.soname = "libtorch_cuda.so",
              .needed = {"libcudart.so.13", "libcublas.so.13", "libcudnn.so.9", "libnccl.so.2"},
              .runpath =
                  "$ORIGIN/../../nvidia/cu13/lib:$ORIGIN/../../nvidia/cudnn/lib:$ORIGIN/../../"
                  "nvidia/nccl/lib:$ORIGIN"});
  make_cu13_wheels(tree, site);
  std::string cache;
  make_system_library(tree, cache, "/lib/x86_64-linux-gnu", "libcudnn.so.9", "9.14.0");
  tree.file("/usr/local/nvidia/lib64/libcuda.so.1", "driver");
  const auto envs = environments(tree, {{"PATH", "/opt/torch/.venv/bin:/usr/bin"},
                                        {"LD_LIBRARY_PATH", "/usr/local/nvidia/lib64"}});
  ASSERT_EQ(envs.size(), 1U);
  ASSERT_EQ(envs[0].frameworks.size(), 1U);
  const FrameworkInstall& torch = envs[0].frameworks[0];
  EXPECT_EQ(torch.name, "pytorch");
  EXPECT_EQ(torch.version, "2.11.0+cu130");
  EXPECT_EQ(torch.cuda, "13.0");
  EXPECT_EQ(torch.git_version, "0123456789abcdef0123456789abcdef01234567");
  EXPECT_EQ(torch.runpath_source, "elf");
  EXPECT_EQ(torch.runpath.front(), site + "/nvidia/cu13/lib");
  const ResolvedLibrary& cudnn = library(torch, "cudnn");
  EXPECT_EQ(cudnn.soname, "libcudnn.so.9");
  EXPECT_EQ(cudnn.path, site + "/nvidia/cudnn/lib/libcudnn.so.9");
  EXPECT_EQ(cudnn.via, "RUNPATH");
  EXPECT_EQ(cudnn.version, "9.19.0");
  EXPECT_EQ(cudnn.own_path, cudnn.path);
  EXPECT_EQ(library(torch, "cudart").path, site + "/nvidia/cu13/lib/libcudart.so.13");
  EXPECT_EQ(library(torch, "cudart").version, "13.0.96");
  EXPECT_EQ(library(torch, "cublas").version, "13.1.0.3");
  EXPECT_EQ(library(torch, "nccl").version, "2.28.9");
}

// A version.py with cuda='99999999999' overflowed an int while the major was read
// (undefined behaviour; it wrapped to 1215752191 and asked for libcudart.so.1215752191). A major
// too large for a version part is none: no library named after a wrapped number.
TEST(PythonFrameworks, AHugeCudaVersionInVersionPyIsNoMajor) {
  for (const std::string huge : {"99999999999", "99999999999.0", "4294967309"}) {
    FixtureTree tree;
    const std::string site = make_venv(tree);
    make_torch(tree, site, "2.11.0+cu130", huge);
    const auto envs = environments(tree, {{"PATH", "/opt/torch/.venv/bin:/usr/bin"}});
    ASSERT_EQ(envs.size(), 1U);
    ASSERT_EQ(envs[0].frameworks.size(), 1U);
    const FrameworkInstall& torch = envs[0].frameworks[0];
    EXPECT_EQ(torch.cuda, huge); // kept as the file says
    for (const ResolvedLibrary& lib : torch.libraries) {
      EXPECT_EQ(lib.soname.find("1215752191"), std::string::npos) << lib.soname;
      EXPECT_EQ(lib.soname.find("so.13"), std::string::npos) << lib.soname; // 4294967309 wrapped
      EXPECT_EQ(lib.soname.find('-'), std::string::npos) << lib.soname;
    }
  }
  // The healthy twin: an ordinary major names its libraries.
  FixtureTree tree;
  const std::string site = make_venv(tree);
  make_torch(tree, site, "2.11.0+cu130", "13.0");
  const auto envs = environments(tree, {{"PATH", "/opt/torch/.venv/bin:/usr/bin"}});
  ASSERT_EQ(envs.size(), 1U);
  bool cudart13 = false;
  for (const ResolvedLibrary& lib : envs[0].frameworks.at(0).libraries) {
    cudart13 = cudart13 || lib.soname == "libcudart.so.13";
  }
  EXPECT_TRUE(cudart13);
}

// Hostile site-packages end. Symlink loops (a directory linking to itself, a
// dist-info linking to itself, an interpreter linking to itself) and a 10 MB METADATA neither
// hang nor crash the reading; the real torch is still found, its version read from the first
// MiB of its METADATA.
TEST(PythonFrameworks, SymlinkLoopsAndHugeMetadataInSitePackagesEnd) {
  FixtureTree tree;
  const std::string site = make_venv(tree);
  make_torch(tree, site, "2.11.0+cu130", "13.0");
  make_cu13_wheels(tree, site);
  tree.symlink(site + "/loop", ".")
      .symlink(site + "/self.dist-info", "self.dist-info")
      .symlink(site + "/nvidia/loop", "../nvidia")
      .symlink("/opt/loop/bin/python3", "python3");
  tree.file(site + "/huge-1.0.dist-info/METADATA",
            "Metadata-Version: 2.1\nName: nvidia-huge-cu13\nVersion: 1.0\n\n" +
                std::string(10U << 20, 'x'));
  const auto start = std::chrono::steady_clock::now();
  const auto envs = environments(tree, {{"PATH", "/opt/torch/.venv/bin:/opt/loop/bin"}},
                                 {"/opt/loop/bin/python3"});
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  ASSERT_FALSE(envs.empty());
  ASSERT_FALSE(envs.at(0).frameworks.empty());
  EXPECT_EQ(envs.at(0).frameworks.at(0).version, "2.11.0+cu130");
}

// A FIFO named pyvenv.cfg or METADATA hung the parent (no deadline); a
// venv under a directory literally named "$ORIGIN" whose torch has RUNPATH $ORIGIN expanded
// without end; a 1 MB run of spaces in a METADATA header took 16 s to trim. All end at once, and
// the real torch is still read (the healthy twin in the same tree).
TEST(PythonFrameworks, FifosALiteralOriginAndLongBlankRunsEndQuickly) {
  FixtureTree tree;
  const std::string prefix = "/opt/$ORIGIN/.venv";
  const std::string site = make_venv(tree, prefix);
  make_torch(tree, site, "2.11.0+cu130", "13.0",
             ElfSpec{.soname = "libtorch_cuda.so",
                     .needed = {"libcudart.so.13"},
                     .runpath = "$ORIGIN/../../nvidia/cu13/lib:$ORIGIN/$ORIGIN:${ORIGIN}"});
  make_cu13_wheels(tree, site);
  tree.file(site + "/blank-1.0.dist-info/METADATA",
            "Metadata-Version: 2.1\nName: nvidia-blank-cu13" + std::string(1U << 20, ' ') +
                "\nVersion:" + std::string(1U << 20, ' ') + "1.0\n\n");
  tree.dir(site + "/fifo-1.0.dist-info");
  ASSERT_EQ(::mkfifo(tree.host(site + "/fifo-1.0.dist-info/METADATA").c_str(), 0600), 0);
  // A second venv whose pyvenv.cfg is a FIFO.
  tree.file("/opt/fifo/.venv/bin/python3", "#!/bin/sh\nexit 1\n", 0755);
  ASSERT_EQ(::mkfifo(tree.host("/opt/fifo/.venv/pyvenv.cfg").c_str(), 0600), 0);
  const auto start = std::chrono::steady_clock::now();
  const auto envs = environments(tree, {{"PATH", prefix + "/bin:/opt/fifo/.venv/bin:/usr/bin"}});
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(8));
  bool torch = false;
  for (const PythonEnvironment& env : envs) {
    for (const FrameworkInstall& fw : env.frameworks) {
      if (fw.name == "pytorch") {
        torch = true;
        EXPECT_EQ(fw.version, "2.11.0+cu130");
        EXPECT_EQ(fw.runpath.front(), site + "/nvidia/cu13/lib");
        EXPECT_EQ(library(fw, "cudart").path, site + "/nvidia/cu13/lib/libcudart.so.13");
      }
    }
  }
  EXPECT_TRUE(torch);
}

TEST(PythonFrameworks, LdLibraryPathShadowsTheWheelWithoutElf) {
  FixtureTree tree;
  const std::string site = make_venv(tree);
  make_torch(tree, site, "2.11.0+cu130", "13.0");
  make_cu13_wheels(tree, site);
  tree.file("/opt/cudnn/lib/libcudnn.so.9.14.0", "old")
      .symlink("/opt/cudnn/lib/libcudnn.so.9", "libcudnn.so.9.14.0");
  const auto envs = environments(
      tree, {{"PATH", "/opt/torch/.venv/bin"}, {"LD_LIBRARY_PATH", "/opt/cudnn/lib:relative"}});
  const FrameworkInstall& torch = envs.at(0).frameworks.at(0);
  EXPECT_EQ(torch.runpath_source, "wheel_layout");
  const ResolvedLibrary& cudnn = library(torch, "cudnn");
  EXPECT_EQ(cudnn.path, "/opt/cudnn/lib/libcudnn.so.9");
  EXPECT_EQ(cudnn.real_path, "/opt/cudnn/lib/libcudnn.so.9.14.0");
  EXPECT_EQ(cudnn.via, "LD_LIBRARY_PATH");
  EXPECT_EQ(cudnn.version, "9.14.0");
  EXPECT_EQ(cudnn.own_path, site + "/nvidia/cudnn/lib/libcudnn.so.9");
  EXPECT_EQ(cudnn.own_version, "9.19.0");
  EXPECT_EQ(library(torch, "cudart").via, "preload");
}

TEST(PythonFrameworks, RpathIsSearchedBeforeLdLibraryPath) {
  FixtureTree tree;
  const std::string site = make_venv(tree);
  make_torch(tree, site, "2.11.0+cu130", "13.0",
             ElfSpec{.soname = "libtorch_cuda.so",
                     .needed = {"libcudnn.so.9"},
                     .rpath = "$ORIGIN/../../nvidia/cudnn/lib"});
  make_cu13_wheels(tree, site);
  tree.file("/opt/cudnn/lib/libcudnn.so.9", "other");
  const auto envs =
      environments(tree, {{"PATH", "/opt/torch/.venv/bin"}, {"LD_LIBRARY_PATH", "/opt/cudnn/lib"}});
  const FrameworkInstall& torch = envs.at(0).frameworks.at(0);
  EXPECT_EQ(torch.runpath_source, "elf");
  const ResolvedLibrary& cudnn = library(torch, "cudnn");
  EXPECT_EQ(cudnn.via, "RPATH");
  EXPECT_EQ(cudnn.path, site + "/nvidia/cudnn/lib/libcudnn.so.9");
  // Not in the RPATH: LD_LIBRARY_PATH, then the cache and default directories (none here).
  EXPECT_EQ(library(torch, "cudart").path, "");
}

TEST(PythonFrameworks, TensorflowBuildInfoAndJaxPlugins) {
  FixtureTree tree;
  const std::string site = make_venv(tree);
  make_dist(tree, site, "tensorflow", "2.15.0");
  tree.file(site + "/tensorflow/python/platform/build_info.py",
            "import collections\nbuild_info = collections.OrderedDict()\n"
            "build_info['cuda_compute_capabilities'] = ['sm_60', 'sm_70', 'compute_80']\n"
            "build_info['cuda_version'] = '12.2'\nbuild_info['cudnn_version'] = '8'\n"
            "build_info['is_cuda_build'] = True\n");
  make_dist(tree, site, "jax", "0.8.0");
  make_dist(tree, site, "jaxlib", "0.8.0");
  make_dist(tree, site, "jax-cuda12-plugin", "0.8.0");
  make_dist(tree, site, "jax-cuda12-pjrt", "0.8.0");
  make_cu12_wheels(tree, site, "8.9.7.29", "12.2.140");
  const auto envs = environments(tree, {{"PATH", "/opt/torch/.venv/bin"}});
  const auto& fws = envs.at(0).frameworks;
  ASSERT_EQ(fws.size(), 2U);
  EXPECT_EQ(fws[0].name, "tensorflow");
  EXPECT_EQ(fws[0].cuda, "12.2");
  EXPECT_EQ(fws[0].cudnn, "8");
  EXPECT_EQ(fws[0].archs, (std::vector<std::string>{"sm_60", "sm_70", "compute_80"}));
  EXPECT_EQ(library(fws[0], "cudnn").soname, "libcudnn.so.8");
  EXPECT_EQ(library(fws[0], "cudnn").version, "8.9.7");
  EXPECT_EQ(fws[1].name, "jax");
  EXPECT_EQ(fws[1].version, "0.8.0");
  EXPECT_EQ(fws[1].cuda, "12");
  EXPECT_EQ(fws[1].plugins,
            (std::vector<std::string>{"jax-cuda12-pjrt 0.8.0", "jax-cuda12-plugin 0.8.0"}));
  EXPECT_EQ(library(fws[1], "cublas").soname, "libcublas.so.12");
}

const FrameworkInstall& framework(const PythonEnvironment& env, std::string_view name) {
  for (const FrameworkInstall& fw : env.frameworks) {
    if (fw.name == name) {
      return fw;
    }
  }
  throw std::logic_error("framework not found");
}

std::vector<std::string> sonames(const FrameworkInstall& fw) {
  std::vector<std::string> out;
  for (const ResolvedLibrary& lib : fw.libraries) {
    out.push_back(lib.soname);
  }
  return out;
}

TEST(PythonFrameworks, OnnxRuntimeGpuProviderNeedsAreResolvedAndMissingOnesRecorded) {
  FixtureTree tree;
  const std::string site = make_venv(tree);
  make_onnxruntime_gpu(tree, site, "1.20.1",
                       {"libcublasLt.so.12", "libcublas.so.12", "libcudnn.so.9", "libcudart.so.12"},
                       "12.2", "9.1");
  std::string cache;
  make_system_library(tree, cache, "/usr/lib/x86_64-linux-gnu", "libcudart.so.12", "12.4.127");
  const auto envs = environments(tree, {{"PATH", "/opt/torch/.venv/bin"}});
  const FrameworkInstall& ort = framework(envs.at(0), "onnxruntime");
  EXPECT_EQ(ort.distribution, "onnxruntime-gpu");
  EXPECT_EQ(ort.version, "1.20.1");
  EXPECT_EQ(ort.cuda, "12.2");
  EXPECT_EQ(ort.cudnn, "9.1");
  EXPECT_EQ(ort.plugins, (std::vector<std::string>{"libonnxruntime_providers_cuda.so",
                                                   "libonnxruntime_providers_tensorrt.so"}));
  EXPECT_EQ(ort.loader_object, site + "/onnxruntime/capi/libonnxruntime_providers_cuda.so");
  EXPECT_EQ(ort.runpath_source, "elf");
  EXPECT_EQ(ort.runpath, (std::vector<std::string>{site + "/onnxruntime/capi"}));
  // Only the GPU libraries of DT_NEEDED: not ORT's own providers_shared, not libstdc++.
  EXPECT_EQ(sonames(ort), (std::vector<std::string>{"libcublasLt.so.12", "libcublas.so.12",
                                                    "libcudnn.so.9", "libcudart.so.12"}));
  EXPECT_EQ(library(ort, "cublasLt").path, "");
  EXPECT_TRUE(library(ort, "cublasLt").elsewhere.empty());
  EXPECT_EQ(library(ort, "cudnn").path, "");
  EXPECT_EQ(library(ort, "cudart").path, "/usr/lib/x86_64-linux-gnu/libcudart.so.12");
  EXPECT_EQ(library(ort, "cudart").via, "ldconfig");
  EXPECT_EQ(library(ort, "cudart").version, "12.4.127");
}

TEST(PythonFrameworks, OnnxRuntimeMajorsFromTheProviderAndCopiesOffTheLoaderPath) {
  FixtureTree tree;
  const std::string site = make_venv(tree);
  // No build info: the majors come from what the provider needs.
  make_onnxruntime_gpu(
      tree, site, "1.18.1",
      {"libcublasLt.so.11", "libcublas.so.11", "libcudnn.so.8", "libcudart.so.11.0"});
  make_cu12_wheels(tree, site, "8.9.7.29", "11.8.89", 11);
  const auto envs = environments(tree, {{"PATH", "/opt/torch/.venv/bin"}});
  const FrameworkInstall& ort = framework(envs.at(0), "onnxruntime");
  EXPECT_EQ(ort.cuda, "11");
  EXPECT_EQ(ort.cudnn, "8");
  EXPECT_EQ(library(ort, "cudnn").path, "");
  EXPECT_EQ(library(ort, "cudnn").elsewhere,
            (std::vector<std::string>{site + "/nvidia/cudnn/lib/libcudnn.so.8"}));
  EXPECT_EQ(library(ort, "cudart").elsewhere,
            (std::vector<std::string>{site + "/nvidia/cuda_runtime/lib/libcudart.so.11.0"}));
  // The cuBLAS wheel of make_cu12_wheels has no libcublasLt: nowhere.
  EXPECT_TRUE(library(ort, "cublasLt").elsewhere.empty());
}

TEST(PythonFrameworks, CpuOnnxRuntimeHasNoCudaAndNoLibraries) {
  FixtureTree tree;
  const std::string site = make_venv(tree);
  make_dist(tree, site, "onnxruntime", "1.20.1");
  tree.file(site + "/onnxruntime/capi/build_and_package_info.py",
            "package_name = 'onnxruntime'\n__version__ = '1.20.1'\n");
  const auto envs = environments(tree, {{"PATH", "/opt/torch/.venv/bin"}});
  const FrameworkInstall& ort = framework(envs.at(0), "onnxruntime");
  EXPECT_EQ(ort.distribution, "onnxruntime");
  EXPECT_EQ(ort.cuda, std::nullopt);
  EXPECT_TRUE(ort.libraries.empty());
  EXPECT_TRUE(ort.loader_object.empty());
}

TEST(PythonFrameworks, TensorrtLibnvinferNeedsResolveThroughItsRunpath) {
  FixtureTree tree;
  const std::string site = make_venv(tree);
  make_tensorrt(tree, site, "tensorrt-cu12", "10.7.0",
                {"libcudart.so.12", "libcublasLt.so.12", "libcudnn.so.9"});
  tree.file(site + "/tensorrt_libs/libcudart.so.12", "bundled");
  make_dist(tree, site, "tensorrt-llm", "0.16.0"); // another project, named after it
  const auto envs = environments(tree, {{"PATH", "/opt/torch/.venv/bin"}});
  const FrameworkInstall& trt = framework(envs.at(0), "tensorrt");
  EXPECT_EQ(trt.distribution, "tensorrt-cu12");
  EXPECT_EQ(trt.version, "10.7.0");
  EXPECT_EQ(trt.cuda, "12");
  EXPECT_EQ(trt.cudnn, "9");
  EXPECT_EQ(trt.loader_object, site + "/tensorrt_libs/libnvinfer.so.10");
  EXPECT_EQ(trt.package_dir, site + "/tensorrt_libs");
  EXPECT_EQ(library(trt, "cudart").path, site + "/tensorrt_libs/libcudart.so.12");
  EXPECT_EQ(library(trt, "cudart").via, "RUNPATH");
  EXPECT_EQ(library(trt, "cudnn").path, "");
  EXPECT_EQ(library(trt, "cublasLt").path, "");
}

TEST(PythonFrameworks, CupyWheelNameGivesTheCudaMajorAndTheLibrarySet) {
  for (const auto& [dist, cuda, want] :
       std::vector<std::tuple<std::string, std::optional<std::string>, std::vector<std::string>>>{
           {"cupy-cuda12x", "12", {"libcudart.so.12", "libnvrtc.so.12", "libcublas.so.12"}},
           {"cupy-cuda11x", "11", {"libcudart.so.11.0", "libnvrtc.so.11.2", "libcublas.so.11"}},
           {"cupy-cuda13x", "13", {"libcudart.so.13", "libnvrtc.so.13", "libcublas.so.13"}},
           {"cupy-cuda113", "11.3", {"libcudart.so.11.0", "libnvrtc.so.11.2", "libcublas.so.11"}},
           {"cupy-cudax", std::nullopt, {}}}) {
    SCOPED_TRACE(dist);
    FixtureTree tree;
    const std::string site = make_venv(tree);
    make_dist(tree, site, dist, "13.3.0");
    const auto envs = environments(tree, {{"PATH", "/opt/torch/.venv/bin"}});
    const FrameworkInstall& cupy = framework(envs.at(0), "cupy");
    EXPECT_EQ(cupy.distribution, dist);
    EXPECT_EQ(cupy.cuda, cuda);
    EXPECT_EQ(sonames(cupy), want);
  }
}

TEST(PythonFrameworks, Cupy14LoadsTheEnvironmentsNvidiaWheelsOlderOnesDoNot) {
  for (const std::string version : {"14.0.1", "13.3.0"}) {
    SCOPED_TRACE(version);
    FixtureTree tree;
    const std::string site = make_venv(tree);
    make_dist(tree, site, "cupy-cuda12x", version);
    make_cu12_wheels(tree, site, "9.5.1.17");
    const auto envs = environments(tree, {{"PATH", "/opt/torch/.venv/bin"}});
    const ResolvedLibrary& cudart = library(framework(envs.at(0), "cupy"), "cudart");
    if (version.starts_with("14")) {
      EXPECT_EQ(cudart.path, site + "/nvidia/cuda_runtime/lib/libcudart.so.12");
      EXPECT_EQ(cudart.via, "preload");
      EXPECT_TRUE(cudart.elsewhere.empty());
    } else {
      EXPECT_EQ(cudart.path, "");
      EXPECT_EQ(cudart.elsewhere,
                (std::vector<std::string>{site + "/nvidia/cuda_runtime/lib/libcudart.so.12"}));
    }
  }
}

// Issue 34: a pyenv shim on PATH, run as root, ran `bash` from PATH (mallory's) 16 times. The
// shim is resolved from the files pyenv itself reads to the interpreter it would run, which is
// the candidate; the shim is never a candidate. asdf's likewise.
TEST(PythonCandidates, VersionManagerShimsAreResolvedFromTheirFiles) {
  const std::string pyenv_shim = "#!/usr/bin/env bash\nset -e\nprogram=\"${0##*/}\"\n"
                                 "export PYENV_ROOT=\"/root/.pyenv\"\n"
                                 "exec \"/root/.pyenv/libexec/pyenv\" exec \"$program\" \"$@\"\n";
  FixtureTree tree;
  tree.file("/root/.pyenv/shims/python3", pyenv_shim);
  tree.file("/root/.pyenv/version", "3.11.9\n");
  tree.file("/root/.pyenv/versions/3.11.9/bin/python3", "\x7f"
                                                        "ELF");
  tree.file("/root/.pyenv/versions/3.12.4/bin/python3", "\x7f"
                                                        "ELF");
  const Sysroot root(tree.root());
  Environment env({{"PATH", "/root/.pyenv/shims:/usr/bin"}, {"HOME", "/root"}});
  std::vector<PythonCandidate> found = find_python_candidates(root, env, {});
  ASSERT_FALSE(found.empty());
  EXPECT_EQ(found.front().interpreter, "/root/.pyenv/versions/3.11.9/bin/python3");
  EXPECT_EQ(found.front().found_by,
            std::vector<std::string>{"PATH (shim /root/.pyenv/shims/python3)"});
  // PYENV_VERSION wins over the global version file, as in pyenv.
  env = Environment({{"PATH", "/root/.pyenv/shims:/usr/bin"}, {"PYENV_VERSION", "3.12.4:3.11.9"}});
  EXPECT_EQ(find_python_candidates(root, env, {}).front().interpreter,
            "/root/.pyenv/versions/3.12.4/bin/python3");
  // "system", a version that climbs out, or one not installed: not resolved; the shim stays a
  // candidate to read files from, and is never run (may_run_interpreter, as root).
  for (const char* version : {"system", "../../../tmp/x", "3.9.0"}) {
    env = Environment({{"PATH", "/root/.pyenv/shims"}, {"PYENV_VERSION", version}});
    EXPECT_FALSE(resolve_shim(root, env, "/root/.pyenv/shims/python3")) << version;
    EXPECT_EQ(find_python_candidates(root, env, {}).front().interpreter,
              "/root/.pyenv/shims/python3");
    EXPECT_TRUE(is_script(root, "/root/.pyenv/shims/python3"));
  }
  // asdf: the version from $HOME/.tool-versions.
  tree.file(
      "/home/ci/.asdf/shims/python3",
      "#!/usr/bin/env bash\n# asdf-plugin: python 3.10.14\nexec asdf exec \"python3\" \"$@\"\n");
  tree.file("/home/ci/.tool-versions", "nodejs 20.1.0\npython 3.10.14 3.9.18\n");
  tree.file("/home/ci/.asdf/installs/python/3.10.14/bin/python3", "\x7f"
                                                                  "ELF");
  env = Environment({{"PATH", "/home/ci/.asdf/shims:/usr/bin"}, {"HOME", "/home/ci"}});
  EXPECT_EQ(find_python_candidates(root, env, {}).front().interpreter,
            "/home/ci/.asdf/installs/python/3.10.14/bin/python3");
  // A real interpreter on PATH is no script and is taken as it is.
  EXPECT_FALSE(is_script(root, "/root/.pyenv/versions/3.11.9/bin/python3"));
}

TEST(PythonEnvironments, SamePrefixMergesAndSeveralEnvironmentsStaySeparate) {
  FixtureTree tree;
  const std::string site = make_venv(tree);
  tree.file("/opt/torch/.venv/bin/python", "", 0755);
  make_torch(tree, site, "2.11.0+cu130", "13.0");
  const std::string other = make_venv(tree, "/srv/tf");
  make_dist(tree, other, "tensorflow-cpu", "2.18.0");
  const auto envs =
      environments(tree, {{"PATH", "/opt/torch/.venv/bin:/usr/bin"}, {"VIRTUAL_ENV", "/srv/tf"}},
                   {"/missing/bin/python3"});
  ASSERT_EQ(envs.size(), 3U);
  EXPECT_EQ(envs[0].prefix, "/opt/torch/.venv");
  EXPECT_EQ(envs[0].found_by, std::vector<std::string>{"PATH"});
  EXPECT_EQ(envs[0].frameworks.at(0).name, "pytorch");
  EXPECT_EQ(envs[1].prefix, "/srv/tf");
  EXPECT_EQ(envs[1].frameworks.at(0).distribution, "tensorflow-cpu");
  EXPECT_EQ(envs[1].frameworks.at(0).cuda, std::nullopt);
  EXPECT_EQ(envs[2].interpreter, "/missing/bin/python3");
  EXPECT_TRUE(envs[2].site_packages.empty());
}

TEST(PythonEnvironments, InterpreterAnswerReplacesTheLayout) {
  FixtureTree tree;
  const std::string site = make_venv(tree);
  tree.dir("/home/u/.local/lib/python3.12/site-packages");
  const Sysroot root(tree.root());
  const Environment env(Vars{{"PATH", "/opt/torch/.venv/bin"}});
  const auto answer = parse_interpreter_answer(nlohmann::json::parse(
      R"({"version": "3.12.7", "prefix": "/opt/torch/.venv", "base_prefix": "/usr",
          "site_packages": ["/home/u/.local/lib/python3.12/site-packages", ")" +
      site + R"(", "/gone/site-packages"]})"));
  ASSERT_TRUE(answer);
  const auto envs = build_python_environments(root, env, find_python_candidates(root, env, {}),
                                              {answer}, {std::nullopt});
  ASSERT_EQ(envs.size(), 1U);
  EXPECT_EQ(envs[0].source, "interpreter");
  EXPECT_EQ(envs[0].version, "3.12.7");
  EXPECT_EQ(envs[0].base_prefix, "/usr");
  EXPECT_EQ(envs[0].site_packages,
            (std::vector<std::string>{"/home/u/.local/lib/python3.12/site-packages", site}));
  EXPECT_EQ(parse_interpreter_answer(nlohmann::json::parse(R"({"version": "3.12"})")),
            std::nullopt);
  // Wrong types are ignored, never thrown.
  std::optional<InterpreterAnswer> odd;
  ASSERT_NO_THROW(odd = parse_interpreter_answer(nlohmann::json::parse(
                      R"({"version": 3.12, "prefix": "/p", "base_prefix": ["x"],
                          "site_packages": [1, {"a": 2}, "/p/site"]})")));
  ASSERT_TRUE(odd);
  EXPECT_EQ(odd->version, "");
  EXPECT_EQ(odd->base_prefix, "/p");
  EXPECT_EQ(odd->site_packages, std::vector<std::string>{"/p/site"});
}

TEST(PythonEnvironments, FailedQueryFallsBackToLayoutAndKeepsTheFailure) {
  FixtureTree tree;
  make_venv(tree);
  const Sysroot root(tree.root());
  const Environment env(Vars{{"PATH", "/opt/torch/.venv/bin"}});
  const ChildFailure hung{
      .kind = ChildFailureKind::timeout, .timeout_s = 2.0, .detail = "killed after 2 s"};
  const auto envs = build_python_environments(root, env, find_python_candidates(root, env, {}),
                                              {std::nullopt}, {hung});
  ASSERT_EQ(envs.size(), 1U);
  EXPECT_EQ(envs[0].source, "layout");
  EXPECT_EQ(envs[0].version, "3.12.3");
  EXPECT_EQ(envs[0].query_failure, hung);
}

TEST(PythonImport, ResultJsonAndMissingResult) {
  const nlohmann::json payload = nlohmann::json::parse(
      R"({"version": "2.11.0+cu130", "gpu_available": true, "device_count": 1,
          "arch_list": ["sm_75", "sm_90", "compute_120"], "cudnn_version": "91900",
          "op_ok": true, "mapped_libraries": ["/x/libcudnn.so.9"], "seconds": 2.5})");
  const FrameworkImport ok = parse_import_result("pytorch", &payload, std::nullopt);
  EXPECT_EQ(ok.gpu_available, true);
  EXPECT_EQ(ok.device_count, 1);
  EXPECT_EQ(ok.arch_list.size(), 3U);
  EXPECT_EQ(ok.cudnn_version, "91900");
  EXPECT_EQ(ok.op_ok, true);
  EXPECT_DOUBLE_EQ(ok.seconds, 2.5);
  EXPECT_EQ(ok.failure, std::nullopt);
  const FrameworkImport none = parse_import_result("jax", nullptr, std::nullopt);
  ASSERT_TRUE(none.failure);
  EXPECT_EQ(none.failure->kind, ChildFailureKind::bad_output);
}

TEST(PythonProbe, SysrootRunsNoInterpreter) {
  FixtureTree tree;
  make_venv(tree);
  // The fixture's python3 exits 1 if it were run; under a sysroot it must not be.
  ProbeOptions options;
  options.sysroot = tree.root();
  options.quick = true;
  options.child_timeout = std::chrono::milliseconds(3000);
  const SystemSnapshot s =
      collect_snapshot(options, Environment(Vars{{"PATH", "/opt/torch/.venv/bin"}}));
  ASSERT_EQ(s.python_environments.size(), 1U);
  EXPECT_EQ(s.python_environments[0].source, "layout");
  EXPECT_EQ(s.python_environments[0].query_failure, std::nullopt);
}

TEST(PythonProbe, OnlyAnInterpreterWhoseFilesCannotSayIsRun) {
  FixtureTree tree;
  make_venv(tree);
  // Both fake interpreters leave a mark when run, then fail.
  const std::string venv_mark = tree.host("/venv-ran");
  const std::string shim_mark = tree.host("/shim-ran");
  tree.file("/opt/torch/.venv/bin/python3", "#!/bin/sh\n: > '" + venv_mark + "'\nexit 1\n", 0755)
      .file("/opt/shim/bin/python3", "#!/bin/sh\n: > '" + shim_mark + "'\nexit 1\n", 0755);
  ProbeOptions options;
  options.sysroot = tree.root();
  options.quick = true;
  options.run_interpreters = true;
  options.python_interpreters = {"/opt/shim/bin/python3"};
  options.child_timeout = std::chrono::milliseconds(3000);
  const SystemSnapshot s =
      collect_snapshot(options, Environment(Vars{{"PATH", "/opt/torch/.venv/bin"}}));
  ASSERT_EQ(s.python_environments.size(), 2U);
  // The venv is read from pyvenv.cfg and lib/python3.12: its interpreter never runs.
  EXPECT_EQ(s.python_environments[0].source, "layout");
  EXPECT_EQ(s.python_environments[0].query_failure, std::nullopt);
  EXPECT_EQ(s.python_environments[0].version, "3.12.3");
  EXPECT_FALSE(std::filesystem::exists(venv_mark));
  // The shim's files name no installation: it is asked, and its failure is kept.
  EXPECT_TRUE(std::filesystem::exists(shim_mark));
  EXPECT_EQ(s.python_environments[1].source, "layout");
  ASSERT_TRUE(s.python_environments[1].query_failure);
}

} // namespace
} // namespace gpucheck::probes
