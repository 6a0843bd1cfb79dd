#include "render/text.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <cstdint>
#include <string_view>
#include <vector>

#include "gpucheck/model/stack_versions.hpp"
#include "gpucheck/plural.hpp"
#include "render/inventory.hpp"
#include "render/wrap.hpp"

namespace gpucheck::render {

namespace {

constexpr size_t k_label_width = 10;    // header: "cuDNN     9.19.0 ..."
constexpr size_t k_result_indent = 6;   // results: "FAIL  " then the text
constexpr size_t k_copies_shown = 3;    // other copies of a library listed without -v
constexpr uint64_t k_mib = 1024 * 1024; // memory is shown in MiB, as nvidia-smi does
constexpr std::string_view k_reset = "\x1b[0m";
constexpr std::string_view k_bold = "\x1b[1m";

std::string_view color_of(Status status) {
  switch (status) {
  case Status::pass:
    return "\x1b[32m";
  case Status::warn:
    return "\x1b[33m";
  case Status::fail:
    return "\x1b[31m";
  case Status::skip:
    return "\x1b[2m";
  case Status::error:
    return "\x1b[35m";
  }
  return "";
}

std::string_view color_of(Severity severity) {
  switch (severity) {
  case Severity::info:
    return "\x1b[36m";
  case Severity::warn:
    return color_of(Status::warn);
  case Severity::fail:
    return color_of(Status::fail);
  case Severity::error:
    return color_of(Status::error);
  }
  return "";
}

std::string upper(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  return out;
}

std::string mib(uint64_t bytes) {
  return fmt::format("{} MiB", bytes / k_mib);
}

/// Metric values: whole numbers from 1000 up, one decimal from 10, else three significant digits.
std::string number(double value) {
  const double magnitude = std::fabs(value);
  if (magnitude >= 1000.0) {
    return fmt::format("{:.0f}", value);
  }
  if (magnitude >= 10.0) {
    return fmt::format("{:.1f}", value);
  }
  return fmt::format("{:.3g}", value);
}

/// "0-7" for a consecutive run, "0,2,5" otherwise.
std::string index_list(const std::vector<int>& indexes) {
  bool consecutive = indexes.size() > 2;
  for (size_t i = 1; i < indexes.size(); ++i) {
    consecutive = consecutive && indexes[i] == indexes[i - 1] + 1;
  }
  if (consecutive) {
    return fmt::format("{}-{}", indexes.front(), indexes.back());
  }
  return fmt::format("{}", fmt::join(indexes, ","));
}

class TextWriter {
public:
  TextWriter(const Report& report, const TextStyle& style)
      : m_report(report), m_style(style),
        m_width(static_cast<size_t>(style.width >= 40 ? style.width : 80)),
        m_inventory(make_inventory(report.snapshot)) {}

  std::string render() {
    if (!m_style.quiet) {
      header();
    }
    root_causes();
    results();
    summary_line();
    return std::move(m_out);
  }

private:
  // ---- small helpers ----------------------------------------------------------------------

  std::string paint(std::string_view text, std::string_view code) const {
    if (!m_style.color || code.empty()) {
      return std::string(text);
    }
    return fmt::format("{}{}{}", code, text, k_reset);
  }

  std::string label(Status status) const {
    return paint(fmt::format("{:<5}", upper(to_string(status))), color_of(status));
  }

  void fact(std::string_view name, std::string_view value) {
    const std::string first = fmt::format("{:<{}}", name, k_label_width - 1) + " ";
    m_out += wrap(value, m_width, first, std::string(k_label_width, ' '));
  }

  /// A blank line between blocks, none before the first (-q has no header).
  void blank_line() {
    if (!m_out.empty()) {
      m_out += '\n';
    }
  }

  void heading(std::string_view text) {
    blank_line();
    m_out += paint(text, k_bold);
    m_out += '\n';
  }

  // ---- header -----------------------------------------------------------------------------

