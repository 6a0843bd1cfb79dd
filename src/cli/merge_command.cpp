#include "cli/merge_command.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <ostream>

#include "cli/clock.hpp"
#include "cli/exit_codes.hpp"
#include "fleet/fleet_render.hpp"
#include "fleet/fleet_table.hpp"
#include "gpucheck/model/text.hpp"

namespace gpucheck::cli {

CLI::App* add_merge_command(CLI::App& app, MergeOptions& options) {
  CLI::App* merge = app.add_subcommand(
      "merge", "Merge many nodes' JSON reports (files or directories) into one table");
  merge->add_option("reports", options.paths,
                    "Report files (gpucheck --json) or directories searched for *.json");
  merge->add_option("--format", options.format, "Output: text (default), json or markdown")
      ->check(CLI::IsMember({"text", "json", "markdown"}));
  merge->add_flag("--json", options.json, "Same as --format json");
  return merge;
}

int run_merge(const MergeOptions& options, std::ostream& out, std::ostream& err) {
  if (options.paths.empty()) {
    err << "gpucheck: merge needs report files or directories (gpucheck merge reports/)\n";
    return k_exit_usage;
  }
  Expected<std::vector<std::string>> files = fleet::report_files(options.paths);
  if (!files) {
    err << "gpucheck: merge: " << files.error().message << "\n";
    return k_exit_usage;
  }
  const fleet::FleetTable table = fleet::merge_files(*files, report_now());
  for (const fleet::RejectedInput& rejected : table.rejected) {
    // A file's name is another party's text too.
    err << visible_text(fmt::format("gpucheck: merge: {}: {}", rejected.source, rejected.reason))
        << "\n";
  }
  if (table.nodes.empty()) {
    err << fmt::format("gpucheck: merge: none of the {} input file{} is a gpucheck report\n",
                       files->size(), files->size() == 1 ? "" : "s");
    return k_exit_usage;
  }
  const std::string format = options.json ? "json" : options.format;
  if (format == "json") {
    out << fleet::render_fleet_json(table);
  } else if (format == "markdown") {
    out << visible_text(fleet::render_fleet_markdown(table)); // other nodes' text shown safely
  } else {
    out << visible_text(fleet::render_fleet_text(table));
  }
  out.flush();
  if (!out) {
    return k_exit_internal;
  }
  return table.summary.failing > 0 || table.summary.rejected > 0 ? k_exit_check_failed : k_exit_ok;
}

} // namespace gpucheck::cli
