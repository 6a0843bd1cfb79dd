#pragma once
/// The environment variables gpucheck records, and the ones that are risky when set.
///
/// probe_environment copies every variable named here (and every CUDA_MPS_* variable) into
/// EnvironmentInfo.variables when it is set; checks use k_risky_env_vars to warn about them.
/// The risky list starts from DCGM's diag "software" plugin (checkForBadEnvVaribles in
/// nvvs/plugin_src/software/Software.cpp) and adds variables failures.md names (F32 and others).

#include <array>
#include <string_view>

namespace gpucheck::probes {

/// A variable that changes CUDA's behaviour in a way a production run should not inherit.
struct RiskyEnvVar {
  std::string_view name;
  std::string_view reason; ///< one sentence: what it does when set
};

// clang-format off
inline constexpr std::array k_risky_env_vars = {
    // From DCGM's software plugin.
    RiskyEnvVar{"NSIGHT_CUDA_DEBUGGER", "makes CUDA run under the Nsight debugger's control"},
    RiskyEnvVar{"CUDA_INJECTION32_PATH", "injects a tool library (profiler/tracer) into every CUDA process"},
    RiskyEnvVar{"CUDA_INJECTION64_PATH", "injects a tool library (profiler/tracer) into every CUDA process"},
    RiskyEnvVar{"CUDA_AUTO_BOOST", "overrides the GPU's auto-boost clock policy for this process"},
    RiskyEnvVar{"CUDA_ENABLE_COREDUMP_ON_EXCEPTION", "a GPU exception writes a GPU core dump, which can take minutes and much disk"},
    RiskyEnvVar{"CUDA_COREDUMP_FILE", "sets where GPU core dumps are written (debugging only)"},
    RiskyEnvVar{"CUDA_DEVICE_WAITS_ON_EXCEPTION", "a GPU exception makes the kernel wait for a debugger instead of failing: the process hangs"},
    RiskyEnvVar{"CUDA_PROFILE", "enables the legacy command-line profiler, which slows every launch"},
    RiskyEnvVar{"COMPUTE_PROFILE", "enables the legacy command-line profiler, which slows every launch"},
    RiskyEnvVar{"OPENCL_PROFILE", "enables the legacy OpenCL profiler, which slows every launch"},
    // Further variables that change behaviour or performance.
    RiskyEnvVar{"CUDA_LAUNCH_BLOCKING", "makes every kernel launch synchronous: correct but much slower"},
    RiskyEnvVar{"CUDA_DISABLE_PTX_JIT", "forbids JIT compilation of PTX: code without SASS for this GPU fails to load"},
    RiskyEnvVar{"CUDA_FORCE_PTX_JIT", "ignores embedded SASS and JIT-compiles all PTX: slow start-up, fails where no PTX is embedded"},
    RiskyEnvVar{"CUDA_CACHE_DISABLE", "disables the PTX JIT cache: PTX is recompiled on every run"},
    RiskyEnvVar{"CUDA_DEVICE_MAX_CONNECTIONS", "changes the number of hardware work queues, which can serialise streams"},
    RiskyEnvVar{"NVIDIA_TF32_OVERRIDE", "forces TF32 math on or off in cuBLAS/cuDNN, changing speed or precision"},
    RiskyEnvVar{"CUDA_MPS_PIPE_DIRECTORY", "makes CUDA talk to an MPS server through this directory; a missing or foreign server breaks initialisation"},
    RiskyEnvVar{"CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", "limits the share of SMs this MPS client may use"},
    RiskyEnvVar{"CUDA_MPS_PINNED_DEVICE_MEM_LIMIT", "caps the device memory this MPS client may allocate"},
};
// clang-format on

/// Variables recorded because they decide which GPUs and libraries a process gets.
inline constexpr auto k_captured_env_vars = std::to_array<std::string_view>({
    "CUDA_VISIBLE_DEVICES",
    "NVIDIA_VISIBLE_DEVICES",
    "NVIDIA_DRIVER_CAPABILITIES",
    "NVIDIA_REQUIRE_CUDA",
    "LD_LIBRARY_PATH",
    "LD_PRELOAD",
    "LIBRARY_PATH",
    "CUDA_HOME",
    "CUDA_PATH",
    "CUDA_ROOT",
    "CUDA_DEVICE_ORDER",
    "CUDA_CACHE_PATH",
    "CUDA_CACHE_MAXSIZE",
    "CUDA_MODULE_DATA_LOADING",
    "CUDNN_LOGLEVEL_DBG",
    "CUDNN_LOGDEST_DBG",
    "CONDA_PREFIX",
    "VIRTUAL_ENV",
    "KUBERNETES_SERVICE_HOST",
    "SLURM_JOB_GPUS",
    "SLURM_STEP_GPUS",
    "GPU_DEVICE_ORDINAL",
    "ROCR_VISIBLE_DEVICES",
    "HIP_VISIBLE_DEVICES",
    "NCCL_DEBUG",
    "NCCL_P2P_DISABLE",
    "CUDA_MODULE_LOADING",
});

/// Prefixes whose every variable is recorded (MPS client settings change scheduling).
inline constexpr std::array<std::string_view, 1> k_captured_env_prefixes = {"CUDA_MPS_"};

/// The risky entry for a name, or nullptr.
constexpr const RiskyEnvVar* find_risky_env_var(std::string_view name) {
  for (const RiskyEnvVar& var : k_risky_env_vars) {
    if (var.name == name) {
      return &var;
    }
  }
  return nullptr;
}

/// Whether probe_environment records this variable.
constexpr bool is_captured_env_var(std::string_view name) {
  if (find_risky_env_var(name) != nullptr) {
    return true;
  }
  for (std::string_view captured : k_captured_env_vars) {
    if (captured == name) {
      return true;
    }
  }
  for (std::string_view prefix : k_captured_env_prefixes) {
    if (name.starts_with(prefix)) {
      return true;
    }
  }
  return false;
}

} // namespace gpucheck::probes