  void header() {
    const ReportContext& ctx = m_report.context;
    m_out += paint(fmt::format("gpucheck {}", ctx.tool_version), k_bold);
    m_out += fmt::format("  {} mode", ctx.mode.empty() ? "unknown" : ctx.mode);
    if (!ctx.generated_at.empty()) {
      m_out += fmt::format(", {}", ctx.generated_at);
    }
    m_out += "\n";
    host();
    driver();
    gpus();
    libraries();
    toolkit();
    for (const ProbeIssue& issue : snapshot().probe_issues) {
      fact("Gap", fmt::format("{}: {}", issue.probe, issue.message));
    }
  }

  const SystemSnapshot& snapshot() const { return m_report.snapshot; }

  void host() {
    const HostInfo& host = snapshot().host;
    std::string value = host.os.empty() ? "unknown OS" : host.os;
    if (!host.kernel.empty()) {
      value += fmt::format(", kernel {}", host.kernel);
    }
    if (!host.arch.empty()) {
      value += fmt::format(" ({})", host.arch);
    }
    const EnvironmentInfo& env = snapshot().environment;
    if (m_inventory.in_container()) {
      value += fmt::format("; in a {} container", m_inventory.container);
    }
    if (env.wsl) {
      value += "; under WSL";
    }
    fact("Host", value);
    if (m_style.verbose) {
      std::string more = host.hostname.empty() ? "" : host.hostname + ", ";
      more += fmt::format("glibc {}, {} x {}", host.glibc.empty() ? "?" : host.glibc,
                          host.cpu_count, host.cpu_model.empty() ? "CPU" : host.cpu_model);
      if (m_inventory.host_memory_gib) {
        more += fmt::format(", {} GiB memory", *m_inventory.host_memory_gib);
      }
      fact("", more);
      if (!env.container.evidence.empty()) {
        fact("", fmt::format("container evidence: {}", fmt::join(env.container.evidence, "; ")));
      }
      for (const auto& [name, value_text] : env.variables) {
        fact("Env", fmt::format("{}={}", name, value_text));
      }
    }
  }

  void driver() {
    const KernelModuleInfo& km = snapshot().kernel_module;
    const NvmlInfo& nvml = snapshot().nvml;
    const CudaDriverInfo& cuda = snapshot().cuda;
    std::string value;
    if (km.version) {
      value = *km.version;
      if (km.flavor) {
        value += fmt::format(" ({} kernel module)", *km.flavor);
      }
    } else if (km.nvidia_loaded || km.proc_version_present) {
      value = "kernel module loaded, version unknown";
    } else {
      value = "no NVIDIA kernel module loaded";
    }
    if (!nvml.library.loaded) {
      value += ", NVML not loadable";
    } else if (nvml.failure) {
      value += fmt::format(", NVML probe failed: {}", nvml.failure->detail);
    } else if (nvml.init_result && *nvml.init_result != 0) {
      value += fmt::format(", NVML init failed: {}", nvml.init_result_name);
      if (!nvml.library.version.empty() && nvml.library.version != km.version.value_or("")) {
        value += fmt::format(" (library {})", nvml.library.version);
      }
    } else if (nvml.driver_version && nvml.driver_version != km.version) {
      value += fmt::format(", NVML reports {}", *nvml.driver_version);
    }
    if (!cuda.library.loaded) {
      value += ", libcuda.so.1 not loadable";
    } else {
      if (cuda.driver_version) {
        value += fmt::format(", CUDA driver API {}", cuda_version_text(*cuda.driver_version));
      }
      if (cuda.failure) {
        value += fmt::format(", CUDA probe failed: {}", cuda.failure->detail);
      } else if (cuda.init_result && *cuda.init_result != 0) {
        value += fmt::format(", cuInit: {}", cuda.init_result_name);
      }
    }
    fact("Driver", value);
    if (m_style.verbose) {
      if (!km.version_text.empty()) {
        fact("", km.version_text);
      }
      fact("", "modules: " + m_inventory.modules);
      std::string boot = fmt::format("running kernel {}: {}",
                                     km.running_kernel.empty() ? "unknown" : km.running_kernel,
                                     plural(km.module_files.size(), "NVIDIA module file"));
      if (km.secure_boot) {
        boot += fmt::format(", Secure Boot {}", *km.secure_boot ? "on" : "off");
      }
      if (!km.lockdown.empty()) {
        boot += fmt::format(", lockdown {}", km.lockdown);
      }
      fact("", boot);
      for (const std::string& other : km.other_kernels_with_module) {
        fact("", fmt::format("NVIDIA module also built for kernel {}", other));
      }
      for (const std::string& line : km.modprobe_blacklist) {
        fact("", fmt::format("blacklisted in {}", line));
      }
      for (const LibraryLoad* lib : {&nvml.library, &cuda.library}) {
        fact("", lib->loaded ? fmt::format("{}: {}", lib->name, path_of(*lib, true))
                             : fmt::format("{}: {}", lib->name, lib->error));
      }
      for (const DeviceNode& node : km.device_nodes) {
        fact("Device", device_node(node));
      }
      for (const PciDevice& pci : km.pci_devices) {
        fact("PCI", pci_device(pci));
      }
    }
  }

