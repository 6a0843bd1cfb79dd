// JSON conversion of the model. Field lists here are the report's and the snapshot's schema:
// docs/report.schema.json must change with them.

#include "gpucheck/model/json_io.hpp"
#include "gpucheck/model/json_input.hpp"
#include "gpucheck/model/json_numbers.hpp"
#include "gpucheck/model/snapshot_limits.hpp"
#include "gpucheck/model/text.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <optional>
#include <stdexcept>

namespace nlohmann {
template <typename T> struct adl_serializer<std::optional<T>> {
  static void to_json(json& j, const std::optional<T>& v) {
    if (v) {
      j = *v;
    } else {
      j = nullptr;
    }
  }
  static void from_json(const json& j, std::optional<T>& v) {
    if (j.is_null()) {
      v = std::nullopt;
    } else {
      v = j.get<T>();
    }
  }
};
} // namespace nlohmann

namespace gpucheck {

namespace {
/// A closed set read from its to_string spelling; anything else is refused, naming `what`.
template <typename Enum>
Enum spelled(const nlohmann::json& j, std::optional<Enum> (*parse)(std::string_view),
             std::string_view what) {
  const std::string text = j.get<std::string>();
  const std::optional<Enum> parsed = parse(text);
  if (!parsed) {
    throw std::invalid_argument(fmt::format("unknown {} '{}'", what, text));
  }
  return *parsed;
}
} // namespace

void to_json(nlohmann::json& j, Status v) {
  j = std::string(to_string(v));
}
void from_json(const nlohmann::json& j, Status& v) {
  v = spelled(j, &status_from_string, "status");
}
void to_json(nlohmann::json& j, ChildFailureKind v) {
  j = std::string(to_string(v));
}
void from_json(const nlohmann::json& j, ChildFailureKind& v) {
  v = spelled(j, &child_failure_kind_from_string, "child failure kind");
}
void to_json(nlohmann::json& j, Severity v) {
  j = std::string(to_string(v));
}
void from_json(const nlohmann::json& j, Severity& v) {
  v = spelled(j, &severity_from_string, "severity");
}

// The _WITH_DEFAULT form lets an older snapshot that lacks a newer field still load.
#define GPUCHECK_JSON(T, ...)                                                                      \
  void to_json(nlohmann::json& j, const T& v) {                                                    \
    NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(NLOHMANN_JSON_TO, __VA_ARGS__))                       \
  }                                                                                                \
  void from_json(const nlohmann::json& j, T& v) {                                                  \
    const T nlohmann_json_default_obj{};                                                           \
    NLOHMANN_JSON_EXPAND(NLOHMANN_JSON_PASTE(NLOHMANN_JSON_FROM_WITH_DEFAULT, __VA_ARGS__))        \
  }

// The nlohmann macros name their parameters nlohmann_json_j / nlohmann_json_t.
#define nlohmann_json_j j
#define nlohmann_json_t v

GPUCHECK_JSON(ChildFailure, kind, signal, signal_name, exit_code, timeout_s, detail, stderr_tail)
GPUCHECK_JSON(LibraryLoad, name, loaded, error, path, real_path, version, version_raw,
              missing_symbols)
GPUCHECK_JSON(DeviceNode, path, exists, readable, writable, mode)
GPUCHECK_JSON(PciDevice, bdf, device_id, class_code, driver, current_link_speed, current_link_width,
              max_link_speed, max_link_width, numa_node, runtime_status, power_state,
              config_all_ones)
GPUCHECK_JSON(KernelModuleInfo, proc_version_present, version, flavor, version_text, nvidia_loaded,
              uvm_loaded, nouveau_loaded, device_nodes, pci_devices, running_kernel, module_files,
              other_kernels_with_module, secure_boot, lockdown, modprobe_blacklist, integrated_gpus,
              prime_profile, bbswitch)
GPUCHECK_JSON(NvmlHandleFailure, index, result, result_name, call, uuid, pci_bus_id)
GPUCHECK_JSON(NvmlInfo, library, init_result, init_result_name, driver_version, cuda_driver_version,
              cuda_driver_version_kernel, nvml_version, device_count, handle_failures, failure)
