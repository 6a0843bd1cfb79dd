#include "gpucheck/registry.hpp"

#include "checks/checks.hpp"
#include "checks/compat_checks.hpp"
#include "checks/fw_checks.hpp"
#include "checks/gpu_checks.hpp"

namespace gpucheck {

std::span<const CheckDef> all_checks() {
  // Order is report order: driver stack, CUDA init, environment, libraries, compatibility,
  // Python frameworks, then each GPU.
  static const CheckDef k_checks[] = {
      checks::driver_installed_check(),
      checks::driver_kernel_module_check(),
      checks::driver_nvml_check(),
      checks::driver_version_match_check(),
      checks::driver_kernel_log_check(),
      checks::cuda_init_check(),
      checks::env_visible_devices_check(),
      checks::env_container_check(),
      checks::env_device_nodes_check(),
      checks::env_nouveau_check(),
      checks::env_hybrid_graphics_check(),
      checks::env_variables_check(),
      checks::env_wsl_check(),
      checks::env_shm_check(),
      checks::lib_cudart_check(),
      checks::lib_cudnn_check(),
      checks::lib_cudnn_copies_check(),
      checks::compat_driver_runtime_check(),
      checks::compat_driver_cudnn_check(),
      checks::compat_toolkit_driver_check(),
      checks::compat_forward_compat_check(),
      checks::compat_gpu_driver_check(),
      checks::compat_gpu_arch_check(),
      checks::compat_gpu_cudnn_check(),
      checks::compat_what_runs_check(),
      checks::fw_environments_check(),
      checks::fw_pytorch_check(),
      checks::fw_tensorflow_check(),
      checks::fw_jax_check(),
      checks::fw_onnxruntime_check(),
      checks::fw_tensorrt_check(),
      checks::fw_cupy_check(),
      checks::fw_import_check(),
      checks::gpu_persistence_check(),
      checks::gpu_compute_mode_check(),
      checks::gpu_mig_check(),
      checks::gpu_ecc_check(),
      checks::gpu_retired_pages_check(),
      checks::gpu_remapped_rows_check(),
      checks::gpu_pcie_link_check(),
      checks::gpu_topology_check(),
      checks::gpu_nvlink_check(),
      checks::gpu_fabric_check(),
      checks::gpu_clocks_check(),
      checks::gpu_memory_check(),
      checks::gpu_display_check(),
      checks::gpu_compute_check(),
      checks::gpu_bandwidth_check(),
      checks::gpu_cudnn_check(),
      checks::gpu_streams_check(),
      checks::gpu_p2p_check(),
      checks::gpu_nccl_check(),
      checks::gpu_memtest_check(),
      checks::gpu_burn_check(),
  };
  return k_checks;
}

} // namespace gpucheck