  static std::string device_node(const DeviceNode& node) {
    if (!node.exists) {
      return fmt::format("{} missing", node.path);
    }
    std::string text = node.path;
    if (node.mode) {
      text += fmt::format(" mode {:04o}", *node.mode);
    }
    text += node.readable && node.writable ? ", read-write"
            : node.readable                ? ", read-only"
                                           : ", no access";
    return text;
  }

  static std::string pci_device(const PciDevice& pci) {
    std::string text = fmt::format("{} device {} driver {}", pci.bdf, pci.device_id,
                                   pci.driver.empty() ? "none" : pci.driver);
    if (pci.current_link_speed && pci.current_link_width) {
      text += fmt::format(", link {} x{}", *pci.current_link_speed, *pci.current_link_width);
      if (pci.max_link_speed && pci.max_link_width) {
        text += fmt::format(" (max {} x{})", *pci.max_link_speed, *pci.max_link_width);
      }
    }
    if (pci.runtime_status || pci.power_state) {
      text += fmt::format(", power {}{}{}", pci.runtime_status.value_or(""),
                          pci.runtime_status && pci.power_state ? " " : "",
                          pci.power_state.value_or(""));
    }
    return text;
  }

  static std::string gpu_summary(const GpuView& view) {
    const GpuInfo& gpu = *view.gpu;
    std::string text = gpu.name.empty() ? "unnamed GPU" : gpu.name;
    if (gpu.cc_major) {
      text += fmt::format(", sm_{}{}", *gpu.cc_major, gpu.cc_minor.value_or(0));
    }
    if (view.memory_mib) {
      text += fmt::format(", {} MiB", *view.memory_mib);
    }
    if (view.pcie_current) {
      const auto [gen, width] = *view.pcie_current;
      text += fmt::format(", PCIe Gen{} x{}", gen, width);
      // Below its best: the best, its unknown part taken as now.
      const bool below = (gpu.pcie_gen_max && *gpu.pcie_gen_max != gen) ||
                         (gpu.pcie_width_max && *gpu.pcie_width_max != width);
      if (below) {
        text += fmt::format(" (max Gen{} x{})", gpu.pcie_gen_max.value_or(gen),
                            gpu.pcie_width_max.value_or(width));
      }
    }
    if (gpu.mig_enabled.value_or(false)) {
      text += fmt::format(", MIG on ({} instances)", gpu.mig_instance_count.value_or(0));
    }
    if (!gpu.cuda_ordinal) {
      text += ", hidden from CUDA";
    }
    return text;
  }