GPUCHECK_JSON(CudaDevice, ordinal, name, uuid, pci_bus_id, cc_major, cc_minor, sm_count,
              total_memory_bytes, kernel_exec_timeout)
GPUCHECK_JSON(CudaDriverInfo, library, driver_version, init_result, init_result_name,
              init_result_text, device_count, devices, failure)
GPUCHECK_JSON(GpuProcess, pid, used_memory_bytes, name)
GPUCHECK_JSON(NvLinkInfo, link, active, version, remote_bus_id, replay_errors, recovery_errors,
              crc_flit_errors, crc_data_errors, crc_errors)
GPUCHECK_JSON(GpuFabricInfo, state, status, status_name, clique_id, cluster_uuid, health_mask)
GPUCHECK_JSON(GpuPath, gpu_a, gpu_b, pcie_path, nvlinks, p2p_nvlink, p2p_read)
GPUCHECK_JSON(GpuInfo, index, cuda_ordinal, name, uuid, serial, pci_bus_id, pci_device_id, cc_major,
              cc_minor, sm_count, memory_total_bytes, memory_used_bytes, memory_free_bytes,
              pcie_gen_current, pcie_gen_max, pcie_width_current, pcie_width_max, persistence_mode,
              compute_mode, mig_enabled, mig_pending, mig_instance_count, ecc_enabled,
              ecc_uncorrected_volatile, ecc_corrected_volatile, ecc_uncorrected_aggregate,
              retired_pages_sbe, retired_pages_dbe, retired_pages_pending,
              remapped_rows_correctable, remapped_rows_uncorrectable, remapped_rows_pending,
              remapped_rows_failure, clock_event_reasons, temperature_c, power_w, power_limit_w,
              sm_clock_mhz, sm_clock_max_mhz, numa_node, processes, display_mode, display_active,
              kernel_exec_timeout, cpu_affinity, nvlinks, fabric)
GPUCHECK_JSON(LibraryCopy, path, real_path, origin, version, selected, shadowed, reported_version,
              cudart_version)
GPUCHECK_JSON(CudnnSublibrary, name, loaded, path, error, version_check)
GPUCHECK_JSON(CudnnDetails, cudart_version, max_device_version, sublibraries)
GPUCHECK_JSON(LibraryFamily, family, load, copies, cudnn, failure)
GPUCHECK_JSON(ToolkitInstall, path, version)
GPUCHECK_JSON(ToolkitInfo, nvcc_path, nvcc_version, cuda_home, cuda_path, installs)
GPUCHECK_JSON(ContainerInfo, kind, evidence, nvidia_mounts)
GPUCHECK_JSON(WslFile, path, exists, is_symlink)
GPUCHECK_JSON(WslInfo, kernel_release, dxg, files, driver_packages)
GPUCHECK_JSON(ShmInfo, total_bytes, free_bytes, source, writable)
GPUCHECK_JSON(EnvironmentInfo, variables, container, wsl, wsl_details, shm)
GPUCHECK_JSON(HostInfo, hostname, os, kernel, arch, glibc, cpu_model, cpu_count, memory_total_bytes)
GPUCHECK_JSON(PythonDistribution, name, version, metadata_dir, libraries)
GPUCHECK_JSON(ResolvedLibrary, family, soname, path, real_path, via, version, own_path, own_version,
              elsewhere)
GPUCHECK_JSON(FrameworkInstall, name, distribution, version, package_dir, cuda, cudnn, git_version,
              archs, plugins, loader_object, runpath, runpath_source, libraries)
GPUCHECK_JSON(FrameworkImport, framework, failure, error, version, gpu_available, device_count,
              arch_list, cudnn_version, op_ok, mapped_libraries, seconds)
GPUCHECK_JSON(PythonEnvironment, interpreter, found_by, version, prefix, base_prefix, kind, source,
              query_failure, site_packages, distributions, frameworks, imports)
GPUCHECK_JSON(ProbeIssue, probe, message)
GPUCHECK_JSON(KernelLogEvent, kind, code, pci_bus_id, severity, seconds, text)
GPUCHECK_JSON(KernelLogInfo, source, readable, unreadable_reason, uptime_s, truncated, records_read,
              events)
