#include "render/markdown.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <vector>

#include "gpucheck/model/stack_versions.hpp"
#include "render/inventory.hpp"

namespace gpucheck::render {

namespace {

std::string upper(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  return out;
}

/// FAIL and ERROR in bold, so the eye finds them in the table.
std::string status_cell(Status status) {
  const std::string word = upper(to_string(status));
  return status == Status::fail || status == Status::error ? "**" + word + "**" : word;
}

std::string subject(const CheckResult& result) {
  return result.gpu_index ? fmt::format("GPU {}", *result.gpu_index) : "system";
}

std::string or_dash(std::string_view text) {
  return text.empty() ? "-" : markdown_escape(text);
}

std::string yes_no(std::optional<bool> value, std::string_view yes, std::string_view no) {
  if (!value) {
    return "unknown";
  }
  return std::string(*value ? yes : no);
}

class MarkdownWriter {
public:
  explicit MarkdownWriter(const Report& report)
      : m_report(report), m_inventory(make_inventory(report.snapshot)) {}

  std::string render() {
    // What to do first, then every result (a table of 90 rows on eight GPUs), then the facts.
    heading();
    root_causes();
    problems();
    summary_table();
    inventory();
    return std::move(m_out);
  }

private:
  const SystemSnapshot& snapshot() const { return m_report.snapshot; }

  void line(std::string_view text = "") {
    m_out += text;
    m_out += "\n";
  }

  void table(const std::vector<std::string>& header,
             const std::vector<std::vector<std::string>>& rows) {
    line("| " + fmt::format("{}", fmt::join(header, " | ")) + " |");
    std::string rule = "|";
    for (size_t i = 0; i < header.size(); ++i) {
      rule += "---|";
    }
    line(rule);
    for (const std::vector<std::string>& row : rows) {
      line("| " + fmt::format("{}", fmt::join(row, " | ")) + " |");
    }
    line();
  }

  void heading() {
    const ReportContext& ctx = m_report.context;
    const ReportSummary& sum = m_report.summary;
    line(fmt::format("## gpucheck report: {}", upper(to_string(sum.overall))));
    line();
    std::string about = fmt::format("gpucheck {}, {} mode", markdown_escape(ctx.tool_version),
                                    markdown_escape(ctx.mode.empty() ? "unknown" : ctx.mode));
    if (!ctx.generated_at.empty()) {
      about += fmt::format(", {}", markdown_escape(ctx.generated_at));
    }
    if (!ctx.matrix_version.empty()) {
      about += fmt::format(", compatibility data {}", markdown_escape(ctx.matrix_version));
    }
    line(about + ".");
    line(fmt::format("{} passed, {} warned, {} failed, {} errors, {} skipped.", sum.pass, sum.warn,
                     sum.fail, sum.error, sum.skip));
    line();
  }

  /// The faults that explain other results, before everything else: the one thing to fix.
  void root_causes() {
    if (m_report.root_causes.empty()) {
      return;
    }
    line(fmt::format("### Root {} (fix first)",
                     m_report.root_causes.size() == 1 ? "cause" : "causes"));
    line();
    for (const RootCause& cause : m_report.root_causes) {
      std::string where = markdown_code(cause.check_id);
      if (cause.gpu_index) {
        where += fmt::format(" on GPU {}", *cause.gpu_index);
      }
      line(fmt::format("- **{}** ({}): {}", markdown_code(cause.code), where,
                       or_dash(cause.message)));
      if (!cause.remedy.empty()) {
        line(fmt::format("  - **Fix:** {}", markdown_escape(cause.remedy)));
      }
      std::vector<std::string> names;
      for (const ResultRef& ref : cause.explains) {
        names.push_back(
            ref.gpu_index ? fmt::format("{} (GPU {})", markdown_code(ref.check_id), *ref.gpu_index)
                          : markdown_code(ref.check_id));
      }
      line(fmt::format("  - **Explains:** {}", fmt::join(names, ", ")));
    }
    line();
  }

