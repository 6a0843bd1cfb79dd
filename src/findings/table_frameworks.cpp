#include "findings/tables.hpp"

namespace gpucheck {

// Python framework findings, made by src/checks/fw/. In every spec {0} is the
// subject: the framework, its version and the environment ("PyTorch 2.11.0+cu130 in
// /opt/torch/.venv"), except for the interpreter findings, where {0} is the interpreter.
// Remedies are derived from the compatibility matrix by the rules, never guessed.
namespace {
// What recurring arguments stand for (FindingSpec::placeholders).
constexpr std::string_view k_subject =
    "the framework, its version and environment (\"PyTorch 2.11.0+cu130 in /opt/torch/.venv\")";
} // namespace

// One table, one entry per code: longer than 80 lines because it is data, read in one place.
std::span<const FindingSpec> findings_frameworks() {
  static constexpr FindingSpec k_specs[] = {
      {codes::k_fw_build_unknown, Severity::info, "framework build unknown to the matrix",
       "The framework release or build variant is not in the bundled compatibility data (a "
       "source build, a newer release, or a release whose architecture list the data does not "
       "have), so what the data would say about it was not judged.",
       "{0}: {1} is not in compatibility matrix {2}; that part was not judged",
       "Update gpucheck or pass a newer data file with --matrix FILE; run with --import to ask "
       "the framework itself.",
       where(k_subject,
             "the build the matrix does not list (\"PyTorch 2.11 cu130\", \"jax[cuda12]\")",
             "version of the compatibility matrix")},
      {codes::k_fw_cpu_only_build, Severity::warn, "CPU-only framework build on a GPU machine",
       "The installed build has no CUDA support (a +cpu PyTorch wheel, tensorflow-cpu, or JAX "
       "without a CUDA plugin). It runs, but only on the CPU, without an error.",
       "{0} is a CPU-only build, on a machine with {1}: it will not use the GPU",
       "Install a CUDA build that fits this driver and GPU: {2}",
       where(k_subject, "the GPUs present",
             "install command of a CUDA build that fits this driver and GPU")},
      {codes::k_fw_cudnn_mismatch, Severity::fail, "framework loads an incompatible cuDNN",
       "A framework is built against one cuDNN major version and checks it at first use; a cuDNN "
       "of another major (or outside the range the framework accepts) makes cuDNN operations "
       "fail (PyTorch: 'cuDNN version incompatibility'; JAX: its start-up version check).",
       "{0} loads cuDNN {1} ({2}) but needs cuDNN {3}", "{4}",
       where(k_subject, "cuDNN version loaded", "path of the cuDNN loaded",
             "the cuDNN versions the build needs",
             "what to do (drop an LD_LIBRARY_PATH copy, or the cuDNN wheel to install)")},
      {codes::k_fw_cudnn_older, Severity::warn, "framework loads an older cuDNN than its own",
       "The cuDNN that loads has the right major version but is older than the one the "
       "framework release was built and tested with; operations that need the newer cuDNN fail "
       "or fall back to slower kernels.",
       "{0} loads cuDNN {1} ({2}), older than the cuDNN {3} it was released with", "{4}",
       where(k_subject, "cuDNN version loaded", "path of the cuDNN loaded",
             "the cuDNN the release was built with",
             "what to do (drop an LD_LIBRARY_PATH copy, or the cuDNN wheel to install)")},
      {codes::k_fw_driver_too_old, Severity::fail, "driver too old for the framework's CUDA",
       "The framework's CUDA build needs a newer driver than the one installed, even through "
       "minor-version compatibility; it cannot use the GPU (torch.cuda.is_available() is False, "
       "cudaErrorInsufficientDriver).",
       "{0} is built for CUDA {1}, which needs NVIDIA driver >= {2}; driver {3} supports CUDA up "
       "to {4}{6}",
       "Install NVIDIA driver >= {2}, or install a build this driver runs: {5}",
       where(k_subject, "CUDA version the build is for", "the driver it needs", "driver installed",
             "newest CUDA that driver supports",
             "a build this driver runs, with its install command",
             "a note when the matrix has not confirmed the minimum driver, or empty")},
      {codes::k_fw_gpu_libraries_missing, Severity::fail,
       "GPU libraries of the framework not found",
       "ONNX Runtime's CUDA provider, TensorRT's libnvinfer and CuPy load CUDA (and cuDNN) "
       "libraries of one major version by SONAME, and unlike PyTorch they do not bring their own "
       "copies onto the loader path. None of these copies is in LD_LIBRARY_PATH, the RUNPATH, "
       "the loader cache, the default directories or the environment's nvidia-* wheels: ONNX "
       "Runtime falls back to the CPU ('Failed to create CUDAExecutionProvider'), TensorRT and "
       "CuPy fail at first use.",
       "{0} needs {1}; the loader does not find {2} (searched {3}), nor does this environment "
       "have it",
       "{4}",
       where(k_subject, "the CUDA and cuDNN majors needed (\"CUDA 12 and cuDNN 9\")",
             "the SONAMEs not found", "where the loader looked",
             "what to install (the nvidia-* wheels or a build for this machine's CUDA)")},
      {codes::k_fw_gpu_libraries_off_path, Severity::warn,
       "GPU libraries of the framework only where the loader does not look",
       "The CUDA (and cuDNN) libraries the framework needs are installed in this environment's "
       "nvidia-* wheels (site-packages/nvidia/*/lib), which the dynamic loader does not search; "
       "they load only when something loads them first (torch's import does, and "
       "onnxruntime.preload_dlls() since ONNX Runtime 1.19). Without that, ONNX Runtime falls "
       "back to the CPU and TensorRT or CuPy fail at first use.",
       "{0} needs {1}; the loader does not find {2} (searched {4}), but this environment has "
       "{3}, where the loader does not look",
       "{5}",
       where(k_subject, "the CUDA and cuDNN majors needed (\"CUDA 12 and cuDNN 9\")",
             "the SONAMEs the loader does not find", "the copies in the environment's wheels",
             "where the loader looked",
             "what to do (preload_dlls(), import torch first, or the LD_LIBRARY_PATH entries)")},
      {codes::k_fw_gpu_not_covered, Severity::fail, "framework has no kernels for a GPU",
       "The framework build carries compiled kernels (SASS) for a list of GPU architectures and "
       "at most PTX for the newest; a GPU outside that list fails with 'no kernel image is "
       "available for execution on the device' (or the framework refuses it).",
       "{0} cannot run on GPU {1} ({2}): it ships {3} (from {4})", "{5}",
       where(k_subject, "GPU name", "the GPU's architecture (sm_XX)",
             "the architectures the build ships", "where that list comes from",
             "what to do (a build for this GPU, or another GPU)")},
      {codes::k_fw_gpu_ptx_only, Severity::info, "GPU runs the framework through PTX JIT",
       "The build has no compiled kernels for this GPU but carries PTX for an older "
       "architecture, which the driver JIT-compiles at first use: slow first start, then cached.",
       "{0} has no compiled kernels for GPU {1} ({2}); it runs the PTX it ships for {3}, "
       "JIT-compiled on first use",
       "Nothing is required; a build with native {2} kernels starts faster.",
       where(k_subject, "GPU name", "the GPU's architecture (sm_XX)",
             "the architecture of the PTX the build ships")},
      {codes::k_fw_import_crashed, Severity::fail,
       "importing the framework crashed the interpreter",
       "The child interpreter that imported the framework died (a signal or an exit without a "
       "result). A crash at import is most often two incompatible copies of a CUDA library in "
       "one process.",
       "importing {0} crashed the interpreter: {1}",
       "Run the import by hand (python -c 'import torch', 'import tensorflow', 'import jax') to "
       "see the error, and compare the library findings of this framework: a copy from "
       "LD_LIBRARY_PATH or the system mixed with the framework's own is the usual cause.",
       where(k_subject, "how the interpreter ended (signal or status) and its last output line")},
      {codes::k_fw_import_failed, Severity::fail, "importing the framework failed",
       "The framework raised an exception at import (ImportError for a missing or wrong "
       "library, an undefined symbol from a mismatched copy).",
       "importing {0} failed: {1}",
       "The error names the library or symbol; the library findings of this framework say which "
       "copy the loader finds. Reinstalling the framework with its CUDA dependencies restores "
       "its own copies.",
       where(k_subject, "the error the import raised")},
      {codes::k_fw_import_hung, Severity::fail, "importing the framework did not finish",
       "The child interpreter did not finish the import and one tiny GPU operation within its "
       "deadline: a hang at CUDA initialisation (driver, MIG, persistence) or a very slow "
       "first-time PTX JIT.",
       "importing {0} and running one tiny GPU operation did not finish within {1} s",
       "Check the driver and CUDA initialisation findings; run the import by hand to see where "
       "it stops (a first start that JIT-compiles PTX can take minutes once).",
       where(k_subject, "the time limit in seconds")},
      {codes::k_fw_import_no_gpu, Severity::fail, "framework imports but sees no GPU",
       "The framework imported, but reports no usable GPU although the machine has one: its "
       "CUDA build cannot initialise with this driver, or CUDA_VISIBLE_DEVICES hides the GPUs.",
       "{0} imports but sees no GPU ({1})",
       "See the driver and CUDA findings above (cuda.init, fw.driver_too_old); check "
       "CUDA_VISIBLE_DEVICES in the environment that runs the framework.",
       where(k_subject, "the device count the framework reports")},
      {codes::k_fw_import_op_failed, Severity::fail, "a tiny GPU operation failed in the framework",
       "The framework sees the GPU, but adding 64 numbers on it failed or gave a wrong answer.",
       "{0} sees the GPU but a tiny operation on it failed: {1}",
       "Read the error; 'no kernel image' means an architecture mismatch (fw.gpu_not_covered), "
       "a cuDNN/cuBLAS error means a mismatched library (fw.library_shadowed).",
       where(k_subject, "the error, or that the result was wrong")},
      {codes::k_fw_jax_plugin_mismatch, Severity::fail, "JAX CUDA plugin does not match jaxlib",
       "The JAX CUDA plugin and PJRT packages must have the same version as jaxlib; otherwise "
       "JAX does not load the plugin and falls back to the CPU (or fails at start-up).",
       "{0}: {1} does not match jaxlib {2}",
       "Install matching versions: pip install \"jax[{3}]=={2}\"",
       where(k_subject, "the CUDA plugin and its version", "jaxlib version",
             "the jax extra (\"cuda12\")")},
      {codes::k_fw_library_missing, Severity::fail, "framework's CUDA library not found",
       "The framework needs a CUDA library that the dynamic loader cannot find in "
       "LD_LIBRARY_PATH, the framework's RUNPATH (its pip nvidia-* dependencies), the loader "
       "cache or the default directories: the import or the first GPU use fails.",
       "{0} needs {1} ({2}) and the loader finds it nowhere ({3})", "{4}",
       where(k_subject, "soname looked for (\"libcudnn.so.9\")", "the library (\"cuDNN\")",
             "where the loader looked", "what to do: the reinstall command")},
      {codes::k_fw_library_shadowed, Severity::warn,
       "LD_LIBRARY_PATH shadows the framework's library",
       "LD_LIBRARY_PATH is searched before a library's RUNPATH, so a copy there replaces the "
       "one the framework ships in its nvidia-* wheel. A different version can break the "
       "framework at import or at first use, or silently lose features.",
       "{0} loads {1} {2} from {3} (LD_LIBRARY_PATH) instead of its own {1} {4} at {5}",
       "Remove {6} from LD_LIBRARY_PATH in the environment that runs Python (or unset it before "
       "starting Python), so that it loads its own copy.",
       where(k_subject, "the library (\"cuDNN\")", "version loaded", "path loaded",
             "version of the framework's own copy", "path of the framework's own copy",
             "the LD_LIBRARY_PATH directory to remove")},
      {codes::k_fw_minor_version_compat, Severity::info,
       "framework runs through minor-version compatibility",
       "The framework's CUDA is newer than the driver's, within the same major family whose "
       "minimum driver is met: it runs, but features that need a newer driver fail with "
       "cudaErrorCallRequiresNewerDriver and PTX from the newer toolkit cannot be JIT-compiled.",
       "{0} (CUDA {1}) runs on driver {2} (CUDA {3}) through minor-version compatibility",
       "Nothing is required; to lift the caveats install NVIDIA driver >= {4}.",
       where(k_subject, "CUDA version the build is for", "driver installed",
             "newest CUDA that driver supports", "the driver that runs the build natively")},
      {codes::k_fw_system_copy_unused, Severity::info, "another copy of a library is not used",
       "The framework loads its own copy of a CUDA library; another copy installed on the "
       "system is not used by it. Programs that use the system search path get that other copy.",
       "{0} loads its own {1} {2} ({3}); also installed, and not used by it: {4}",
       "Nothing to do for the framework.",
       where(k_subject, "the library (\"cuDNN\")", "version loaded", "path loaded",
             "the other copies installed (version and path)")},
      {codes::k_fw_torchvision_mismatch, Severity::warn,
       "torchvision built for another PyTorch variant",
       "torchvision's compiled operators are built against one PyTorch build variant (cu126, "
       "cu130, cpu); with another torch variant they fail to load ('Couldn't load custom C++ "
       "ops', undefined symbols) or run on the wrong device.",
       "{0}: torchvision {1} is the {2} build, but torch is the {3} build",
       "Install the same torchvision release built for {3}: {4}",
       where(k_subject, "torchvision version", "its variant (\"cu121\", \"cpu\")",
             "torch's variant", "install command of the matching torchvision")},
  };
  return k_specs;
}

} // namespace gpucheck