GPUCHECK_JSON(SystemSnapshot, format_version, collected_at, host, environment, kernel_module, nvml,
              cuda, gpus, libraries, toolkit, python_environments, kernel_log, probe_issues,
              gpu_paths, fabric_manager_running)
GPUCHECK_JSON(Finding, code, severity, message, remedy, gpu_index, ignored)
GPUCHECK_JSON(ReportContext, schema_version, tool_version, generated_at, mode, matrix_version, argv)
GPUCHECK_JSON(ReportSummary, overall, pass, warn, fail, skip, error)
GPUCHECK_JSON(ResultRef, check_id, gpu_index)
GPUCHECK_JSON(RootCause, code, check_id, gpu_index, message, remedy, explains)
GPUCHECK_JSON(Report, context, root_causes, snapshot, results, summary)

#undef nlohmann_json_j
#undef nlohmann_json_t

void to_json(nlohmann::json& j, const Metric& v) {
  // Every key always present (docs/report-format.md): expected_min is null where no floor is known.
  j = nlohmann::json{{"name", v.name}, {"value", v.value},        {"unit", v.unit},
                     {"note", v.note}, {"expected_min", nullptr}, {"expected", v.expected}};
  if (v.expected_min) {
    j["expected_min"] = *v.expected_min;
  }
}

void from_json(const nlohmann::json& j, Metric& v) {
  v.name = j.value("name", std::string{});
  v.value = j.value("value", 0.0);
  v.unit = j.value("unit", std::string{});
  v.note = j.value("note", std::string{});
  v.expected_min = j.value("expected_min", std::optional<double>{});
  v.expected = j.value("expected", std::string{});
  v.labels = metric_labels_of(v.name);
}

void to_json(nlohmann::json& j, const CheckResult& v) {
  j = nlohmann::json{{"check_id", v.check_id},   {"title", v.title},
                     {"status", v.status},       {"summary", v.summary},
                     {"gpu_index", v.gpu_index}, {"findings", v.findings},
                     {"metrics", v.metrics},     {"duration_ms", v.duration.count()}};
}

void from_json(const nlohmann::json& j, CheckResult& v) {
  v.check_id = j.at("check_id").get<std::string>();
  v.title = j.value("title", std::string{});
  v.status = j.at("status").get<Status>();
  v.summary = j.value("summary", std::string{});
  v.gpu_index = j.value("gpu_index", std::optional<int>{});
  v.findings = j.value("findings", std::vector<Finding>{});
  v.metrics = j.value("metrics", std::vector<Metric>{});
  v.duration = std::chrono::milliseconds(j.value("duration_ms", int64_t{0}));
}

namespace {

/// The JSON path of the first floating-point number in `j` that is not finite, is negative or is
/// 2^31 or more; nullopt when there is none.
std::optional<std::string> float_out_of_range(const nlohmann::json& j, const std::string& path) {
  if (j.is_number_float()) {
    if (!snapshot_float_in_range(j.get<double>())) {
      return path;
    }
    return std::nullopt;
  }
  if (j.is_object()) {
    for (const auto& [key, item] : j.items()) {
      if (std::optional<std::string> found = float_out_of_range(item, path + "." + key)) {
        return found;
      }
    }
  } else if (j.is_array()) {
    for (size_t i = 0; i < j.size(); ++i) {
      if (std::optional<std::string> found =
              float_out_of_range(j[i], fmt::format("{}[{}]", path, i))) {
        return found;
      }
    }
  }
  return std::nullopt;
}

/// Whether a number read into the model came out as another value: an integer out of its field's
/// range wraps (2^64-1 read into an int is -1, -1 into a byte count is 2^64-1).
bool number_changed(const nlohmann::json& in, const nlohmann::json& out) {
  if (in.is_number_float() || out.is_number_float()) {
    return in.get<double>() != out.get<double>();
  }
  const bool in_negative =
      in.is_number_integer() && !in.is_number_unsigned() && in.get<int64_t>() < 0;
  const bool out_negative =
      out.is_number_integer() && !out.is_number_unsigned() && out.get<int64_t>() < 0;
  if (in_negative || out_negative) {
    return !(in_negative && out_negative && in.get<int64_t>() == out.get<int64_t>());
  }
  return in.get<uint64_t>() != out.get<uint64_t>();
}

/// The JSON path of the first number of `in` that the model holds as another value (`out`, the
/// model written back), or nullopt. Keys the model does not hold are not compared.
std::optional<std::string> integer_out_of_range(const nlohmann::json& in, const nlohmann::json& out,
                                                const std::string& path) {
  if (in.is_number() && out.is_number()) {
    return number_changed(in, out) ? std::optional<std::string>(path) : std::nullopt;
  }
  if (in.is_object() && out.is_object()) {
    for (const auto& [key, item] : in.items()) {
      const auto found = out.find(key);
      if (found == out.end()) {
        continue;
      }
      if (std::optional<std::string> where = integer_out_of_range(item, *found, path + "." + key)) {
        return where;
      }
    }
  } else if (in.is_array() && out.is_array()) {
    for (size_t i = 0; i < std::min(in.size(), out.size()); ++i) {
      if (std::optional<std::string> where =
              integer_out_of_range(in[i], out[i], fmt::format("{}[{}]", path, i))) {
        return where;
      }
    }
  }
  return std::nullopt;
}

} // namespace

