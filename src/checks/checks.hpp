#pragma once
/// Every check, once: GPUCHECK_CHECKS lists their factories in report order (driver stack, CUDA
/// init, environment, libraries, compatibility, Python frameworks, then each GPU). This header
/// declares each factory (`CheckDef NAME()`, defined in the check's own file of src/checks/, or a
/// row of compat_rule_checks.cpp), and core/registry.cpp registers them in this order. Adding a
/// check adds one line here.

#include "gpucheck/check.hpp"

// clang-format off
#define GPUCHECK_CHECKS(X)                                                                         \
  /* Driver stack */                                                                               \
  X(driver_installed_check)         /* driver.installed */                                         \
  X(driver_kernel_module_check)     /* driver.kernel_module */                                     \
  X(driver_nvml_check)              /* driver.nvml */                                              \
  X(driver_version_match_check)     /* driver.version_match */                                     \
  X(driver_kernel_log_check)        /* driver.kernel_log */                                        \
  /* CUDA driver API */                                                                            \
  X(cuda_init_check)                /* cuda.init */                                                \
  /* Environment */                                                                                \
  X(env_visible_devices_check)      /* env.visible_devices */                                      \
  X(env_container_check)            /* env.container */                                            \
  X(env_device_nodes_check)         /* env.device_nodes */                                         \
  X(env_nouveau_check)              /* env.nouveau */                                              \
  X(env_hybrid_graphics_check)      /* env.hybrid_graphics (F42) */                                \
  X(env_variables_check)            /* env.variables */                                            \
  X(env_wsl_check)                  /* env.wsl */                                                  \
  X(env_shm_check)                  /* env.shm */                                                  \
  /* Libraries */                                                                                  \
  X(lib_cudart_check)               /* lib.cudart */                                               \
  X(lib_cudnn_check)                /* lib.cudnn */                                                \
  X(lib_cudnn_copies_check)         /* lib.cudnn_copies */                                         \
  /* Compatibility matrix (compat_rule_checks.cpp, compat_what_runs.cpp) */                        \
  X(compat_driver_runtime_check)    /* compat.driver_runtime */                                    \
  X(compat_driver_cudnn_check)      /* compat.driver_cudnn */                                      \
  X(compat_toolkit_driver_check)    /* compat.toolkit_driver */                                    \
  X(compat_forward_compat_check)    /* compat.forward_compat */                                    \
  X(compat_gpu_driver_check)        /* compat.gpu_driver */                                        \
  X(compat_gpu_arch_check)          /* compat.gpu_arch */                                          \
  X(compat_gpu_cudnn_check)         /* compat.gpu_cudnn */                                         \
  X(compat_what_runs_check)         /* compat.what_runs */                                         \
  /* Python frameworks: one result per environment */                                              \
  X(fw_environments_check)          /* fw.environments: interpreters found and answered */         \
  X(fw_pytorch_check)               /* fw.pytorch */                                               \
  X(fw_tensorflow_check)            /* fw.tensorflow */                                            \
  X(fw_jax_check)                   /* fw.jax */                                                   \
  X(fw_onnxruntime_check)           /* fw.onnxruntime */                                           \
  X(fw_tensorrt_check)              /* fw.tensorrt */                                              \
  X(fw_cupy_check)                  /* fw.cupy */                                                  \
  X(fw_import_check)                /* fw.import: --import results */                              \
  /* GPU health: one result per GPU (topology, clocks, memory, display: one per node) */           \
  X(gpu_persistence_check)          /* gpu.persistence */                                          \
  X(gpu_compute_mode_check)         /* gpu.compute_mode */                                         \
  X(gpu_mig_check)                  /* gpu.mig */                                                  \
  X(gpu_ecc_check)                  /* gpu.ecc */                                                  \
  X(gpu_retired_pages_check)        /* gpu.retired_pages */                                        \
  X(gpu_remapped_rows_check)        /* gpu.remapped_rows */                                        \
  X(gpu_pcie_link_check)            /* gpu.pcie_link */                                            \
  X(gpu_topology_check)             /* gpu.topology */                                             \
  X(gpu_nvlink_check)               /* gpu.nvlink */                                               \
  X(gpu_fabric_check)               /* gpu.fabric */                                               \
  X(gpu_clocks_check)               /* gpu.clocks */                                               \
  X(gpu_memory_check)               /* gpu.memory */                                               \
  X(gpu_display_check)              /* gpu.display */
// clang-format on

namespace gpucheck::checks {

#define GPUCHECK_DECLARE_CHECK(factory) CheckDef factory();
GPUCHECK_CHECKS(GPUCHECK_DECLARE_CHECK)
#undef GPUCHECK_DECLARE_CHECK

} // namespace gpucheck::checks
