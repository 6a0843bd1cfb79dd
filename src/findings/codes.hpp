#pragma once
/// Every finding code of the catalogue as a typed constant: `make_finding(codes::k_driver_missing,
/// ...)`. A misspelt constant does not compile; each constant names exactly one entry of the
/// tables beside it (src/findings/table_*.cpp), which use the same constants, and
/// tests/unit/findings/finding_catalog_test.cpp proves that every constant here has its entry.
///
/// A released code never changes meaning; add a code here, its entry in a table, and its row in
/// docs/findings.md, or spell it and its entry in the check's own file or folder
/// (CheckDef::findings: src/checks/*/ and src/gpu_checks/), which the registry adds to the
/// catalogue.

#include <string_view>

namespace gpucheck {

/// A finding's stable code, "<area>.<problem>". Spelt only here, as the constants below (tests
/// aside, which make unknown ones on purpose).
class FindingCode {
public:
  explicit constexpr FindingCode(std::string_view text) : m_text(text) {}
  [[nodiscard]] constexpr std::string_view text() const { return m_text; }
  constexpr operator std::string_view() const { return m_text; } // NOLINT: a code is its text
  friend constexpr bool operator==(FindingCode a, FindingCode b) { return a.m_text == b.m_text; }
  friend constexpr bool operator==(std::string_view a, FindingCode b) { return a == b.m_text; }

private:
  std::string_view m_text;
};

/// For fmt 10 and later, a code formats as its text (fmt 9 does so through the conversion).
constexpr std::string_view format_as(FindingCode code) {
  return code.text();
}

namespace codes {

// One code a line, however long.
// clang-format off

// compat.*
inline constexpr FindingCode k_compat_cuda_unknown{"compat.cuda_unknown"};
inline constexpr FindingCode k_compat_cudnn_arch_newer{"compat.cudnn_arch_newer"};
inline constexpr FindingCode k_compat_cudnn_arch_unconfirmed{"compat.cudnn_arch_unconfirmed"};
inline constexpr FindingCode k_compat_cudnn_arch_unsupported{"compat.cudnn_arch_unsupported"};
inline constexpr FindingCode k_compat_driver_too_old{"compat.driver_too_old"};
inline constexpr FindingCode k_compat_driver_unknown{"compat.driver_unknown"};
inline constexpr FindingCode k_compat_forward_compat_conditional{"compat.forward_compat_conditional"};
inline constexpr FindingCode k_compat_forward_compat_not_needed{"compat.forward_compat_not_needed"};
inline constexpr FindingCode k_compat_forward_compat_ok{"compat.forward_compat_ok"};
inline constexpr FindingCode k_compat_forward_compat_unsupported_gpu{"compat.forward_compat_unsupported_gpu"};
inline constexpr FindingCode k_compat_forward_compat_wrong_branch{"compat.forward_compat_wrong_branch"};
inline constexpr FindingCode k_compat_gpu_arch_deprecated{"compat.gpu_arch_deprecated"};
inline constexpr FindingCode k_compat_gpu_arch_newer_than_toolkit{"compat.gpu_arch_newer_than_toolkit"};
inline constexpr FindingCode k_compat_gpu_arch_removed{"compat.gpu_arch_removed"};
inline constexpr FindingCode k_compat_gpu_dropped_by_driver{"compat.gpu_dropped_by_driver"};
inline constexpr FindingCode k_compat_gpu_unknown{"compat.gpu_unknown"};
inline constexpr FindingCode k_compat_minor_version_compat{"compat.minor_version_compat"};
inline constexpr FindingCode k_compat_toolkit_minor_version{"compat.toolkit_minor_version"};
inline constexpr FindingCode k_compat_toolkit_too_new{"compat.toolkit_too_new"};
inline constexpr FindingCode k_compat_what_runs{"compat.what_runs"};

// cuda.*

// cudnn.*

// driver.*
inline constexpr FindingCode k_driver_missing{"driver.missing"};
inline constexpr FindingCode k_driver_module_not_loaded{"driver.module_not_loaded"};
inline constexpr FindingCode k_driver_version_mismatch{"driver.version_mismatch"};

// env.*
inline constexpr FindingCode k_env_device_node_missing{"env.device_node_missing"};
inline constexpr FindingCode k_env_device_node_no_access{"env.device_node_no_access"};
inline constexpr FindingCode k_env_nouveau_bound{"env.nouveau_bound"};
inline constexpr FindingCode k_env_nvidia_visible_devices_none{"env.nvidia_visible_devices_none"};
inline constexpr FindingCode k_env_visible_devices_hides_all{"env.visible_devices_hides_all"};
inline constexpr FindingCode k_env_visible_devices_no_match{"env.visible_devices_no_match"};
inline constexpr FindingCode k_env_wsl_file_missing{"env.wsl_file_missing"};
inline constexpr FindingCode k_env_wsl_linux_driver_library{"env.wsl_linux_driver_library"};
inline constexpr FindingCode k_env_wsl_linux_driver_package{"env.wsl_linux_driver_package"};

// fabric.*
inline constexpr FindingCode k_fabric_clique_split{"fabric.clique_split"};
inline constexpr FindingCode k_fabric_not_ready{"fabric.not_ready"};
inline constexpr FindingCode k_fabric_registration_failed{"fabric.registration_failed"};

// fw.*
inline constexpr FindingCode k_fw_build_unknown{"fw.build_unknown"};
inline constexpr FindingCode k_fw_cpu_only_build{"fw.cpu_only_build"};
inline constexpr FindingCode k_fw_cudnn_mismatch{"fw.cudnn_mismatch"};
inline constexpr FindingCode k_fw_cudnn_older{"fw.cudnn_older"};
inline constexpr FindingCode k_fw_driver_too_old{"fw.driver_too_old"};
inline constexpr FindingCode k_fw_gpu_libraries_missing{"fw.gpu_libraries_missing"};
inline constexpr FindingCode k_fw_gpu_libraries_off_path{"fw.gpu_libraries_off_path"};
inline constexpr FindingCode k_fw_gpu_not_covered{"fw.gpu_not_covered"};
inline constexpr FindingCode k_fw_gpu_ptx_only{"fw.gpu_ptx_only"};
inline constexpr FindingCode k_fw_import_crashed{"fw.import_crashed"};
inline constexpr FindingCode k_fw_import_failed{"fw.import_failed"};
inline constexpr FindingCode k_fw_import_hung{"fw.import_hung"};
inline constexpr FindingCode k_fw_import_no_gpu{"fw.import_no_gpu"};
inline constexpr FindingCode k_fw_import_op_failed{"fw.import_op_failed"};
inline constexpr FindingCode k_fw_jax_plugin_mismatch{"fw.jax_plugin_mismatch"};
inline constexpr FindingCode k_fw_library_missing{"fw.library_missing"};
inline constexpr FindingCode k_fw_library_shadowed{"fw.library_shadowed"};
inline constexpr FindingCode k_fw_minor_version_compat{"fw.minor_version_compat"};
inline constexpr FindingCode k_fw_system_copy_unused{"fw.system_copy_unused"};
inline constexpr FindingCode k_fw_torchvision_mismatch{"fw.torchvision_mismatch"};

// gate.*
inline constexpr FindingCode k_gate_gpu_count_mismatch{"gate.gpu_count_mismatch"};
inline constexpr FindingCode k_gate_metric_below_minimum{"gate.metric_below_minimum"};
inline constexpr FindingCode k_gate_metric_not_measured{"gate.metric_not_measured"};
inline constexpr FindingCode k_gate_requirement_not_met{"gate.requirement_not_met"};
inline constexpr FindingCode k_gate_requirement_unknown{"gate.requirement_unknown"};
inline constexpr FindingCode k_gate_warnings_present{"gate.warnings_present"};

// gpu.*
inline constexpr FindingCode k_gpu_below_expected{"gpu.below_expected"};
inline constexpr FindingCode k_gpu_busy_not_tested{"gpu.busy_not_tested"};
inline constexpr FindingCode k_gpu_child_failed{"gpu.child_failed"};
inline constexpr FindingCode k_gpu_contention{"gpu.contention"};
inline constexpr FindingCode k_gpu_context_failed{"gpu.context_failed"};
inline constexpr FindingCode k_gpu_cuda_call_failed{"gpu.cuda_call_failed"};
inline constexpr FindingCode k_gpu_kernel_load_failed{"gpu.kernel_load_failed"};
inline constexpr FindingCode k_gpu_kernels_not_built{"gpu.kernels_not_built"};
inline constexpr FindingCode k_gpu_long_interrupted{"gpu.long_interrupted"};
inline constexpr FindingCode k_gpu_lost{"gpu.lost"};
inline constexpr FindingCode k_gpu_other_run{"gpu.other_run"};
inline constexpr FindingCode k_gpu_reset_required{"gpu.reset_required"};
inline constexpr FindingCode k_gpu_slower_than_siblings{"gpu.slower_than_siblings"};

// lib.*

// log.*

// nccl.*

// nvlink.*
inline constexpr FindingCode k_nvlink_crc_errors{"nvlink.crc_errors"};
inline constexpr FindingCode k_nvlink_links_down{"nvlink.links_down"};
inline constexpr FindingCode k_nvlink_recovery_errors{"nvlink.recovery_errors"};

// nvml.*

// p2p.*

// probe.*
inline constexpr FindingCode k_probe_crashed{"probe.crashed"};
inline constexpr FindingCode k_probe_failed{"probe.failed"};
inline constexpr FindingCode k_probe_timed_out{"probe.timed_out"};

// topology.*
inline constexpr FindingCode k_topology_p2p_unsupported{"topology.p2p_unsupported"};
// clang-format on

} // namespace codes

} // namespace gpucheck