std::optional<std::string> float_out_of_model_range(const nlohmann::json& j) {
  return float_out_of_range(j, "$");
}

std::optional<std::string> number_read_as_another(const nlohmann::json& in,
                                                  const nlohmann::json& out) {
  return integer_out_of_range(in, out, "$");
}

Expected<SystemSnapshot> snapshot_from_text(const std::string& text) {
  // Never throws: 1e400, a syntax error or 200k nested arrays are errors naming the JSON path.
  Expected<nlohmann::json> parsed = parse_json_input(text);
  if (!parsed) {
    return Error{fmt::format("not valid JSON {}", parsed.error().message)};
  }
  const nlohmann::json j = std::move(parsed).value();
  // A report file holds its snapshot under "snapshot"; accept both.
  const nlohmann::json& body = j.contains("snapshot") && j.contains("context") ? j["snapshot"] : j;
  if (!body.is_object() || !body.contains("format_version")) {
    return Error{"not a gpucheck snapshot: no \"format_version\" key"};
  }
  const int version =
      body["format_version"].is_number_integer() ? body["format_version"].get<int>() : -1;
  if (version < 1 || version > SystemSnapshot::k_format_version) {
    return Error{
        fmt::format("snapshot format_version {} is not supported (this gpucheck reads 1..{})",
                    body["format_version"].dump(), SystemSnapshot::k_format_version)};
  }
  // Every number with a fraction or an exponent that a snapshot holds (timeouts, watts, seconds
  // since boot) is finite, not negative and far below 2^31; one outside that would be converted
  // into an integer field out of its range, which is undefined behaviour (found by
  // fuzz_snapshot: 2.3e62 read into a long).
  if (body.contains("gpus") && body["gpus"].is_array() &&
      body["gpus"].size() > SystemSnapshot::k_max_gpus) {
    return Error{fmt::format("snapshot lists {} GPUs; gpucheck reads at most {} for one node",
                             body["gpus"].size(), SystemSnapshot::k_max_gpus)};
  }
  if (const std::optional<std::string> where = float_out_of_range(body, "$")) {
    return Error{
        fmt::format("snapshot does not match the format: at {}: a number out of range", *where)};
  }
  try {
    SystemSnapshot snapshot = body.get<SystemSnapshot>();
    hide_secret_variables(snapshot.environment.variables); // an older gpucheck kept them
    // An integer outside its field's range would wrap on the way in ("GPU -1", a byte count of
    // 16 EiB): each number must read back as itself.
    if (const std::optional<std::string> where =
            integer_out_of_range(body, nlohmann::json(snapshot), "$")) {
      return Error{fmt::format(
          "snapshot does not match the format: at {}: a number out of range for its field",
          *where)};
    }
    return snapshot;
  } catch (const nlohmann::json::exception& e) {
    return Error{fmt::format("snapshot does not match the format: {}", e.what())};
  } catch (const std::invalid_argument& e) {
    return Error{fmt::format("snapshot does not match the format: {}", e.what())};
  }
}

} // namespace gpucheck
