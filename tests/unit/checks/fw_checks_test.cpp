// The framework checks end to end on synthetic site-packages trees: the probe reads the tree
// (metadata, build files, library files, the fixture's loader cache), the check judges it against
// the embedded matrix. Each row asserts the exact finding codes and remedies.
#include <gtest/gtest.h>

#include <functional>
#include <span>

#include "checks/checks.hpp"
#include "probes/collect.hpp"
#include "probes/python_envs.hpp"
#include "unit/compat_test_support.hpp"
#include "unit/python_fixture.hpp"
#include "unit/snapshot_builder.hpp"

namespace gpucheck::checks {
namespace {

using compat::testing::TestGpu;
using compat::testing::TestMachine;
using gpucheck::testing::ElfSpec;
using gpucheck::testing::FixtureTree;
using Vars = std::map<std::string, std::string>;
using namespace gpucheck::testing;

using Install = std::function<void(FixtureTree&, const std::string& site, std::string& cache)>;

struct Expected {
  std::string code;
  std::string remedy;
};

struct Scenario {
  std::string name;
  TestMachine machine;
  Install install;
  CheckDef (*check)();
  Status status;
  std::vector<Expected> findings;
  Vars vars = {};
};

const TestGpu k_h200{"NVIDIA H200", 9, 0};
const TestGpu k_h100{"NVIDIA H100 80GB HBM3", 9, 0};
const TestGpu k_a100{"NVIDIA A100-SXM4-80GB", 8, 0};
const TestGpu k_a10{"NVIDIA A10", 8, 6};
const TestGpu k_v100{"Tesla V100-SXM2-32GB", 7, 0};
const TestGpu k_p40{"Tesla P40", 6, 1};
const TestGpu k_rtx5090{"NVIDIA GeForce RTX 5090", 12, 0};

const std::string k_cu130 = "https://download.pytorch.org/whl/cu130";

std::string pip_torch(const std::string& release, const std::string& tag) {
  return "pip install torch==" + release + ".* --index-url https://download.pytorch.org/whl/" + tag;
}

/// torch with the CUDA 12 (or 11) wheels of its release.
Install torch_cu12(std::string version, std::string cuda, std::string cudnn, std::string runtime,
                   int major = 12) {
  return [=](FixtureTree& tree, const std::string& site, std::string&) {
    make_torch(tree, site, version, cuda);
    make_cu12_wheels(tree, site, cudnn, runtime, major);
  };
}

Install torch_cu130(std::string version = "2.11.0+cu130", std::string cudnn = "9.19.0.56") {
  return [=](FixtureTree& tree, const std::string& site, std::string&) {
    make_torch(tree, site, version, "13.0");
    make_cu13_wheels(tree, site, cudnn);
  };
}

Install tensorflow(std::string version, std::string build_info, std::string cudnn,
                   std::string dist = "tensorflow") {
  return [=](FixtureTree& tree, const std::string& site, std::string&) {
    make_dist(tree, site, dist, version);
    tree.file(site + "/tensorflow/python/platform/build_info.py", build_info);
    if (!cudnn.empty()) {
      make_cu12_wheels(tree, site, cudnn, "12.5.82");
    }
  };
}

const std::string k_tf215_info =
    "import collections\nbuild_info = collections.OrderedDict()\n"
    "build_info['cuda_compute_capabilities'] = ['sm_60', 'sm_70', 'sm_80', 'compute_90']\n"
    "build_info['cuda_version'] = '12.2'\nbuild_info['cudnn_version'] = '8'\n"
    "build_info['is_cuda_build'] = True\nbuild_info['is_rocm_build'] = False\n";
const std::string k_tf218_info =
    "build_info = {\n    'cpu_compiler': '/usr/lib/llvm-17/bin/clang',\n"
    "    'cuda_compute_capabilities': ['sm_60', 'sm_70', 'sm_80', 'sm_89', 'sm_90', "
    "'compute_90'],\n    'cuda_version': '12.5.1',\n    'cudnn_version': '9',\n"
    "    'is_cuda_build': True,\n    'is_rocm_build': False,\n}\n";
// The generated form: one dict on one line, double quotes.
const std::string k_tf218_ptx_info =
    "build_info = {\"cuda_compute_capabilities\": ['sm_60', 'sm_70', 'sm_80', 'compute_90'], "
    "\"cuda_version\": '12.5.1', \"cudnn_version\": '9', \"is_cuda_build\": True}\n";
const std::string k_cpu_info = "build_info = {'is_cuda_build': False, 'is_rocm_build': False}\n";

Install jax(std::string version, std::string plugin_cuda, std::string plugin_version,
            std::string cudnn) {
  return [=](FixtureTree& tree, const std::string& site, std::string&) {
    make_dist(tree, site, "jax", version);
    make_dist(tree, site, "jaxlib", version);
    if (!plugin_cuda.empty()) {
      make_dist(tree, site, "jax-cuda" + plugin_cuda + "-plugin", plugin_version);
      make_dist(tree, site, "jax-cuda" + plugin_cuda + "-pjrt", plugin_version);
      if (plugin_cuda == "13") {
        make_cu13_wheels(tree, site, cudnn);
      } else {
        make_cu12_wheels(tree, site, cudnn);
      }
    }
  };
}

const Scenario k_scenarios[] = {
    // --- PyTorch ---------------------------------------------------------------------------
    {"torch cu130, driver 580, H200, system cuDNN 9.14 unused (the GPU machine)",
     {.driver = "580.159.04", .gpus = {k_h200}},
     [](FixtureTree& tree, const std::string& site, std::string& cache) {
       torch_cu130()(tree, site, cache);
       make_system_library(tree, cache, "/lib/x86_64-linux-gnu", "libcudnn.so.9", "9.14.0");
     },
     &fw_pytorch_check,
     Status::pass,
     {{"fw.system_copy_unused", "Nothing to do for the framework."}},
     {{"LD_LIBRARY_PATH", "/usr/local/nvidia/lib64"}}},
    {"torch cu130 on an RTX 5090 (sm_120), driver 580",
     {.driver = "580.95.05", .gpus = {k_rtx5090}},
     torch_cu130(),
     &fw_pytorch_check,
     Status::pass,
     {}},
    {"torch cu130, driver 570: too old, cu128 of the same release runs",
     {.driver = "570.124.06", .gpus = {k_h100}},
     torch_cu130(),
     &fw_pytorch_check,
     Status::fail,
     {{"fw.driver_too_old", "Install NVIDIA driver >= 580.65.06, or install a build this driver "
                            "runs: " +
                                pip_torch("2.11", "cu128")}}},
    {"torch cu130, driver 525: too old, cu128 runs through MVC",
     {.driver = "525.60.13", .gpus = {k_h100}},
     torch_cu130(),
     &fw_pytorch_check,
     Status::fail,
     {{"fw.driver_too_old", "Install NVIDIA driver >= 580.65.06, or install a build this driver "
                            "runs: " +
                                pip_torch("2.11", "cu128")}}},
    {"torch 2.8 cu128, driver 550: minor-version compatibility",
     {.driver = "550.54.15", .gpus = {k_h100}},
     torch_cu12("2.8.0+cu128", "12.8", "9.10.2.21", "12.8.90"),
     &fw_pytorch_check,
     Status::pass,
     {{"fw.minor_version_compat",
       "Nothing is required; to lift the caveats install NVIDIA driver >= 570.26."}}},
    {"torch 2.1 cu121, driver 525.60.13, A10: minor-version compatibility",
     {.driver = "525.60.13", .gpus = {k_a10}},
     torch_cu12("2.1.0+cu121", "12.1", "8.9.2.26", "12.1.105"),
     &fw_pytorch_check,
     Status::pass,
     {{"fw.minor_version_compat",
       "Nothing is required; to lift the caveats install NVIDIA driver >= 530.30.02."}}},
    {"torch 2.1 cu118, driver 470, A10: CUDA 11 minor-version compatibility",
     {.driver = "470.256.02", .gpus = {k_a10}},
     torch_cu12("2.1.0+cu118", "11.8", "8.7.0.84", "11.8.89", 11),
     &fw_pytorch_check,
     Status::pass,
     {{"fw.minor_version_compat",
       "Nothing is required; to lift the caveats install NVIDIA driver >= 520.61.05."}}},
    {"torch 2.4 cu121, driver 470, V100: too old, cu118 runs",
     {.driver = "470.256.02", .gpus = {k_v100}},
     torch_cu12("2.4.0+cu121", "12.1", "9.1.0.70", "12.1.105"),
     &fw_pytorch_check,
     Status::fail,
     {{"fw.driver_too_old", "Install NVIDIA driver >= 525.60.13, or install a build this driver "
                            "runs: " +
                                pip_torch("2.4", "cu118")}}},
    {"torch 2.11 cu126 on a P40 (sm_61), driver 550: Pascal kernels, minor-version compatibility",
     {.driver = "550.54.15", .gpus = {k_p40}},
     torch_cu12("2.11.0+cu126", "12.6", "9.10.2.21", "12.6.77"),
     &fw_pytorch_check,
     Status::pass,
     {{"fw.minor_version_compat",
       "Nothing is required; to lift the caveats install NVIDIA driver >= 560.28.03."}}},
    {"torch 2.8 cu128 on a P40 (sm_61): no kernels, cu126 has them",
     {.driver = "570.124.06", .gpus = {k_p40}},
     torch_cu12("2.8.0+cu128", "12.8", "9.10.2.21", "12.8.90"),
     &fw_pytorch_check,
     Status::fail,
     {{"fw.gpu_not_covered",
       "Install a build with kernels for every GPU here: " + pip_torch("2.8", "cu126")}}},
    {"torch 2.5 cu124 on an RTX 5090 (sm_120): no kernels in 2.5, 2.11 cu128 has them",
     {.driver = "570.124.06", .gpus = {k_rtx5090}},
     torch_cu12("2.5.1+cu124", "12.4", "9.1.0.70", "12.4.127"),
     &fw_pytorch_check,
     Status::fail,
     {{"fw.gpu_not_covered",
       "Install a build with kernels for every GPU here: " + pip_torch("2.11", "cu128")}}},
    {"torch 2.10 cu130: architectures not in the matrix",
     {.driver = "580.159.04", .gpus = {k_h200}},
     torch_cu130("2.10.0+cu130", "9.15.1.9"),
     &fw_pytorch_check,
     Status::pass,
     {{"fw.build_unknown", "Update gpucheck or pass a newer data file with --matrix FILE; run "
                           "with --import to ask the framework itself."}}},
    {"CPU-only torch on an H200",
     {.driver = "580.159.04", .gpus = {k_h200}},
     [](FixtureTree& tree, const std::string& site, std::string&) {
       make_torch(tree, site, "2.11.0+cpu", std::nullopt);
     },
     &fw_pytorch_check,
     Status::warn,
     {{"fw.cpu_only_build",
       "Install a CUDA build that fits this driver and GPU: " + pip_torch("2.11", "cu130")}}},
    {"CPU-only torch on a machine without GPU",
     {},
     [](FixtureTree& tree, const std::string& site, std::string&) {
       make_torch(tree, site, "2.11.0+cpu", std::nullopt);
     },
     &fw_pytorch_check,
     Status::pass,
     {}},
    {"LD_LIBRARY_PATH cuDNN 9.14 shadows torch's own 9.19",
     {.driver = "580.159.04", .gpus = {k_h200}},
     [](FixtureTree& tree, const std::string& site, std::string& cache) {
       torch_cu130()(tree, site, cache);
       tree.file("/opt/cudnn/lib/libcudnn.so.9.14.0", "old")
           .symlink("/opt/cudnn/lib/libcudnn.so.9", "libcudnn.so.9.14.0");
     },
     &fw_pytorch_check,
     Status::warn,
     {{"fw.cudnn_older",
       "Remove /opt/cudnn/lib from LD_LIBRARY_PATH in the environment that runs Python, so that "
       "PyTorch loads its own cuDNN 9.19.0 (" +
           k_site + "/nvidia/cudnn/lib/libcudnn.so.9)."},
      {"fw.library_shadowed",
       "Remove /opt/cudnn/lib from LD_LIBRARY_PATH in the environment that runs Python (or unset "
       "it before starting Python), so that it loads its own copy."}},
     {{"LD_LIBRARY_PATH", "/opt/cudnn/lib"}}},
    {"torch's RUNPATH finds no cuDNN (wheel missing)",
     {.driver = "580.159.04", .gpus = {k_h200}},
     [](FixtureTree& tree, const std::string& site, std::string&) {
       make_torch(
           tree, site, "2.11.0+cu130", "13.0",
           ElfSpec{
               .soname = "libtorch_cuda.so",
               .needed = {"libcudart.so.13", "libcublas.so.13", "libcudnn.so.9", "libnccl.so.2"},
               .runpath = "$ORIGIN/../../nvidia/cu13/lib:$ORIGIN/../../nvidia/cudnn/lib:$ORIGIN/"
                          "../../nvidia/nccl/lib"});
       make_nvidia_wheel(tree, site, "nvidia-cuda-runtime", "13.0.96", "cu13", {"libcudart.so.13"});
       make_nvidia_wheel(tree, site, "nvidia-cublas", "13.1.0.3", "cu13", {"libcublas.so.13"});
       make_nvidia_wheel(tree, site, "nvidia-nccl-cu13", "2.28.9", "nccl", {"libnccl.so.2"});
     },
     &fw_pytorch_check,
     Status::fail,
     {{"fw.library_missing", "Reinstall it with its CUDA libraries: pip install "
                             "--force-reinstall torch==2.11.0 --index-url " +
                                 k_cu130}}},
    {"torchvision cu128 beside torch cu130",
     {.driver = "580.159.04", .gpus = {k_h200}},
     [](FixtureTree& tree, const std::string& site, std::string& cache) {
       torch_cu130()(tree, site, cache);
       make_dist(tree, site, "torchvision", "0.26.0+cu128");
     },
     &fw_pytorch_check,
     Status::warn,
     {{"fw.torchvision_mismatch",
       "Install the same torchvision release built for cu130: pip install torchvision==0.26.0 "
       "--index-url " +
           k_cu130}}},
    // --- TensorFlow ------------------------------------------------------------------------
    {"TF 2.15 with cuDNN 8.9 on an A100, driver 535",
     {.driver = "535.104.05", .gpus = {k_a100}},
     tensorflow("2.15.0", k_tf215_info, "8.9.7.29"),
     &fw_tensorflow_check,
     Status::pass,
     {}},
    {"TF 2.15 with only a cuDNN 9 wheel: libcudnn.so.8 missing",
     {.driver = "535.104.05", .gpus = {k_a100}},
     tensorflow("2.15.0", k_tf215_info, "9.1.0.70"),
     &fw_tensorflow_check,
     Status::fail,
     {{"fw.library_missing", "Reinstall it with its CUDA libraries: pip install "
                             "--force-reinstall \"tensorflow[and-cuda]==2.15.0\""}}},
    {"TF 2.15 on an H100: PTX only",
     {.driver = "535.104.05", .gpus = {k_h100}},
     tensorflow("2.15.0", k_tf215_info, "8.9.7.29"),
     &fw_tensorflow_check,
     Status::pass,
     {{"fw.gpu_ptx_only", "Nothing is required; a build with native sm_90 kernels starts "
                          "faster."}}},
    {"TF 2.18 with cuDNN 9.3, driver 570, H100",
     {.driver = "570.124.06", .gpus = {k_h100}},
     tensorflow("2.18.0", k_tf218_info, "9.3.0.75"),
     &fw_tensorflow_check,
     Status::pass,
     {}},
    {"TF 2.18 with cuDNN 9.1: older than tested",
     {.driver = "570.124.06", .gpus = {k_h100}},
     tensorflow("2.18.0", k_tf218_info, "9.1.0.70"),
     &fw_tensorflow_check,
     Status::warn,
     {{"fw.cudnn_older",
       "Install the cuDNN it expects: pip install \"nvidia-cudnn-cu12>=9.3,<10\""}}},
    {"TF 2.18 on driver 550: minor-version compatibility",
     {.driver = "550.54.15", .gpus = {k_h100}},
     tensorflow("2.18.0", k_tf218_ptx_info, "9.3.0.75"),
     &fw_tensorflow_check,
     Status::pass,
     {{"fw.minor_version_compat",
       "Nothing is required; to lift the caveats install NVIDIA driver >= 555.42.02."},
      {"fw.gpu_ptx_only", "Nothing is required; a build with native sm_90 kernels starts "
                          "faster."}}},
    {"TF 2.18 on driver 470: too old, TF 2.14 runs",
     {.driver = "470.256.02", .gpus = {k_a100}},
     tensorflow("2.18.0", k_tf218_info, "9.3.0.75"),
     &fw_tensorflow_check,
     Status::fail,
     {{"fw.driver_too_old", "Install NVIDIA driver >= 525.60.13, or install a build this driver "
                            "runs: pip install \"tensorflow[and-cuda]==2.14.0\""}}},
    {"tensorflow-cpu on an H100",
     {.driver = "570.124.06", .gpus = {k_h100}},
     tensorflow("2.18.0", k_cpu_info, "", "tensorflow-cpu"),
     &fw_tensorflow_check,
     Status::warn,
     {{"fw.cpu_only_build",
       "Install a CUDA build that fits this driver and GPU: pip uninstall tensorflow-cpu; pip "
       "install \"tensorflow[and-cuda]==2.21.0\""}}},
    // --- JAX -------------------------------------------------------------------------------
    {"jax cuda13 plugin, driver 580, H200",
     {.driver = "580.159.04", .gpus = {k_h200}},
     jax("0.8.0", "13", "0.8.0", "9.19.0.56"),
     &fw_jax_check,
     Status::pass,
     {}},
    {"jax cuda13 plugin, driver 570: too old, cuda12 runs",
     {.driver = "570.124.06", .gpus = {k_h100}},
     jax("0.8.0", "13", "0.8.0", "9.19.0.56"),
     &fw_jax_check,
     Status::fail,
     {{"fw.driver_too_old", "Install NVIDIA driver >= 580, or install a build this driver runs: "
                            "pip install -U \"jax[cuda12]\""}}},
    {"jax cuda13 plugin on a P40 (sm_61)",
     {.driver = "580.159.04", .gpus = {k_p40}},
     jax("0.8.0", "13", "0.8.0", "9.19.0.56"),
     &fw_jax_check,
     Status::fail,
     {{"fw.gpu_not_covered",
       "Install the JAX wheel that supports it: pip install -U \"jax[cuda12]\""}}},
    {"jax cuda12 plugin older than jaxlib",
     {.driver = "570.124.06", .gpus = {k_h100}},
     jax("0.8.0", "12", "0.7.2", "9.10.2.21"),
     &fw_jax_check,
     Status::fail,
     {{"fw.jax_plugin_mismatch", "Install matching versions: pip install \"jax[cuda12]==0.8.0\""},
      {"fw.jax_plugin_mismatch", "Install matching versions: pip install \"jax[cuda12]==0.8.0\""}}},
    {"jax cuda12 with cuDNN 9.1 (needs >= 9.8)",
     {.driver = "570.124.06", .gpus = {k_h100}},
     jax("0.8.0", "12", "0.8.0", "9.1.0.70"),
     &fw_jax_check,
     Status::fail,
     {{"fw.cudnn_mismatch",
       "Install the cuDNN it expects: pip install \"nvidia-cudnn-cu12>=9.8,<10.0\""}}},
    {"jax without a CUDA plugin on an H200",
     {.driver = "580.159.04", .gpus = {k_h200}},
     jax("0.8.0", "", "", ""),
     &fw_jax_check,
     Status::warn,
     {{"fw.cpu_only_build",
       "Install a CUDA build that fits this driver and GPU: pip install -U \"jax[cuda13]\""}}},
};

const std::vector<std::string> k_ort_cu12_needs{"libcublasLt.so.12", "libcublas.so.12",
                                                "libcudnn.so.9", "libcudart.so.12"};

Install ort_cu12(bool wheels, bool system) {
  return [=](FixtureTree& tree, const std::string& site, std::string& cache) {
    make_onnxruntime_gpu(tree, site, "1.20.1", k_ort_cu12_needs);
    if (wheels) {
      make_ort_cu12_wheels(tree, site);
    }
    if (system) {
      for (const auto& [soname, version] :
           std::vector<std::pair<std::string, std::string>>{{"libcublasLt.so.12", "12.6.4.1"},
                                                            {"libcublas.so.12", "12.6.4.1"},
                                                            {"libcudnn.so.9", "9.5.1"},
                                                            {"libcudart.so.12", "12.6.77"}}) {
        make_system_library(tree, cache, "/usr/lib/x86_64-linux-gnu", soname, version);
      }
    }
  };
}

Install cupy12(bool cudart) {
  return [=](FixtureTree& tree, const std::string& site, std::string& cache) {
    make_dist(tree, site, "cupy-cuda12x", "13.3.0");
    tree.file(site + "/cupy/__init__.py", "");
    make_system_library(tree, cache, "/usr/local/cuda-12.6/lib64", "libnvrtc.so.12", "12.6.85");
    make_system_library(tree, cache, "/usr/local/cuda-12.6/lib64", "libcublas.so.12", "12.6.4.1");
    if (cudart) {
      make_system_library(tree, cache, "/usr/local/cuda-12.6/lib64", "libcudart.so.12", "12.6.77");
    }
  };
}

const std::string k_ort_missing_remedy =
    "Install them: pip install nvidia-cublas-cu12 nvidia-cudnn-cu12 nvidia-cuda-runtime-cu12 and "
    "call onnxruntime.preload_dlls() before creating the InferenceSession (onnxruntime-gpu >= "
    "1.19), or install the CUDA 12 toolkit and cuDNN system-wide where the loader looks; or "
    "install an onnxruntime-gpu built for the CUDA this machine has (on PyPI, 1.19 and later are "
    "built for CUDA 12 and cuDNN 9).";

const Scenario k_gpu_library_scenarios[] = {
    // --- ONNX Runtime, TensorRT, CuPy (F37) --------------------------------------------------
    {"onnxruntime-gpu 1.20 for CUDA 12, no CUDA 12 cuBLAS/cuDNN/runtime anywhere",
     {.driver = "570.124.06", .gpus = {k_h100}},
     ort_cu12(false, false),
     &fw_onnxruntime_check,
     Status::fail,
     {{"fw.gpu_libraries_missing", k_ort_missing_remedy}}},
    {"onnxruntime-gpu 1.20 for CUDA 12, its libraries only in site-packages nvidia wheels",
     {.driver = "570.124.06", .gpus = {k_h100}},
     ort_cu12(true, false),
     &fw_onnxruntime_check,
     Status::warn,
     {{"fw.gpu_libraries_off_path",
       "Call onnxruntime.preload_dlls() before creating the InferenceSession (onnxruntime-gpu >= "
       "1.19), or import torch before onnxruntime (torch preloads the same nvidia-* wheels), or "
       "add " +
           k_site + "/nvidia/cublas/lib:" + k_site + "/nvidia/cudnn/lib:" + k_site +
           "/nvidia/cuda_runtime/lib to LD_LIBRARY_PATH."}}},
    {"onnxruntime-gpu 1.18 for CUDA 11 (no preload_dlls yet), libraries only in nvidia wheels",
     {.driver = "570.124.06", .gpus = {k_a100}},
     [](FixtureTree& tree, const std::string& site, std::string&) {
       make_onnxruntime_gpu(tree, site, "1.18.1",
                            {"libcublas.so.11", "libcudnn.so.8", "libcudart.so.11.0"});
       make_cu12_wheels(tree, site, "8.9.7.29", "11.8.89", 11);
     },
     &fw_onnxruntime_check,
     Status::warn,
     {{"fw.gpu_libraries_off_path",
       "Upgrade to onnxruntime-gpu >= 1.19 and call onnxruntime.preload_dlls() before creating "
       "the InferenceSession, or import torch before onnxruntime (torch preloads the same "
       "nvidia-* wheels), or add " +
           k_site + "/nvidia/cublas/lib:" + k_site + "/nvidia/cudnn/lib:" + k_site +
           "/nvidia/cuda_runtime/lib to LD_LIBRARY_PATH."}}},
    {"cupy-cuda12x 13 with the CUDA 12 wheels it does not load itself",
     {.driver = "570.124.06", .gpus = {k_h100}},
     [](FixtureTree& tree, const std::string& site, std::string&) {
       make_dist(tree, site, "cupy-cuda12x", "13.3.0");
       make_cupy_cu12_wheels(tree, site);
     },
     &fw_cupy_check,
     Status::warn,
     {{"fw.gpu_libraries_off_path",
       "Upgrade to CuPy >= 14, which loads the environment's nvidia-* wheels, or add " + k_site +
           "/nvidia/cuda_runtime/lib:" + k_site + "/nvidia/cuda_nvrtc/lib:" + k_site +
           "/nvidia/cublas/lib to LD_LIBRARY_PATH."}}},
    {"cupy-cuda12x 14 with the CUDA 12 wheels (cupy-cuda12x[ctk], healthy)",
     {.driver = "570.124.06", .gpus = {k_h100}},
     [](FixtureTree& tree, const std::string& site, std::string&) {
       make_dist(tree, site, "cupy-cuda12x", "14.0.1");
       make_cupy_cu12_wheels(tree, site);
     },
     &fw_cupy_check,
     Status::pass,
     {}},
    {"onnxruntime-gpu 1.20 for CUDA 12, libraries in the loader cache (healthy)",
     {.driver = "570.124.06", .gpus = {k_h100}},
     ort_cu12(true, true),
     &fw_onnxruntime_check,
     Status::pass,
     {}},
    {"onnxruntime-gpu 1.20 for CUDA 12 on driver 470 (CUDA 11.4)",
     {.driver = "470.256.02", .gpus = {k_a100}},
     ort_cu12(false, true),
     &fw_onnxruntime_check,
     Status::fail,
     {{"fw.driver_too_old", "Install NVIDIA driver >= 525.60.13, or install a build this driver "
                            "runs: onnxruntime-gpu built for CUDA 11"}}},
    {"CPU-only onnxruntime on an H100: no CUDA finding",
     {.driver = "570.124.06", .gpus = {k_h100}},
     [](FixtureTree& tree, const std::string& site, std::string&) {
       make_dist(tree, site, "onnxruntime", "1.20.1");
       tree.file(site + "/onnxruntime/__init__.py", "");
     },
     &fw_onnxruntime_check,
     Status::pass,
     {}},
    {"cupy-cuda12x without libcudart.so.12",
     {.driver = "570.124.06", .gpus = {k_h100}},
     cupy12(false),
     &fw_cupy_check,
     Status::fail,
     {{"fw.gpu_libraries_missing",
       "Install the CUDA 12 libraries where the loader looks (the CUDA 12 toolkit, its lib64 in "
       "/etc/ld.so.conf.d or LD_LIBRARY_PATH), or with CuPy >= 14: pip install "
       "\"cupy-cuda12x[ctk]\"; or install the CuPy wheel for the CUDA this machine has."}}},
    {"cupy-cuda12x with the CUDA 12.6 toolkit in the loader cache (healthy)",
     {.driver = "570.124.06", .gpus = {k_h100}},
     cupy12(true),
     &fw_cupy_check,
     Status::pass,
     {}},
    {"TensorRT 8.6 libnvinfer needs CUDA 11 cuBLAS and cuDNN 8, absent",
     {.driver = "570.124.06", .gpus = {k_h100}},
     [](FixtureTree& tree, const std::string& site, std::string&) {
       make_tensorrt(
           tree, site, "tensorrt", "8.6.1",
           {"libcudart.so.11.0", "libcublas.so.11", "libcublasLt.so.11", "libcudnn.so.8"});
     },
     &fw_tensorrt_check,
     Status::fail,
     {{"fw.gpu_libraries_missing",
       "Install them: pip install nvidia-cuda-runtime-cu11 nvidia-cublas-cu11 nvidia-cudnn-cu11 "
       "and add their lib directories to LD_LIBRARY_PATH, or install the CUDA 11 toolkit and "
       "cuDNN system-wide where the loader looks; or install the TensorRT wheel for the CUDA "
       "this machine has."}}},
    {"TensorRT 10 for CUDA 12 with its libraries beside libnvinfer (healthy)",
     {.driver = "570.124.06", .gpus = {k_h100}},
     [](FixtureTree& tree, const std::string& site, std::string&) {
       make_tensorrt(tree, site, "tensorrt-cu12", "10.7.0", {"libcudart.so.12"});
       tree.file(site + "/tensorrt_libs/libcudart.so.12", "bundled");
     },
     &fw_tensorrt_check,
     Status::pass,
     {}},
};

SystemSnapshot probe_frameworks(const FixtureTree& tree, const TestMachine& machine,
                                const Vars& vars) {
  SystemSnapshot s = compat::testing::make_snapshot(machine);
  const probes::Sysroot root(tree.root());
  const probes::Environment env(vars);
  s.libraries = probes::discover_libraries(root, env);
  s.python_environments = probes::build_python_environments(
      root, env, probes::find_python_candidates(root, env, {}), {}, {});
  return s;
}

void run_scenarios(std::span<const Scenario> rows) {
  for (const Scenario& row : rows) {
    SCOPED_TRACE(row.name);
    FixtureTree tree;
    const std::string site = make_venv(tree);
    std::string cache;
    row.install(tree, site, cache);
    Vars vars = row.vars;
    vars["PATH"] = "/opt/torch/.venv/bin:/usr/bin";
    const SystemSnapshot s = probe_frameworks(tree, row.machine, vars);
    const std::vector<CheckResult> results = run_check(row.check(), s);
    ASSERT_EQ(results.size(), 1U);
    const CheckResult& result = results[0];
    EXPECT_EQ(result.status, row.status) << result.summary;
    std::vector<std::string> codes;
    std::vector<std::string> remedies;
    for (const Finding& finding : result.findings) {
      codes.push_back(finding.code);
      remedies.push_back(finding.remedy);
      EXPECT_NE(finding.message.find(k_venv), std::string::npos) << finding.message;
    }
    std::vector<std::string> want_codes;
    std::vector<std::string> want_remedies;
    for (const Expected& expected : row.findings) {
      want_codes.push_back(expected.code);
      want_remedies.push_back(expected.remedy);
    }
    EXPECT_EQ(codes, want_codes) << result.summary;
    EXPECT_EQ(remedies, want_remedies);
    EXPECT_NE(result.summary.find(k_venv), std::string::npos) << result.summary;
  }
}

TEST(FrameworkChecks, Scenarios) {
  run_scenarios(k_scenarios);
}

TEST(FrameworkChecks, GpuLibraryScenarios) {
  run_scenarios(k_gpu_library_scenarios);
}

TEST(FrameworkChecks, MissingOnnxRuntimeLibrariesNameTheMajorsAndTheSonames) {
  FixtureTree tree;
  const std::string site = make_venv(tree);
  std::string cache;
  ort_cu12(false, false)(tree, site, cache);
  const SystemSnapshot s = probe_frameworks(tree, {.driver = "570.124.06", .gpus = {k_h100}},
                                            {{"PATH", "/opt/torch/.venv/bin:/usr/bin"}});
  const std::vector<CheckResult> results = run_check(fw_onnxruntime_check(), s);
  ASSERT_EQ(results.size(), 1U);
  ASSERT_EQ(results[0].findings.size(), 1U);
  EXPECT_EQ(results[0].findings[0].message,
            "ONNX Runtime 1.20.1 in /opt/torch/.venv needs CUDA 12 and cuDNN 9; the loader does "
            "not find libcublasLt.so.12, libcublas.so.12, libcudnn.so.9, libcudart.so.12 "
            "(searched LD_LIBRARY_PATH, " +
                k_site +
                "/onnxruntime/capi, loader cache, /lib, /usr/lib), nor does this environment "
                "have it");
  EXPECT_NE(results[0].summary.find("libcudnn.so.9 missing"), std::string::npos)
      << results[0].summary;
}

TEST(FrameworkChecks, HealthyOnnxRuntimeSummaryNamesWhatLoads) {
  FixtureTree tree;
  const std::string site = make_venv(tree);
  std::string cache;
  ort_cu12(false, true)(tree, site, cache);
  const SystemSnapshot s = probe_frameworks(tree, {.driver = "570.124.06", .gpus = {k_h100}},
                                            {{"PATH", "/opt/torch/.venv/bin:/usr/bin"}});
  const std::vector<CheckResult> results = run_check(fw_onnxruntime_check(), s);
  ASSERT_EQ(results.size(), 1U);
  EXPECT_EQ(results[0].status, Status::pass);
  EXPECT_NE(results[0].summary.find("CUDA 12, cuDNN 9; loads cublasLt 12.6.4.1 (ldconfig)"),
            std::string::npos)
      << results[0].summary;
}

TEST(FrameworkChecks, NoNewFrameworkIsASkipNamingIt) {
  FixtureTree tree;
  make_venv(tree);
  const SystemSnapshot s = probe_frameworks(tree, {.driver = "570.124.06", .gpus = {k_h100}},
                                            {{"PATH", "/opt/torch/.venv/bin:/usr/bin"}});
  for (const auto& [check, label] :
       std::vector<std::pair<CheckDef (*)(), std::string>>{{&fw_onnxruntime_check, "ONNX Runtime"},
                                                           {&fw_tensorrt_check, "TensorRT"},
                                                           {&fw_cupy_check, "CuPy"}}) {
    const std::vector<CheckResult> results = run_check(check(), s);
    ASSERT_EQ(results.size(), 1U);
    EXPECT_EQ(results[0].status, Status::skip);
    EXPECT_NE(results[0].summary.find("no " + label + " in the 1 Python"), std::string::npos)
        << results[0].summary;
  }
}

TEST(FrameworkChecks, AtLeastTwentyScenarios) {
  EXPECT_GE(std::size(k_scenarios), 20U);
}

TEST(FrameworkChecks, GpuMachineMessagesNameBothCuDnnCopies) {
  FixtureTree tree;
  const std::string site = make_venv(tree);
  std::string cache;
  torch_cu130()(tree, site, cache);
  make_system_library(tree, cache, "/lib/x86_64-linux-gnu", "libcudnn.so.9", "9.14.0");
  const SystemSnapshot s = probe_frameworks(tree, {.driver = "580.159.04", .gpus = {k_h200}},
                                            {{"PATH", "/opt/torch/.venv/bin:/usr/bin"}});
  const std::vector<CheckResult> results = run_check(fw_pytorch_check(), s);
  ASSERT_EQ(results.size(), 1U);
  ASSERT_EQ(results[0].findings.size(), 1U);
  EXPECT_EQ(results[0].findings[0].message,
            "PyTorch 2.11.0+cu130 in /opt/torch/.venv loads its own cuDNN 9.19.0 (" + k_site +
                "/nvidia/cudnn/lib/libcudnn.so.9); also installed, and not used by it: cuDNN "
                "9.14.0 at /lib/x86_64-linux-gnu/libcudnn.so.9");
  EXPECT_EQ(results[0].findings[0].severity, Severity::info);
}

TEST(FrameworkChecks, SeveralEnvironmentsAreReportedEachOnItsOwn) {
  FixtureTree tree;
  std::string cache;
  torch_cu130()(tree, make_venv(tree), cache);
  const std::string cpu_site = make_venv(tree, "/srv/cpu");
  make_torch(tree, cpu_site, "2.11.0+cpu", std::nullopt);
  const SystemSnapshot s =
      probe_frameworks(tree, {.driver = "580.159.04", .gpus = {k_h200}},
                       {{"PATH", "/opt/torch/.venv/bin:/usr/bin"}, {"VIRTUAL_ENV", "/srv/cpu"}});
  const std::vector<CheckResult> results = run_check(fw_pytorch_check(), s);
  ASSERT_EQ(results.size(), 2U);
  EXPECT_EQ(results[0].status, Status::pass);
  EXPECT_TRUE(results[0].summary.starts_with("PyTorch 2.11.0+cu130 in /opt/torch/.venv"))
      << results[0].summary;
  EXPECT_EQ(results[1].status, Status::warn);
  EXPECT_TRUE(results[1].summary.starts_with("PyTorch 2.11.0+cpu in /srv/cpu"))
      << results[1].summary;
  EXPECT_EQ(codes_of(results[1]), std::vector<std::string>{"fw.cpu_only_build"});
  const std::vector<CheckResult> envs = run_check(fw_environments_check(), s);
  ASSERT_EQ(envs.size(), 2U);
  EXPECT_EQ(run_check(fw_tensorflow_check(), s).at(0).status, Status::skip);
}

TEST(FrameworkChecks, ImportResultsAreJudged) {
  SystemSnapshot s = compat::testing::make_snapshot({.driver = "580.159.04", .gpus = {k_h200}});
  PythonEnvironment env;
  env.interpreter = "/opt/torch/.venv/bin/python3";
  env.prefix = k_venv;
  auto add = [&](FrameworkImport result) { env.imports.push_back(std::move(result)); };
  add({.framework = "pytorch",
       .version = "2.11.0+cu130",
       .gpu_available = true,
       .device_count = 1,
       .op_ok = true,
       .seconds = 2.0});
  add({.framework = "tensorflow", .failure = timed_out(120)});
  add({.framework = "jax",
       .failure = crashed("SIGSEGV", 11,
                          "Fatal Python error: Segmentation "
                          "fault\n")});
  add({.framework = "pytorch", .error = "ImportError: libcudnn.so.9: cannot open shared object"});
  add({.framework = "pytorch",
       .version = "2.11.0+cu130",
       .gpu_available = false,
       .device_count = 0});
  add({.framework = "pytorch",
       .version = "2.11.0+cu130",
       .gpu_available = true,
       .device_count = 1,
       .op_ok = false});
  s.python_environments.push_back(env);
  const std::vector<CheckResult> results = run_check(fw_import_check(), s);
  ASSERT_EQ(results.size(), 6U);
  EXPECT_EQ(codes_of(results[0]), std::vector<std::string>{});
  EXPECT_EQ(results[0].metrics.at(0).value, 2.0);
  EXPECT_EQ(codes_of(results[1]), std::vector<std::string>{"fw.import_hung"});
  EXPECT_EQ(codes_of(results[2]), std::vector<std::string>{"fw.import_crashed"});
  EXPECT_NE(results[2].findings[0].message.find("Fatal Python error"), std::string::npos);
  EXPECT_EQ(codes_of(results[3]), std::vector<std::string>{"fw.import_failed"});
  EXPECT_EQ(codes_of(results[4]), std::vector<std::string>{"fw.import_no_gpu"});
  EXPECT_EQ(codes_of(results[5]), std::vector<std::string>{"fw.import_op_failed"});
  s.python_environments.clear();
  EXPECT_EQ(run_check(fw_import_check(), s).at(0).status, Status::skip);
}

// ONNX Runtime and TensorRT say whether they use the GPU, not how many GPUs they see; the CPU
// package of ONNX Runtime (its files say it has no CUDA provider) sees no GPU by design and adds
// no failure, where the GPU package that fell back to the CPU is one (issue 35).
TEST(FrameworkChecks, ImportsOfFrameworksWithoutADeviceCount) {
  SystemSnapshot s = compat::testing::make_snapshot({.driver = "580.159.04", .gpus = {k_h200}});
  PythonEnvironment env;
  env.interpreter = "/opt/torch/.venv/bin/python3";
  env.prefix = k_venv;
  const auto run = [&](bool cpu_package, std::optional<bool> gpu, std::optional<bool> op) {
    env.frameworks = {{.name = "onnxruntime",
                       .distribution = cpu_package ? "onnxruntime" : "onnxruntime-gpu",
                       .version = "1.30.0",
                       .cuda = cpu_package ? std::nullopt : std::optional<std::string>("13.0")}};
    env.imports = {{.framework = "onnxruntime",
                    .version = "1.30.0",
                    .gpu_available = gpu,
                    .op_ok = op,
                    .seconds = 0.5}};
    s.python_environments = {env};
    return run_check(fw_import_check(), s).at(0);
  };
  const CheckResult working = run(false, true, true);
  EXPECT_EQ(codes_of(working), std::vector<std::string>{});
  EXPECT_NE(working.summary.find("ONNX Runtime 1.30.0, uses the GPU, tiny op ok"),
            std::string::npos)
      << working.summary;
  const CheckResult cpu_package = run(true, false, std::nullopt);
  EXPECT_EQ(codes_of(cpu_package), std::vector<std::string>{});
  EXPECT_NE(cpu_package.summary.find("sees no GPU (a CPU-only build"), std::string::npos)
      << cpu_package.summary;
  EXPECT_EQ(codes_of(run(false, false, std::nullopt)),
            std::vector<std::string>{"fw.import_no_gpu"});
}

TEST(FrameworkChecks, ImportedArchListOverridesTheMatrix) {
  FixtureTree tree;
  std::string cache;
  torch_cu130()(tree, make_venv(tree), cache);
  SystemSnapshot s = probe_frameworks(tree, {.driver = "580.159.04", .gpus = {k_h200}},
                                      {{"PATH", "/opt/torch/.venv/bin"}});
  // A custom build that says it has no sm_90: the framework's own word wins.
  s.python_environments.at(0).imports.push_back(
      {.framework = "pytorch", .gpu_available = true, .arch_list = {"sm_80", "sm_86"}});
  const std::vector<CheckResult> results = run_check(fw_pytorch_check(), s);
  ASSERT_EQ(codes_of(results.at(0)), std::vector<std::string>{"fw.gpu_not_covered"});
  EXPECT_NE(results[0].findings[0].message.find("torch.cuda.get_arch_list()"), std::string::npos);
}

} // namespace
} // namespace gpucheck::checks

