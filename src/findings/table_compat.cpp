#include "findings/tables.hpp"

namespace gpucheck {

// Compatibility-matrix findings, made by the rules in src/compat/*_rules.cpp.
// where(...) in each spec says what its positional arguments stand for; a trailing "{N}" note
// (k_unconfirmed) is "" or " (unconfirmed: ...)" when the verdict relies on an [unverified]
// matrix entry.
namespace {
// What recurring arguments stand for (FindingSpec::placeholders).
constexpr std::string_view k_build =
    "the build judged (\"CUDA runtime 13.0.88 (/usr/lib/libcudart.so.13)\")";
constexpr std::string_view k_compat_libcuda = "path of the forward-compatibility libcuda loaded";
constexpr std::string_view k_gpu = "the GPU (\"GPU 0: NVIDIA A100-SXM4-80GB\")";
constexpr std::string_view k_unconfirmed = "\" (unconfirmed: ...)\" when the verdict rests on a "
                                           "matrix entry marked [unverified], else empty";
} // namespace

// One table, one entry per code: longer than 80 lines because it is data, read in one place.
std::span<const FindingSpec> findings_compat() {
  static constexpr FindingSpec k_specs[] = {
      {codes::k_compat_driver_unknown, Severity::info, "driver unknown to the compatibility matrix",
       "The installed driver belongs to a branch newer than any the bundled compatibility data "
       "knows. Newer drivers run software built for older CUDA releases (backward "
       "compatibility), so gpucheck does not fail it; it only cannot name what is new.",
       "driver {0} is unknown to this matrix ({1}; newest known branch R{2}); assuming backward "
       "compatibility with every CUDA release the matrix knows",
       "Update gpucheck, or pass a newer data file with --matrix FILE, to judge this driver.",
       where("driver version installed", "version of the compatibility matrix",
             "newest driver branch the matrix knows")},
      {codes::k_compat_driver_too_old, Severity::fail, "driver too old for a CUDA build",
       "A CUDA build needs a driver that supports its CUDA version, either directly or through "
       "minor-version compatibility (CUDA 11 and newer, from the family's minimum driver). "
       "Otherwise CUDA calls fail with cudaErrorInsufficientDriver (35).",
       "{0} needs CUDA {1}, which needs NVIDIA driver >= {2}; driver {3} supports CUDA up to "
       "{4}{5}",
       "Install NVIDIA driver >= {2}, or use a build made for CUDA {4} or older.",
       where(k_build, "its CUDA version", "the driver that CUDA version needs", "driver installed",
             "newest CUDA that driver supports", k_unconfirmed)},
      {codes::k_compat_minor_version_compat, Severity::info,
       "runs through minor-version compatibility",
       "The build is newer than the CUDA version the driver supports, but within the same major "
       "family, whose minimum driver is met. It runs, with NVIDIA's caveats: features that need "
       "a newer driver return cudaErrorCallRequiresNewerDriver, and PTX produced by the newer "
       "toolkit cannot be JIT-compiled by the older driver (cudaErrorUnsupportedPtxVersion, 222).",
       "{0} (CUDA {1}) is newer than the CUDA {3} that driver {2} supports; it runs through "
       "minor-version compatibility (CUDA {1} needs >= {4}), with caveats: features that need a "
       "newer driver fail with cudaErrorCallRequiresNewerDriver, and PTX from the newer toolkit "
       "cannot be JIT-compiled by this driver (cudaErrorUnsupportedPtxVersion, 222){6}",
       "Nothing is required. To lift the caveats, install driver >= {5}; ship SASS for your GPUs "
       "(nvcc -arch=sm_XX), not PTX only.",
       where(k_build, "its CUDA version", "driver installed", "newest CUDA that driver supports",
             "the minor-version-compatibility floor driver for that CUDA",
             "the driver that supports that CUDA natively", k_unconfirmed)},
      {codes::k_compat_cuda_unknown, Severity::info, "CUDA version unknown to the matrix",
       "A CUDA build on this machine has a version the bundled compatibility data does not "
       "know, so its fit with the driver and GPUs cannot be judged.",
       "{0} is CUDA {1}, which compatibility matrix {2} cannot judge against driver {3}",
       "Update gpucheck, or pass a newer data file with --matrix FILE.",
       where("the build judged (a runtime, nvcc, or the forward-compatibility libcuda)",
             "its CUDA version", "version of the compatibility matrix", "driver installed")},
      {codes::k_compat_toolkit_minor_version, Severity::info, "nvcc newer than the driver's CUDA",
       "Binaries built with this toolkit run on this driver only through minor-version "
       "compatibility: they need SASS for the GPU; PTX-only builds fail to JIT.",
       "nvcc {0} (CUDA {1}) is newer than the CUDA {3} that driver {2} supports: binaries built "
       "here run only if they carry SASS for the GPU (nvcc -arch=sm_XX); PTX-only builds fail "
       "with cudaErrorUnsupportedPtxVersion (222){5}",
       "Build with -arch=sm_XX for your GPUs, or install driver >= {4}.",
       where("nvcc version", "its CUDA version", "driver installed",
             "newest CUDA that driver supports", "the driver that supports that CUDA natively",
             k_unconfirmed)},
      {codes::k_compat_toolkit_too_new, Severity::warn,
       "nvcc builds binaries the driver cannot run",
       "The installed toolkit is newer than anything this driver can run, even through "
       "minor-version compatibility: whatever is built here fails at run time with "
       "cudaErrorInsufficientDriver.",
       "nvcc {0} (CUDA {1}) builds binaries that driver {2} cannot run: it supports CUDA up to "
       "{3}, and CUDA {1} needs >= {4}{5}",
       "Install NVIDIA driver >= {4}, or build with a CUDA {3} toolkit.",
       where("nvcc version", "its CUDA version", "driver installed",
             "newest CUDA that driver supports", "the driver that CUDA version needs",
             k_unconfirmed)},
      {codes::k_compat_gpu_unknown, Severity::info, "GPU unknown to the matrix",
       "The GPU's compute capability was not reported and its name or PCI id is not in the "
       "bundled data, or its compute capability is newer than the data; architecture checks "
       "were not done for it.",
       "{0}, {1}, PCI device {2}, is not in compatibility matrix {3}; its architecture was not "
       "judged",
       "Update gpucheck, or pass a newer data file with --matrix FILE.",
       where(k_gpu, "its architecture (sm_XX), or \"unknown compute capability\"",
             "its PCI device id", "version of the compatibility matrix")},
      {codes::k_compat_gpu_dropped_by_driver, Severity::fail,
       "GPU not supported by this driver branch",
       "Each GPU architecture has a last driver branch (Kepler: R470; Maxwell, Pascal, Volta: "
       "R580). Newer branches do not drive it.",
       "{0} ({1}, {2}) is not supported by driver {3}: R{4} is the last driver branch for {2}{5}",
       "Install an R{4} driver (the newest branch that still supports {2}), or move the work to a "
       "newer GPU.",
       where(k_gpu, "its architecture (sm_XX)", "its architecture's name (\"Volta\")",
             "driver installed", "the last driver branch that supports it", k_unconfirmed)},
      {codes::k_compat_gpu_arch_deprecated, Severity::info,
       "GPU architecture deprecated in this CUDA",
       "The CUDA release still targets this architecture but has announced its removal.",
       "{0} still targets {1} ({2}, {3}), but it is deprecated: {4}",
       "Plan ahead: the last CUDA major for {3} is {5}.",
       where(k_build, k_gpu, "its architecture (sm_XX)", "its architecture's name (\"Volta\")",
             "the matrix's note on the deprecation",
             "the last CUDA major for it, or \"not yet known\"")},
      {codes::k_compat_gpu_arch_removed, Severity::fail, "CUDA release cannot target this GPU",
       "Offline compilation and library support for the GPU's architecture were removed from "
       "this CUDA release: its libraries carry no code for the GPU.",
       "{0} cannot target {1} ({2}, {3}): support was removed; the last CUDA for it is {4}.x{5}",
       "Use a CUDA {4}.x toolkit and CUDA {4} builds of your libraries and frameworks for this "
       "GPU.",
       where(k_build, k_gpu, "its architecture (sm_XX)", "its architecture's name (\"Maxwell\")",
             "the last CUDA major for it", k_unconfirmed)},
      {codes::k_compat_gpu_arch_newer_than_toolkit, Severity::warn,
       "GPU newer than this CUDA release",
       "The CUDA release has no target for the GPU's architecture; code runs on it only as PTX "
       "JIT-compiled by the driver, when PTX is present.",
       "{0} has no target for {1} ({2}), first supported by CUDA {3}; code runs on it only "
       "through PTX JIT{4}",
       "Use CUDA {3} or newer for this GPU.",
       where(k_build, k_gpu, "its architecture (sm_XX)", "the first CUDA that supports it",
             k_unconfirmed)},
      {codes::k_compat_cudnn_arch_unsupported, Severity::fail, "cuDNN does not support this GPU",
       "The cuDNN release has no kernels for the GPU's architecture.",
       "cuDNN {0} does not support {1} ({2}): it supports compute capability {3} to {4}{5}",
       "Use a cuDNN release that supports {2}{6}.",
       where("cuDNN version", k_gpu, "its architecture (sm_XX)",
             "lowest compute capability that cuDNN supports",
             "highest compute capability that cuDNN supports", k_unconfirmed,
             "\" (for example cuDNN X)\": a release that supports it, or empty")},
      {codes::k_compat_cudnn_arch_newer, Severity::warn, "GPU newer than this cuDNN",
       "cuDNN 9 runs a subset of operation graphs on newer GPUs through hardware forward "
       "compatibility (PTX JIT); the rest fails.",
       "cuDNN {0} lists compute capabilities up to {3}; {1} ({2}) is newer and runs only "
       "through cuDNN's hardware forward compatibility (PTX JIT, a subset of operation graphs)",
       "Use a cuDNN release that lists {2}.",
       where("cuDNN version", k_gpu, "its architecture (sm_XX)",
             "highest compute capability that cuDNN lists")},
      {codes::k_compat_cudnn_arch_unconfirmed, Severity::info,
       "cuDNN architectures not in the matrix",
       "The bundled data has no architecture list for this cuDNN release; the verdict comes "
       "from the nearest releases that have one and is unconfirmed.",
       "the matrix has no architecture data for cuDNN {0}; for {1} ({2}): {3}; unconfirmed",
       "Check NVIDIA's cuDNN support matrix for {0}, or update gpucheck's matrix.",
       where("cuDNN version", k_gpu, "its architecture (sm_XX)",
             "what neighbouring cuDNN releases in the matrix say")},
      {codes::k_compat_forward_compat_conditional, Severity::warn,
       "forward compatibility may not serve this GPU",
       "Forward compatibility serves Data Center GPUs, Jetson, and only select NGC Server Ready "
       "SKUs of RTX cards; for other or unknown GPUs CUDA fails with "
       "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE (804).",
       "the forward-compatibility libcuda ({0}) is in use on {1}, a {2} GPU: forward "
       "compatibility serves only select NGC Server Ready SKUs of such cards; unconfirmed for "
       "this one",
       "If CUDA fails with error 804, remove {0} from the library path and install a newer "
       "driver instead.",
       where(
           k_compat_libcuda, k_gpu,
           "its product class in the matrix (geforce, workstation, rtx_server, ..., or unknown)")},
      {codes::k_compat_forward_compat_unsupported_gpu, Severity::fail,
       "forward compatibility unsupported on this GPU",
       "The cuda-compat package runs only on Data Center GPUs, select NGC Server Ready RTX SKUs "
       "and Jetson; elsewhere CUDA returns CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE (804).",
       "the forward-compatibility libcuda ({0}) is in use, but {1} is a {2} GPU; forward "
       "compatibility serves only Data Center GPUs, select NGC Server Ready RTX SKUs and Jetson, "
       "so CUDA fails with CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE (804)",
       "Remove {0} from the library path (LD_LIBRARY_PATH, ld.so.conf) and install a driver "
       "that supports CUDA {3} instead.",
       where(k_compat_libcuda, k_gpu,
             "its product class in the matrix (geforce, workstation, rtx_server, ..., or unknown)",
             "the CUDA version of the compat package")},
      {codes::k_compat_forward_compat_wrong_branch, Severity::fail,
       "forward-compatibility package on an unsupported driver branch",
       "Each cuda-compat package supports listed base driver branches only; a user-mode driver "
       "that does not match the kernel driver fails with CUDA_ERROR_SYSTEM_DRIVER_MISMATCH "
       "(803).",
       "the forward-compatibility libcuda for CUDA {1} ({0}) is not supported on kernel driver "
       "branch R{2}: {3}; expect CUDA_ERROR_SYSTEM_DRIVER_MISMATCH (803)",
       "Remove the compat libraries from the library path, or run them on a supported base "
       "branch ({4}).",
       where(k_compat_libcuda, "the CUDA version of the compat package",
             "the kernel driver's branch", "why that branch is not supported",
             "the branches it supports")},
      {codes::k_compat_forward_compat_not_needed, Severity::warn,
       "forward-compatibility package not needed",
       "The kernel driver already supports the package's CUDA version; older compat packages "
       "are not supported on newer drivers.",
       "the forward-compatibility libcuda for CUDA {1} ({0}) is loaded, but kernel driver branch "
       "R{2} already supports CUDA {1}",
       "Remove {3} (and {0} from the library path) after a full driver upgrade.",
       where(k_compat_libcuda, "the CUDA version of the compat package",
             "the kernel driver's branch", "the compat package (\"cuda-compat-12-8\")")},
      {codes::k_compat_forward_compat_ok, Severity::info, "forward compatibility in use",
       "A cuda-compat user-mode driver runs a newer CUDA on an older, supported kernel driver "
       "branch; a libcuda newer than the kernel module is intended here.",
       "the forward-compatibility libcuda ({0}) runs CUDA {1} on the R{2} kernel driver, a "
       "supported pairing",
       "nothing to do; keep the cuda-compat package matched to the CUDA {1} applications",
       where(k_compat_libcuda, "the CUDA version of the compat package",
             "the kernel driver's branch")},
      {codes::k_compat_what_runs, Severity::info, "what this machine can run",
       "The newest CUDA, framework builds and cuDNN releases that fit this driver and every GPU "
       "present, from the bundled compatibility data (`gpucheck matrix` shows the details).",
       "{0}", "nothing to do; `gpucheck matrix` lists the builds and versions in detail",
       where("one line: the newest CUDA, frameworks and cuDNN this machine runs")},
  };
  return k_specs;
}

} // namespace gpucheck