  static std::string gpu_details(const GpuInfo& gpu) {
    std::vector<std::string> parts;
    parts.push_back(gpu.uuid.empty() ? "no UUID" : gpu.uuid);
    parts.push_back(fmt::format("bus {}", gpu.pci_bus_id));
    if (gpu.cuda_ordinal) {
      parts.push_back(fmt::format("CUDA ordinal {}", *gpu.cuda_ordinal));
    }
    if (gpu.memory_used_bytes) {
      parts.push_back(fmt::format("{} used", mib(*gpu.memory_used_bytes)));
    }
    if (gpu.persistence_mode) {
      parts.push_back(fmt::format("persistence {}", *gpu.persistence_mode ? "on" : "off"));
    }
    if (gpu.compute_mode) {
      parts.push_back(fmt::format("compute mode {}", *gpu.compute_mode));
    }
    if (gpu.ecc_enabled) {
      parts.push_back(fmt::format("ECC {}", *gpu.ecc_enabled ? "on" : "off"));
    }
    if (gpu.ecc_uncorrected_volatile || gpu.ecc_corrected_volatile) {
      parts.push_back(fmt::format("ECC errors {} uncorrected, {} corrected",
                                  gpu.ecc_uncorrected_volatile.value_or(0),
                                  gpu.ecc_corrected_volatile.value_or(0)));
    }
    if (gpu.remapped_rows_pending.value_or(false)) {
      parts.push_back("row remap pending");
    }
    if (gpu.temperature_c) {
      parts.push_back(fmt::format("{} C", *gpu.temperature_c));
    }
    if (gpu.power_w) {
      parts.push_back(gpu.power_limit_w ? fmt::format("{} of {} W", number(*gpu.power_w),
                                                      number(*gpu.power_limit_w))
                                        : fmt::format("{} W", number(*gpu.power_w)));
    }
    if (gpu.sm_clock_mhz) {
      parts.push_back(gpu.sm_clock_max_mhz
                          ? fmt::format("SM {} of {} MHz", *gpu.sm_clock_mhz, *gpu.sm_clock_max_mhz)
                          : fmt::format("SM {} MHz", *gpu.sm_clock_mhz));
    }
    if (gpu.clock_event_reasons) {
      parts.push_back(fmt::format("clock events 0x{:x}", *gpu.clock_event_reasons));
    }
    for (const GpuProcess& process : gpu.processes) {
      parts.push_back(
          fmt::format("pid {} {}{}", process.pid, process.name.empty() ? "?" : process.name,
                      process.used_memory_bytes ? " " + mib(*process.used_memory_bytes) : ""));
    }
    return fmt::format("{}", fmt::join(parts, ", "));
  }

  void gpus() {
    const std::vector<GpuView>& gpus = m_inventory.gpus;
    if (gpus.empty()) {
      const size_t on_bus = snapshot().kernel_module.pci_devices.size();
      fact("GPUs", on_bus == 0 ? "none found"
                               : fmt::format("none usable; {} on the bus",
                                             plural(on_bus, "NVIDIA PCI device")));
      return;
    }
    // Without -v, identical GPUs in a row share one line: "GPU 0-7   8 x NVIDIA H100 ...".
    size_t i = 0;
    while (i < gpus.size()) {
      const std::string text = gpu_summary(gpus[i]);
      std::vector<int> indexes{gpus[i].gpu->index};
      size_t j = i + 1;
      while (!m_style.verbose && j < gpus.size() && gpu_summary(gpus[j]) == text) {
        indexes.push_back(gpus[j].gpu->index);
        ++j;
      }
      if (indexes.size() == 1) {
        fact(fmt::format("GPU {}", indexes.front()), text);
      } else {
        fact(fmt::format("GPU {}", index_list(indexes)),
             fmt::format("{} x {}", indexes.size(), text));
      }
      if (m_style.verbose) {
        fact("", gpu_details(*gpus[i].gpu));
      }
      i = j;
    }
  }

  std::string path_of(const LibraryLoad& load, bool with_real) const {
    std::string path = loaded_path(load);
    if (with_real && !load.real_path.empty() && load.real_path != path) {
      path += " -> " + load.real_path;
    }
    return path;
  }