  void summary_table() {
    if (m_report.results.empty()) {
      line("No checks were run.");
      line();
      return;
    }
    line(fmt::format("### All results ({})", m_report.results.size()));
    line();
    std::vector<std::vector<std::string>> rows;
    for (const CheckResult& result : m_report.results) {
      rows.push_back({markdown_code(result.check_id, true), subject(result),
                      status_cell(result.status),
                      or_dash(result.summary.empty() ? result.title : result.summary)});
    }
    table({"Check", "Subject", "Status", "Summary"}, rows);
  }

  void finding(const Finding& f, std::optional<int> result_gpu) {
    std::string head = fmt::format("- **Finding:** {} ({})", markdown_code(f.code),
                                   markdown_escape(to_string(f.severity)));
    if (f.gpu_index && f.gpu_index != result_gpu) {
      head += fmt::format(", GPU {}", *f.gpu_index);
    }
    line(head);
    line(fmt::format("  - **Cause:** {}", or_dash(f.message)));
    if (!f.remedy.empty()) {
      line(fmt::format("  - **Remedy:** {}", markdown_escape(f.remedy)));
    }
  }

  void problems() {
    std::vector<const CheckResult*> list;
    for (Status wanted : {Status::fail, Status::error, Status::warn}) {
      for (const CheckResult& result : m_report.results) {
        if (result.status == wanted) {
          list.push_back(&result);
        }
      }
    }
    if (list.empty()) {
      return;
    }
    line(fmt::format("### Problems ({})", list.size()));
    line();
    for (const CheckResult* result : list) {
      std::string head = fmt::format("#### {} {}", upper(to_string(result->status)),
                                     markdown_code(result->check_id));
      if (result->gpu_index) {
        head += fmt::format(" on GPU {}", *result->gpu_index);
      }
      if (!result->title.empty()) {
        head += ": " + markdown_escape(result->title);
      }
      line(head);
      line();
      if (!result->summary.empty()) {
        line(markdown_escape(result->summary));
        line();
      }
      for (const Finding& f : result->findings) {
        finding(f, result->gpu_index);
      }
      for (const Metric& metric : result->metrics) {
        line(fmt::format("- **Metric:** {} = {} {}{}", markdown_code(metric.name),
                         fmt::format("{:g}", metric.value), markdown_escape(metric.unit),
                         metric.note.empty() ? "" : " (" + markdown_escape(metric.note) + ")"));
      }
      if (!result->findings.empty() || !result->metrics.empty()) {
        line();
      }
    }
  }

  // ---- inventory ----------------------------------------------------------------------------

  void inventory() {
    line("<details>");
    line("<summary>Inventory: host, driver, GPUs, libraries, toolkit, environment</summary>");
    line();
    host_and_driver();
    gpus();
    libraries();
    environment();
    gaps();
    line("</details>");
  }

