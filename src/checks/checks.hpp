#pragma once
/// One factory per check (each defined in its own file in src/checks/); the registry orders them.
/// Every check here is passive: a pure function over the snapshot (docs/checks.md).

#include "gpucheck/check.hpp"

namespace gpucheck::checks {

// Driver stack
CheckDef driver_installed_check();     ///< driver.installed
CheckDef driver_kernel_module_check(); ///< driver.kernel_module
CheckDef driver_nvml_check();          ///< driver.nvml
CheckDef driver_version_match_check(); ///< driver.version_match
CheckDef driver_kernel_log_check();    ///< driver.kernel_log

// CUDA driver API
CheckDef cuda_init_check(); ///< cuda.init

// Environment
CheckDef env_visible_devices_check(); ///< env.visible_devices
CheckDef env_container_check();       ///< env.container
CheckDef env_device_nodes_check();    ///< env.device_nodes
CheckDef env_nouveau_check();         ///< env.nouveau
CheckDef env_hybrid_graphics_check(); ///< env.hybrid_graphics (F42)
CheckDef env_variables_check();       ///< env.variables
CheckDef env_wsl_check();             ///< env.wsl
CheckDef env_shm_check();             ///< env.shm

// Libraries
CheckDef lib_cudart_check();       ///< lib.cudart
CheckDef lib_cudnn_check();        ///< lib.cudnn
CheckDef lib_cudnn_copies_check(); ///< lib.cudnn_copies

// Per-GPU health (one result per GPU)
CheckDef gpu_persistence_check();   ///< gpu.persistence
CheckDef gpu_compute_mode_check();  ///< gpu.compute_mode
CheckDef gpu_mig_check();           ///< gpu.mig
CheckDef gpu_ecc_check();           ///< gpu.ecc
CheckDef gpu_retired_pages_check(); ///< gpu.retired_pages
CheckDef gpu_remapped_rows_check(); ///< gpu.remapped_rows
CheckDef gpu_pcie_link_check();     ///< gpu.pcie_link
CheckDef gpu_nvlink_check();        ///< gpu.nvlink
CheckDef gpu_fabric_check();        ///< gpu.fabric

// Node-wide (one result)
CheckDef gpu_topology_check(); ///< gpu.topology
CheckDef gpu_clocks_check();   ///< gpu.clocks
CheckDef gpu_memory_check();   ///< gpu.memory
CheckDef gpu_display_check();  ///< gpu.display

} // namespace gpucheck::checks
