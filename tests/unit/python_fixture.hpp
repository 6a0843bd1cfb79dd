#pragma once
/// Synthetic Python environments for the framework tests: a venv layout, dist-info metadata,
/// torch/version.py, TensorFlow's build_info.py, JAX plugins and nvidia-* wheels with empty
/// library files of the right names (or real ELF headers where RUNPATH matters).

#include <optional>
#include <string>
#include <vector>

#include "support/elf_writer.hpp"
#include "support/fixture_tree.hpp"

namespace gpucheck::testing {

inline const std::string k_venv = "/opt/torch/.venv";
inline const std::string k_site = "/opt/torch/.venv/lib/python3.12/site-packages";

/// A venv at `prefix` with bin/python3 and an empty site-packages for Python 3.12.
inline std::string make_venv(FixtureTree& tree, const std::string& prefix = k_venv) {
  const std::string site = prefix + "/lib/python3.12/site-packages";
  tree.file(prefix + "/pyvenv.cfg",
            "home = /usr/bin\ninclude-system-site-packages = false\nversion = 3.12.3\n")
      .file(prefix + "/bin/python3", "#!/bin/sh\nexit 1\n", 0755)
      .dir(site);
  return site;
}

/// <name>-<version>.dist-info with METADATA and a RECORD listing `files`.
inline void make_dist(FixtureTree& tree, const std::string& site, const std::string& name,
                      const std::string& version, const std::vector<std::string>& files = {}) {
  std::string dir_name = name;
  for (char& c : dir_name) {
    if (c == '-') {
      c = '_';
    }
  }
  const std::string dir = site + "/" + dir_name + "-" + version + ".dist-info";
  tree.file(dir + "/METADATA", "Metadata-Version: 2.1\nName: " + name + "\nVersion: " + version +
                                   "\nSummary: test\n\nName: not-a-header\n");
  std::string record;
  for (const std::string& file : files) {
    record += file + ",sha256=AAAA,1\n";
  }
  record += dir_name + "-" + version + ".dist-info/METADATA,,\n";
  tree.file(dir + "/RECORD", record);
}

/// An nvidia-* wheel: its metadata and its library files under nvidia/<subdir>/lib.
inline void make_nvidia_wheel(FixtureTree& tree, const std::string& site, const std::string& name,
                              const std::string& version, const std::string& subdir,
                              const std::vector<std::string>& libraries) {
  std::vector<std::string> files;
  for (const std::string& library : libraries) {
    const std::string relative = "nvidia/" + subdir + "/lib/" + library;
    tree.file(site + "/" + relative, "wheel library");
    files.push_back(relative);
  }
  make_dist(tree, site, name, version, files);
}

/// torch at `version`; `cuda` nullopt is a CPU-only build. `elf` (if set) becomes a real
/// torch/lib/libtorch_cuda.so with that dynamic section; otherwise an empty file is written.
inline void make_torch(FixtureTree& tree, const std::string& site, const std::string& version,
                       const std::optional<std::string>& cuda,
                       const std::optional<ElfSpec>& elf = std::nullopt) {
  make_dist(tree, site, "torch", version);
  tree.file(site + "/torch/version.py",
            "from typing import Optional\n\n__all__ = ['__version__', 'debug', 'cuda', "
            "'git_version', 'hip']\n__version__ = '" +
                version + "'\ndebug = False\ncuda: Optional[str] = " +
                (cuda ? "'" + *cuda + "'" : std::string("None")) +
                "\ngit_version = '0123456789abcdef0123456789abcdef01234567'\nhip: "
                "Optional[str] = None\n");
  if (cuda) {
    tree.file(site + "/torch/lib/libtorch_cuda.so", elf ? make_elf_object(*elf) : std::string());
  }
  tree.file(site + "/torch/lib/libtorch_cpu.so", "");
}

/// The CUDA 13 wheels torch 2.11+cu130 depends on: nvidia/cu13/lib (runtime, cuBLAS) and
/// nvidia/cudnn/lib, nvidia/nccl/lib.
inline void make_cu13_wheels(FixtureTree& tree, const std::string& site,
                             const std::string& cudnn = "9.19.0.56") {
  make_nvidia_wheel(tree, site, "nvidia-cuda-runtime", "13.0.96", "cu13", {"libcudart.so.13"});
  make_nvidia_wheel(tree, site, "nvidia-cublas", "13.1.0.3", "cu13",
                    {"libcublas.so.13", "libcublasLt.so.13"});
  make_nvidia_wheel(tree, site, "nvidia-cudnn-cu13", cudnn, "cudnn",
                    {"libcudnn.so.9", "libcudnn_graph.so.9"});
  make_nvidia_wheel(tree, site, "nvidia-nccl-cu13", "2.28.9", "nccl", {"libnccl.so.2"});
}

/// The CUDA 12 (or 11) wheels: nvidia/<lib>/lib per library.
inline void make_cu12_wheels(FixtureTree& tree, const std::string& site, const std::string& cudnn,
                             const std::string& runtime = "12.8.90", int major = 12) {
  const std::string cu = "-cu" + std::to_string(major);
  const std::string suffix = major <= 11 ? "11.0" : std::to_string(major);
  make_nvidia_wheel(tree, site, "nvidia-cuda-runtime" + cu, runtime, "cuda_runtime",
                    {"libcudart.so." + suffix});
  make_nvidia_wheel(tree, site, "nvidia-cublas" + cu, runtime, "cublas",
                    {"libcublas.so." + std::to_string(major)});
  make_nvidia_wheel(tree, site, "nvidia-cudnn" + cu, cudnn, "cudnn",
                    {"libcudnn.so." + cudnn.substr(0, cudnn.find('.'))});
  make_nvidia_wheel(tree, site, "nvidia-nccl" + cu, "2.21.5", "nccl", {"libnccl.so.2"});
}

/// The CUDA 12 wheels CuPy loads (cupy-cuda12x[ctk]): runtime, NVRTC, cuBLAS.
inline void make_cupy_cu12_wheels(FixtureTree& tree, const std::string& site) {
  make_nvidia_wheel(tree, site, "nvidia-cuda-runtime-cu12", "12.6.77", "cuda_runtime",
                    {"libcudart.so.12"});
  make_nvidia_wheel(tree, site, "nvidia-cuda-nvrtc-cu12", "12.6.85", "cuda_nvrtc",
                    {"libnvrtc.so.12"});
  make_nvidia_wheel(tree, site, "nvidia-cublas-cu12", "12.6.4.1", "cublas",
                    {"libcublas.so.12", "libcublasLt.so.12"});
}

/// onnxruntime-gpu at `version`: its metadata, capi/build_and_package_info.py (when `cuda` is
/// set) and a CUDA provider library whose DT_NEEDED is `needed` (RUNPATH $ORIGIN, as the wheels
/// have it), plus the TensorRT provider file.
inline void make_onnxruntime_gpu(FixtureTree& tree, const std::string& site,
                                 const std::string& version, const std::vector<std::string>& needed,
                                 const std::string& cuda = "", const std::string& cudnn = "") {
  make_dist(tree, site, "onnxruntime-gpu", version);
  std::string info = "package_name = 'onnxruntime-gpu'\n__version__ = '" + version + "'\n";
  if (!cuda.empty()) {
    info += "cuda_version = '" + cuda + "'\n";
  }
  if (!cudnn.empty()) {
    info += "cudnn_version = '" + cudnn + "'\n";
  }
  tree.file(site + "/onnxruntime/capi/build_and_package_info.py", info);
  std::vector<std::string> all{"libonnxruntime_providers_shared.so"};
  all.insert(all.end(), needed.begin(), needed.end());
  all.push_back("libstdc++.so.6");
  tree.file(
      site + "/onnxruntime/capi/libonnxruntime_providers_cuda.so",
      make_elf_object(
          {.soname = "libonnxruntime_providers_cuda.so", .needed = all, .runpath = "$ORIGIN"}));
  tree.file(site + "/onnxruntime/capi/libonnxruntime_providers_shared.so",
            make_elf_object({.soname = "libonnxruntime_providers_shared.so"}));
  tree.file(site + "/onnxruntime/capi/libonnxruntime_providers_tensorrt.so",
            make_elf_object({.soname = "libonnxruntime_providers_tensorrt.so",
                             .needed = {"libnvinfer.so.10", "libcudart.so.12"},
                             .runpath = "$ORIGIN"}));
}

/// The CUDA 12 cuBLAS, cuDNN 9 and CUDA runtime wheels onnxruntime-gpu 1.19+ asks for
/// (onnxruntime-gpu[cuda,cudnn]), in site-packages/nvidia/*/lib.
inline void make_ort_cu12_wheels(FixtureTree& tree, const std::string& site) {
  make_nvidia_wheel(tree, site, "nvidia-cuda-runtime-cu12", "12.6.77", "cuda_runtime",
                    {"libcudart.so.12"});
  make_nvidia_wheel(tree, site, "nvidia-cublas-cu12", "12.6.4.1", "cublas",
                    {"libcublas.so.12", "libcublasLt.so.12"});
  make_nvidia_wheel(tree, site, "nvidia-cudnn-cu12", "9.5.1.17", "cudnn", {"libcudnn.so.9"});
}

/// A TensorRT wheel set: `dist` metadata (tensorrt-cu12) and tensorrt_libs/libnvinfer.so.<major>
/// with DT_NEEDED `needed` and RUNPATH $ORIGIN.
inline void make_tensorrt(FixtureTree& tree, const std::string& site, const std::string& dist,
                          const std::string& version, const std::vector<std::string>& needed) {
  make_dist(tree, site, dist, version);
  make_dist(tree, site, dist + "-libs", version);
  const std::string soname = "libnvinfer.so." + version.substr(0, version.find('.'));
  tree.file(site + "/tensorrt_libs/" + soname,
            make_elf_object({.soname = soname, .needed = needed, .runpath = "$ORIGIN"}));
  tree.file(site + "/tensorrt_libs/__init__.py", "");
}

/// A system library file with its SONAME symlink, listed in the fixture's loader cache.
inline void make_system_library(FixtureTree& tree, std::string& cache, const std::string& dir,
                                const std::string& soname, const std::string& version) {
  tree.file(dir + "/" + soname.substr(0, soname.find(".so") + 3) + "." + version, "system")
      .symlink(dir + "/" + soname, soname.substr(0, soname.find(".so") + 3) + "." + version);
  cache += "\t" + soname + " (libc6,x86-64) => " + dir + "/" + soname + "\n";
  tree.file("/etc/ld.so.cache.txt", "1 libs found in cache `/etc/ld.so.cache'\n" + cache);
}

} // namespace gpucheck::testing