  void libraries() {
    for (const LibraryView& view : m_inventory.libraries) {
      const LibraryFamily& lib = *view.family;
      std::string value;
      switch (view.state) {
      case LibraryState::probe_failed:
        value = fmt::format("probe failed: {}", lib.failure->detail);
        break;
      case LibraryState::loaded:
        value = lib.load.version.empty() ? "version unknown" : lib.load.version;
        if (view.built_for_cuda) {
          value += fmt::format(", built for CUDA {}", cuda_version_text(*view.built_for_cuda));
        }
        value += ": " + path_of(lib.load, m_style.verbose);
        break;
      case LibraryState::not_found:
        value = "not found";
        break;
      case LibraryState::not_loaded_in_this_mode: {
        // Not loaded on purpose (--quick skips the heavy libraries): say what is on disk.
        const LibraryCopy& first = lib.copies.front();
        value = fmt::format("{} on disk, not loaded in this mode: {}",
                            first.version.empty() ? "version unknown" : first.version, first.path);
        break;
      }
      case LibraryState::does_not_load:
        value = fmt::format("on disk but does not load: {}", lib.load.error);
        break;
      }
      fact(view.label, value);
      size_t shown = 0;
      size_t others = 0;
      for (const LibraryCopyView& copy : view.copies) {
        // The copy already named on the family's line.
        if (copy.named_by_family && !m_style.verbose) {
          continue;
        }
        ++others;
        if (!m_style.verbose && shown == k_copies_shown) {
          continue;
        }
        ++shown;
        std::string text =
            fmt::format("{} {} ({}", copy.named_by_family ? "loaded" : "also",
                        copy.version.empty() ? "version unknown" : copy.version, copy.copy->origin);
        if (copy.copy->cudart_version) {
          text += fmt::format(", built for CUDA {}", cuda_version_text(*copy.copy->cudart_version));
        }
        if (copy.copy->shadowed) {
          text += ", shadowed";
        }
        text += fmt::format("): {}", copy.copy->path);
        fact("", text);
      }
      if (others > shown) {
        fact("", fmt::format("and {} more {} (-v lists them)", others - shown,
                             others - shown == 1 ? "copy" : "copies"));
      }
      if (m_style.verbose && lib.cudnn) {
        for (const CudnnSublibrary& sub : lib.cudnn->sublibraries) {
          fact("", sub.loaded ? fmt::format("{} loaded, version check {}", sub.name,
                                            sub.version_check ? std::to_string(*sub.version_check)
                                                              : std::string("not run"))
                              : fmt::format("{} not loaded: {}", sub.name, sub.error));
        }
      }
    }
  }

  void toolkit() {
    const ToolkitInfo& tk = snapshot().toolkit;
    if (tk.nvcc_path) {
      fact("Toolkit",
           fmt::format("nvcc {}: {}", tk.nvcc_version.value_or("version unknown"), *tk.nvcc_path));
    } else if (!tk.installs.empty()) {
      fact("Toolkit", fmt::format("{} at {} (no nvcc on PATH)", tk.installs.front().version,
                                  tk.installs.front().path));
    }
    if (m_style.verbose) {
      for (const ToolkitInstall& install : tk.installs) {
        fact("", fmt::format("install {}: {}",
                             install.version.empty() ? "version unknown" : install.version,
                             install.path));
      }
    }
  }

  // ---- results ----------------------------------------------------------------------------

  std::string result_head(const CheckResult& result, std::string_view gpus) const {
    std::string head = label(result.status) + " " + paint(result.check_id, k_bold);
    if (!gpus.empty()) {
      head += fmt::format(" [GPU {}]", gpus);
    } else if (result.gpu_index) {
      head += fmt::format(" [GPU {}]", *result.gpu_index);
    }
    return head;
  }

  /// Whether `f` of `result` is a root cause the report printed above in full.
  bool printed_as_root_cause(const Finding& f, const CheckResult& result) const {
    return std::any_of(m_report.root_causes.begin(), m_report.root_causes.end(),
                       [&](const RootCause& cause) {
                         return cause.code == f.code && cause.check_id == result.check_id &&
                                cause.gpu_index == result.gpu_index && cause.message == f.message;
                       });
  }

