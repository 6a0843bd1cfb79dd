#include "render/bundle.hpp"

#include <fmt/format.h>

#include "render/github.hpp"
#include "render/json.hpp"
#include "render/junit.hpp"
#include "render/markdown.hpp"
#include "render/prometheus.hpp"
#include "render/text.hpp"
#include "render/visible.hpp"

namespace gpucheck::render {

namespace {

constexpr const char* k_dir = "gpucheck-bundle/";

std::string readme(const std::map<std::string, std::string>& sources, bool redacted) {
  std::string text = fmt::format(
      "gpucheck support bundle\n\n"
      "report.txt        the report as text (gpucheck -v)\n"
      "report.json       the report as JSON (docs/report.schema.json)\n"
      "report.md         the report as Markdown, to paste into an issue\n"
      "report.junit.xml  the report as JUnit XML\n"
      "report.prom       the report as Prometheus metrics (node_exporter's textfile format)\n"
      "report.github.txt the report as GitHub Actions annotations\n"
      "snapshot.json     the facts alone: gpucheck --from-snapshot snapshot.json re-judges them\n");
  for (const auto& [name, data] : sources) {
    const char* what = name == "nvidia-smi-q.txt" ? "the output of nvidia-smi -q"
                       : name == "lspci-vvv.txt"  ? "the output of lspci -vvv"
                                                  : "raw text gpucheck read";
    text += fmt::format("sources/{}  {}\n", name, what);
  }
  text += redacted ? "\nRedacted: host name, user names in home paths, IP and MAC addresses, GPU "
                     "UUIDs, serial numbers (also those nvidia-smi and lspci label so) and GUIDs "
                     "are replaced by placeholders (host-0, user-0, ipv4-0, ipv6-0, mac-0, GPU-0, "
                     "serial-0, guid-0), the same in every file.\n"
                   : "\nNot redacted (--no-redact): this bundle holds the host name, user names, "
                     "addresses and GPU serial numbers as they are.\n";
  return text;
}

} // namespace

std::vector<ArchiveMember> bundle_members(const Report& report,
                                          const std::map<std::string, std::string>& sources,
                                          const BundleOptions& options) {
  Redactor redactor(options.hints);
  const Report shown = options.redact ? redactor.redact(report) : report;
  TextStyle style;
  style.verbose = true;
  std::vector<ArchiveMember> members;
  const auto add = [&members](std::string name, std::string data) {
    members.push_back(ArchiveMember{k_dir + std::move(name), std::move(data)});
  };
  add("README.txt", readme(sources, options.redact));
  const Report visible = visible_report(shown); // the text files are read on terminals
  add("report.txt", render_text(visible, style));
  add("report.json", render_json(shown));
  add("report.md", render_markdown(visible));
  add("report.junit.xml", render_junit(shown));
  add("report.prom", render_prometheus(shown));
  add("report.github.txt", render_github(visible));
  add("snapshot.json", render_snapshot_json(shown.snapshot));
  if (options.redact) {
    // After the report: the GPUs' serials are numbered in NVML's order first; a serial only a
    // program's output names (a NIC's, a PCIe Device Serial Number) comes after them.
    for (const auto& [name, data] : sources) {
      redactor.learn_labelled_serials(data);
    }
  }
  for (const auto& [name, data] : sources) {
    add("sources/" + name, options.redact ? redactor.scrub(data) : data);
  }
  return members;
}

std::string make_bundle(const Report& report, const std::map<std::string, std::string>& sources,
                        const BundleOptions& options) {
  return make_gzip(make_tar(bundle_members(report, sources, options), options.mtime_s),
                   options.mtime_s);
}

} // namespace gpucheck::render