namespace gpucheck::checks {
namespace {

TEST(FrameworkEnvironments, MissingInterpreterAndSilentInterpreterAreReported) {
  FixtureTree tree;
  make_venv(tree);
  const probes::Sysroot root(tree.root());
  const probes::Environment env(Vars{{"PATH", "/opt/torch/.venv/bin"}});
  const auto candidates = probes::find_python_candidates(root, env, {"/missing/bin/python3"});
  const ChildFailure hung{
      .kind = ChildFailureKind::timeout, .timeout_s = 2.0, .detail = "killed after 2 s"};
  SystemSnapshot s;
  s.python_environments =
      probes::build_python_environments(root, env, candidates, {}, {hung, std::nullopt});
  const std::vector<CheckResult> results = run_check(fw_environments_check(), s);
  ASSERT_EQ(results.size(), 2U);
  EXPECT_EQ(codes_of(results[0]), std::vector<std::string>{"fw.interpreter_failed"});
  EXPECT_EQ(results[0].findings[0].message,
            "Python interpreter /opt/torch/.venv/bin/python3 did not answer (killed after 2 s); "
            "its environment was read from its directory layout");
  EXPECT_EQ(codes_of(results[1]), std::vector<std::string>{"fw.python_not_found"});
  EXPECT_EQ(results[1].status, Status::warn);
  EXPECT_EQ(run_check(fw_environments_check(), SystemSnapshot{}).at(0).status, Status::skip);
}

} // namespace
} // namespace gpucheck::checks