  void host_and_driver() {
    const HostInfo& host = snapshot().host;
    const EnvironmentInfo& env = snapshot().environment;
    const KernelModuleInfo& km = snapshot().kernel_module;
    const NvmlInfo& nvml = snapshot().nvml;
    const CudaDriverInfo& cuda = snapshot().cuda;
    const ToolkitInfo& tk = snapshot().toolkit;
    std::vector<std::vector<std::string>> rows;
    const auto row = [&rows](std::string_view name, std::string value) {
      rows.push_back({std::string(name), std::move(value)});
    };
    row("Host name", or_dash(host.hostname));
    row("OS", or_dash(host.os));
    row("Kernel",
        or_dash(host.kernel) + (host.arch.empty() ? "" : " (" + markdown_escape(host.arch) + ")"));
    row("glibc", or_dash(host.glibc));
    row("CPU", fmt::format("{} x {}", host.cpu_count, or_dash(host.cpu_model)));
    if (m_inventory.host_memory_gib) {
      row("Memory", fmt::format("{} GiB", *m_inventory.host_memory_gib));
    }
    std::string container = markdown_escape(m_inventory.container);
    if (!env.container.evidence.empty()) {
      container +=
          " (" + markdown_escape(fmt::format("{}", fmt::join(env.container.evidence, "; "))) + ")";
    }
    row("Container", container + (env.wsl ? ", under WSL" : ""));
    std::string module = km.version ? markdown_escape(*km.version) : "not loaded";
    if (km.flavor) {
      module += " (" + markdown_escape(*km.flavor) + ")";
    }
    module += "; " + m_inventory.modules;
    row("Kernel module", module);
    if (!km.version_text.empty()) {
      row("/proc/driver/nvidia/version", markdown_code(km.version_text, true));
    }
    std::string nvml_text = nvml.library.loaded ? markdown_code(nvml.library.path, true)
                                                : "not loadable: " + or_dash(nvml.library.error);
    if (nvml.init_result) {
      nvml_text += fmt::format("; init {}", markdown_escape(nvml.init_result_name));
    }
    if (nvml.driver_version) {
      nvml_text += fmt::format("; driver {}", markdown_escape(*nvml.driver_version));
    }
    if (nvml.failure) {
      nvml_text += "; probe failed: " + markdown_escape(nvml.failure->detail);
    }
    row("NVML", nvml_text);
    std::string cuda_text = cuda.library.loaded ? markdown_code(cuda.library.path, true)
                                                : "not loadable: " + or_dash(cuda.library.error);
    if (cuda.driver_version) {
      cuda_text += fmt::format("; CUDA {}", cuda_version_text(*cuda.driver_version));
    }
    if (cuda.init_result) {
      cuda_text += fmt::format("; cuInit {}", markdown_escape(cuda.init_result_name));
    }
    if (cuda.failure) {
      cuda_text += "; probe failed: " + markdown_escape(cuda.failure->detail);
    }
    row("libcuda", cuda_text);
    if (tk.nvcc_path) {
      row("nvcc", fmt::format("{} {}", markdown_escape(tk.nvcc_version.value_or("?")),
                              markdown_code(*tk.nvcc_path, true)));
    }
    for (const ToolkitInstall& install : tk.installs) {
      row("Toolkit",
          fmt::format("{} {}", or_dash(install.version), markdown_code(install.path, true)));
    }
    for (const PciDevice& pci : km.pci_devices) {
      row("PCI device", fmt::format("{} {} driver {}", markdown_escape(pci.bdf),
                                    markdown_escape(pci.device_id), or_dash(pci.driver)));
    }
    line("#### Host and driver");
    line();
    table({"Item", "Value"}, rows);
  }

  void gpus() {
    if (m_inventory.gpus.empty()) {
      return;
    }
    std::vector<std::vector<std::string>> rows;
    for (const GpuView& view : m_inventory.gpus) {
      const GpuInfo& gpu = *view.gpu;
      const std::string memory = view.memory_mib ? fmt::format("{} MiB", *view.memory_mib) : "-";
      std::string pcie = "-";
      if (view.pcie_current) {
        pcie = fmt::format("Gen{} x{}", view.pcie_current->first, view.pcie_current->second);
        if (view.pcie_max) {
          pcie += fmt::format(" (max Gen{} x{})", view.pcie_max->first, view.pcie_max->second);
        }
      }
      rows.push_back({std::to_string(gpu.index), or_dash(gpu.name), markdown_code(gpu.uuid, true),
                      or_dash(gpu.serial), markdown_escape(gpu.pci_bus_id),
                      view.compute_capability.value_or("-"), memory, pcie,
                      yes_no(gpu.ecc_enabled, "on", "off"),
                      yes_no(gpu.persistence_mode, "on", "off"),
                      gpu.cuda_ordinal ? std::to_string(*gpu.cuda_ordinal) : "hidden"});
    }
    line("#### GPUs");
    line();
    table({"Index", "Name", "UUID", "Serial", "Bus", "CC", "Memory", "PCIe", "ECC", "Persistence",
           "CUDA ordinal"},
          rows);
  }