  void finding(const Finding& f, const CheckResult& result) {
    const std::optional<int> result_gpu = result.gpu_index;
    const std::string indent(k_result_indent, ' ');
    const std::string code = paint(f.code, color_of(f.severity));
    if (printed_as_root_cause(f, result)) {
      // Each problem once: its message and fix are the root cause's, printed first.
      m_out += wrap(fmt::format("{} ({}{}): the root cause above", code, to_string(f.severity),
                                f.ignored ? ", ignored" : ""),
                    m_width, indent + "- ", indent + "  ");
      return;
    }
    std::string text = fmt::format("{} ({}{}): {}", code, to_string(f.severity),
                                   f.ignored ? ", ignored" : "", f.message);
    if (f.gpu_index && f.gpu_index != result_gpu) {
      text += fmt::format(" [GPU {}]", *f.gpu_index);
    }
    m_out += wrap(text, m_width, indent + "- ", indent + "  ");
    if (!f.remedy.empty()) {
      m_out +=
          wrap(f.remedy, m_width, indent + "  " + paint("fix:", k_bold) + " ", indent + "       ");
    }
  }

  void metrics(const CheckResult& result) {
    for (const Metric& metric : result.metrics) {
      std::string text = fmt::format("{} = {} {}", metric.name, number(metric.value), metric.unit);
      if (metric.expected_min) {
        // The floor this GPU model should reach (the JSON's "expected" says where it is from).
        text += fmt::format(" [expected >= {} {}]", number(*metric.expected_min), metric.unit);
      }
      if (!metric.note.empty()) {
        text += fmt::format(" ({})", metric.note);
      }
      const std::string indent(k_result_indent, ' ');
      m_out += wrap(text, m_width, indent, indent + "  ");
    }
  }

  /// A failing, erroring or warning result, or any result in verbose mode: everything.
  void full_result(const CheckResult& result) {
    const std::string indent(k_result_indent, ' ');
    std::string head = result_head(result, "");
    if (!result.title.empty()) {
      head += "  " + result.title;
    }
    if (m_style.verbose) {
      head += fmt::format(" ({} ms)", result.duration.count());
    }
    m_out += wrap(head, m_width, "", indent);
    if (!result.summary.empty()) {
      m_out += wrap(result.summary, m_width, indent, indent);
    }
    for (const Finding& f : result.findings) {
      finding(f, result);
    }
    metrics(result);
  }

  /// Results of the same check in a row that can share one line ("[GPU 0-7]"): passes, or skips
  /// for the same reason; their notes and figures are shown with -v.
  static bool joinable(const CheckResult& a, const CheckResult& b) {
    return a.check_id == b.check_id && a.status == b.status && a.gpu_index && b.gpu_index &&
           (a.status != Status::skip || a.summary == b.summary);
  }

  /// Without -v: one line per passing or skipped check (per-GPU results of one check joined).
  void short_results(const std::vector<const CheckResult*>& group) {
    const std::string indent(k_result_indent, ' ');
    size_t i = 0;
    while (i < group.size()) {
      const CheckResult& first = *group[i];
      std::vector<int> indexes;
      size_t j = i;
      int notes = 0;
      int figures = 0;
      while (j < group.size() && (j == i || joinable(first, *group[j]))) {
        if (group[j]->gpu_index) {
          indexes.push_back(*group[j]->gpu_index);
        }
        notes += static_cast<int>(group[j]->findings.size());
        figures += static_cast<int>(group[j]->metrics.size());
        ++j;
      }
      const bool joined = j - i > 1;
      std::string text;
      if (first.status == Status::skip || !joined) {
        text = first.summary.empty() ? first.title : first.summary;
      } else {
        text = first.title;
      }
      std::string line = result_head(first, joined ? index_list(indexes) : "") + "  " + text;
      // Passes show their details with -v only: a healthy 8-GPU node printed dozens of figures.
      if (notes > 0 || figures > 0) {
        std::vector<std::string> hidden;
        if (notes > 0) {
          hidden.push_back(plural(notes, "note", "notes"));
        }
        if (figures > 0) {
          hidden.push_back(plural(figures, "figure"));
        }
        line += fmt::format(" ({}, -v shows)", fmt::join(hidden, ", "));
      }
      m_out += wrap(line, m_width, "", indent);
      i = j;
    }
  }