  void libraries() {
    std::vector<std::vector<std::string>> rows;
    for (const LibraryView& view : m_inventory.libraries) {
      const LibraryFamily& lib = *view.family;
      std::string loaded;
      switch (view.state) {
      case LibraryState::probe_failed:
        loaded = "probe failed: " + markdown_escape(lib.failure->detail);
        break;
      case LibraryState::loaded:
        loaded = fmt::format(
            "{} {}", or_dash(lib.load.version),
            markdown_code(lib.load.real_path.empty() ? lib.load.path : lib.load.real_path, true));
        if (view.built_for_cuda) {
          loaded += fmt::format(", built for CUDA {}", cuda_version_text(*view.built_for_cuda));
        }
        break;
      case LibraryState::not_loaded_in_this_mode:
        loaded = "not loaded in this mode";
        break;
      case LibraryState::not_found:
        // The loader's words say why, when it was asked to load one.
        loaded = lib.load.name.empty() ? "not found" : "does not load: " + or_dash(lib.load.error);
        break;
      case LibraryState::does_not_load:
        loaded = "does not load: " + or_dash(lib.load.error);
        break;
      }
      std::vector<std::string> copies;
      for (const LibraryCopyView& copy : view.copies) {
        copies.push_back(fmt::format(
            "{} {} ({}{}{})", or_dash(copy.version), markdown_code(copy.copy->path, true),
            markdown_escape(copy.copy->origin), copy.copy->selected ? ", selected" : "",
            copy.copy->shadowed ? ", shadowed" : ""));
      }
      rows.push_back({markdown_escape(lib.family), loaded,
                      copies.empty() ? "-" : fmt::format("{}", fmt::join(copies, "<br>"))});
    }
    if (rows.empty()) {
      return;
    }
    line("#### Libraries");
    line();
    table({"Family", "Loaded", "Copies on disk"}, rows);
  }

  void environment() {
    const std::map<std::string, std::string>& variables = snapshot().environment.variables;
    if (variables.empty()) {
      return;
    }
    std::vector<std::vector<std::string>> rows;
    for (const auto& [name, value] : variables) {
      rows.push_back(
          {markdown_code(name, true), value.empty() ? "(empty)" : markdown_code(value, true)});
    }
    line("#### Environment");
    line();
    table({"Variable", "Value"}, rows);
  }

  void gaps() {
    if (snapshot().probe_issues.empty()) {
      return;
    }
    line("#### Gaps in the facts");
    line();
    for (const ProbeIssue& issue : snapshot().probe_issues) {
      line(fmt::format("- {}: {}", markdown_code(issue.probe), markdown_escape(issue.message)));
    }
    line();
  }

  const Report& m_report;
  Inventory m_inventory;
  std::string m_out;
};

} // namespace

std::string markdown_escape(std::string_view text) {
  const auto is_alnum = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; };
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    switch (c) {
    case '_':
      // An underscore inside a word never starts emphasis in GFM: "nvidia_uvm" stays readable.
      if (i > 0 && i + 1 < text.size() && is_alnum(text[i - 1]) && is_alnum(text[i + 1])) {
        out += c;
      } else {
        out += "\\_";
      }
      break;
    case '\\':
    case '`':
    case '*':
    case '[':
    case ']':
    case '<':
    case '>':
    case '|':
    case '~':
    case '$':
    case '#':
      out += '\\';
      out += c;
      break;
    case '&':
      out += "&amp;";
      break;
    case '\n':
    case '\r':
    case '\t':
      out += ' ';
      break;
    default:
      out += c;
    }
  }
  return out;
}

std::string markdown_code(std::string_view text, bool in_table) {
  if (text.empty()) {
    return "";
  }
  std::string body;
  size_t longest_run = 0;
  size_t run = 0;
  for (const char c : text) {
    run = c == '`' ? run + 1 : 0;
    longest_run = std::max(longest_run, run);
    if (c == '\n' || c == '\r' || c == '\t') {
      body += ' ';
    } else if (c == '|' && in_table) {
      body += "\\|";
    } else {
      body += c;
    }
  }
  const std::string fence(longest_run + 1, '`');
  // A span that starts or ends with a backtick needs a space inside the fence (CommonMark
  // strips one space on each side).
  const bool pad = body.front() == '`' || body.back() == '`';
  return pad ? fence + " " + body + " " + fence : fence + body + fence;
}

std::string render_markdown(const Report& report) {
  return MarkdownWriter(report).render();
}

} // namespace gpucheck::render