  /// The faults that explain other results, first: the one thing to fix.
  void root_causes() {
    if (m_report.root_causes.empty()) {
      return;
    }
    heading(
        fmt::format("Root {} (fix first)", m_report.root_causes.size() == 1 ? "cause" : "causes"));
    const std::string indent(k_result_indent, ' ');
    for (const RootCause& cause : m_report.root_causes) {
      std::string head = paint(cause.code, k_bold);
      head += fmt::format(" ({}{})", cause.check_id,
                          cause.gpu_index ? fmt::format(", GPU {}", *cause.gpu_index) : "");
      m_out += wrap(head + ": " + cause.message, m_width, "", indent);
      if (!cause.remedy.empty()) {
        m_out += wrap("fix: " + cause.remedy, m_width, indent, indent);
      }
      std::vector<std::string> names;
      for (const ResultRef& ref : cause.explains) {
        names.push_back(ref.gpu_index ? fmt::format("{} (GPU {})", ref.check_id, *ref.gpu_index)
                                      : ref.check_id);
      }
      m_out += wrap(fmt::format("explains {}: {}", plural(cause.explains.size(), "other result"),
                                fmt::join(names, ", ")),
                    m_width, indent, indent);
    }
  }

  void results() {
    std::vector<const CheckResult*> problems;
    std::vector<const CheckResult*> passed;
    std::vector<const CheckResult*> skipped;
    // Problems first, worst kind first: fail, then error, then warn; run order within each.
    for (Status wanted : {Status::fail, Status::error, Status::warn}) {
      for (const CheckResult& result : m_report.results) {
        if (result.status == wanted) {
          problems.push_back(&result);
        }
      }
    }
    for (const CheckResult& result : m_report.results) {
      if (result.status == Status::pass) {
        passed.push_back(&result);
      } else if (result.status == Status::skip) {
        skipped.push_back(&result);
      }
    }
    if (m_report.results.empty()) {
      m_out += "\nNo checks were run.\n";
      return;
    }
    if (!problems.empty()) {
      heading(fmt::format("Problems ({})", problems.size()));
      for (const CheckResult* result : problems) {
        full_result(*result);
      }
    }
    const auto section = [&](std::string_view title, const std::vector<const CheckResult*>& list) {
      if (list.empty()) {
        return;
      }
      heading(fmt::format("{} ({})", title, list.size()));
      if (m_style.verbose) {
        for (const CheckResult* result : list) {
          full_result(*result);
        }
      } else {
        short_results(list);
      }
    };
    if (m_style.quiet) {
      if (problems.empty()) {
        blank_line();
        m_out += "No problems.\n";
      }
      return;
    }
    section("Passed", passed);
    if (m_style.verbose || skipped.empty()) {
      section("Skipped", skipped);
    } else {
      // Without -v the skips are one count line: on a machine without a driver they were 30 of
      // 55 lines, each saying why a check had nothing to judge.
      heading(fmt::format("Skipped ({})", skipped.size()));
      m_out +=
          wrap(fmt::format("{} {} (-v lists {} with the reasons)", label(Status::skip),
                           plural(skipped.size(), "result"), skipped.size() == 1 ? "it" : "each"),
               m_width, "", std::string(k_result_indent, ' '));
    }
  }

  void summary_line() {
    const ReportSummary& sum = m_report.summary;
    const std::string counts = fmt::format("{} passed, {}, {} failed, {}, {} skipped", sum.pass,
                                           plural(sum.warn, "warning", "warnings"), sum.fail,
                                           plural(sum.error, "error", "errors"), sum.skip);
    m_out += "\n" +
             wrap(fmt::format("Result: {}  {}",
                              paint(upper(to_string(sum.overall)), color_of(sum.overall)), counts),
                  m_width, "", "        ");
  }

  const Report& m_report;
  const TextStyle& m_style;
  size_t m_width;
  Inventory m_inventory;
  std::string m_out;
};

} // namespace

std::string render_text(const Report& report, const TextStyle& style) {
  return TextWriter(report, style).render();
}

} // namespace gpucheck::render
