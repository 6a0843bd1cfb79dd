#include "fleet/fleet_render.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>

#include "gpucheck/model/utc_time.hpp"

namespace gpucheck::fleet {

namespace {

std::string or_dash(const std::string& text) {
  return text.empty() ? "-" : text;
}

std::string nodes_word(size_t n) {
  return fmt::format("{} node{}", n, n == 1 ? "" : "s");
}

std::string summary_line(const FleetSummary& s) {
  std::string line = fmt::format("{}: {} passed, {} warned, {} failing", nodes_word(s.nodes),
                                 s.pass, s.warn, s.failing);
  if (s.stale > 0) {
    line += fmt::format("; {} stale report{} not counted", s.stale, s.stale == 1 ? "" : "s");
  }
  if (s.rejected > 0) {
    line += fmt::format("; {} input{} refused", s.rejected, s.rejected == 1 ? "" : "s");
  }
  return line;
}

/// "gpu.ecc_uncorrected GPU 1 (1320924004411), driver.missing": each code with its GPU.
std::string codes_cell(const NodeReport& node) {
  std::vector<std::string> items;
  for (const CodeOnGpu& item : node.failing) {
    const std::string gpu = gpu_label(item);
    items.push_back(gpu.empty() ? item.code : fmt::format("{} {}", item.code, gpu));
  }
  return items.empty() ? "-" : fmt::format("{}", fmt::join(items, ", "));
}

/// "infer-h100-04 (GPU 1)", "dgx-3 (GPUs 0, 5)", "build-7f3c": a group's nodes with the GPUs
/// that have its code.
std::string members_text(const CodeGroup& group) {
  std::vector<std::string> items;
  for (size_t i = 0; i < group.nodes.size(); ++i) {
    const std::vector<int>& gpus = i < group.gpus.size() ? group.gpus[i] : std::vector<int>();
    items.push_back(gpus.empty() ? group.nodes[i]
                                 : fmt::format("{} (GPU{} {})", group.nodes[i],
                                               gpus.size() == 1 ? "" : "s", fmt::join(gpus, ", ")));
  }
  return fmt::format("{}", fmt::join(items, ", "));
}

std::string stale_text(const StaleReport& stale) {
  return fmt::format("{}: {} ({}), newer: {}", stale.node, stale.source,
                     stale.generated_at.empty() ? "no time" : stale.generated_at,
                     stale.superseded_by);
}

nlohmann::json code_items_json(const std::vector<CodeOnGpu>& items) {
  nlohmann::json out = nlohmann::json::array();
  for (const CodeOnGpu& item : items) {
    out.push_back(
        {{"code", item.code},
         {"gpu_index", item.gpu_index ? nlohmann::json(*item.gpu_index) : nlohmann::json(nullptr)},
         {"uuid", item.uuid},
         {"serial", item.serial}});
  }
  return out;
}

std::string group_label(const CodeGroup& group) {
  if (group.title.empty()) {
    return group.code;
  }
  return group.known ? fmt::format("{} ({})", group.title, group.code)
                     : fmt::format("{}: {}", group.code, group.title);
}

/// Markdown table cells may not hold '|' or a newline.
std::string cell(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '|') {
      out += "\\|";
    } else if (c == '\n') {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out.empty() ? "-" : out;
}

} // namespace

std::string render_fleet_text(const FleetTable& table) {
  std::string out = fmt::format("gpucheck merge: {}\n", summary_line(table.summary));
  for (bool failing : {true, false}) {
    const bool any = std::any_of(table.groups.begin(), table.groups.end(),
                                 [&](const CodeGroup& g) { return g.failing == failing; });
    if (!any) {
      continue;
    }
    out += failing ? "\nFailing, by code\n" : "\nWarnings, by code\n";
    for (const CodeGroup& group : table.groups) {
      if (group.failing != failing) {
        continue;
      }
      out += fmt::format("  {:>9}: {}\n", nodes_word(group.nodes.size()), group_label(group));
      out += fmt::format("             {}\n", members_text(group));
    }
  }
  if (!table.nodes.empty()) {
    const std::vector<std::string> head = {"NODE", "GPUS", "DRIVER",  "CUDA",         "CUDNN",
                                           "MODE", "AGE",  "VERDICT", "FAILING CODES"};
    std::vector<std::vector<std::string>> rows;
    for (const NodeReport& node : table.nodes) {
      rows.push_back({node.node, node.gpus, or_dash(node.driver), or_dash(node.cuda),
                      or_dash(node.cudnn), or_dash(node.mode), age_text(node.age), node.verdict,
                      codes_cell(node)});
    }
    std::vector<size_t> width(head.size());
    for (size_t c = 0; c < head.size(); ++c) {
      width[c] = head[c].size();
      for (const auto& row : rows) {
        width[c] = std::max(width[c], row[c].size());
      }
    }
    const auto line = [&](const std::vector<std::string>& row) {
      std::string text;
      for (size_t c = 0; c < row.size(); ++c) {
        text += c + 1 == row.size() ? row[c] : fmt::format("{:<{}}  ", row[c], width[c]);
      }
      return text + "\n";
    };
    out += '\n'; // in parts: GCC 12 -O3 warns on `"\n" + std::string` (stringop-overflow)
    out += line(head);
    for (const auto& row : rows) {
      out += line(row);
    }
  }
  if (!table.rejected.empty()) {
    out += fmt::format("\nRefused inputs ({})\n", table.rejected.size());
    for (const RejectedInput& r : table.rejected) {
      out += fmt::format("  {}: {}\n", r.source, r.reason);
    }
  }
  if (!table.stale.empty()) {
    out += fmt::format("\nStale reports ({}): a newer report of the same node counts\n",
                       table.stale.size());
    for (const StaleReport& stale : table.stale) {
      out += fmt::format("  {}\n", stale_text(stale));
    }
  }
  bool noted = false;
  for (const NodeReport& node : table.nodes) {
    for (const std::string& note : node.notes) {
      if (!noted) {
        out += "\nNotes\n";
        noted = true;
      }
      out += fmt::format("  {} ({}): {}\n", node.node, node.source, note);
    }
  }
  return out;
}

std::string render_fleet_json(const FleetTable& table) {
  nlohmann::json j;
  j["merge_format_version"] = 1;
  j["merged_at"] = format_utc_time(table.now);
  j["summary"] = {{"nodes", table.summary.nodes},       {"pass", table.summary.pass},
                  {"warn", table.summary.warn},         {"failing", table.summary.failing},
                  {"rejected", table.summary.rejected}, {"stale", table.summary.stale}};
  j["groups"] = nlohmann::json::array();
  for (const CodeGroup& group : table.groups) {
    nlohmann::json members = nlohmann::json::array();
    for (size_t i = 0; i < group.nodes.size(); ++i) {
      members.push_back(
          {{"node", group.nodes[i]},
           {"gpu_indices", i < group.gpus.size() ? group.gpus[i] : std::vector<int>()}});
    }
    j["groups"].push_back({{"code", group.code},
                           {"title", group.title},
                           {"severity", group.failing ? "fail" : "warn"},
                           {"count", group.nodes.size()},
                           {"nodes", group.nodes},
                           {"members", members}});
  }
  j["nodes"] = nlohmann::json::array();
  for (const NodeReport& node : table.nodes) {
    j["nodes"].push_back(
        {{"node", node.node},
         {"source", node.source},
         {"gpu_count", node.gpu_count},
         {"pci_gpu_count", node.pci_gpu_count},
         {"gpus", node.gpus},
         {"driver", node.driver},
         {"cuda", node.cuda},
         {"cudnn", node.cudnn},
         {"verdict", node.verdict},
         {"failing_codes", node.failing_codes},
         {"warning_codes", node.warning_codes},
         {"failing", code_items_json(node.failing)},
         {"warnings", code_items_json(node.warnings)},
         {"mode", node.mode},
         {"generated_at", node.generated_at},
         {"age_s", node.age ? nlohmann::json(node.age->count()) : nlohmann::json(nullptr)},
         {"age", age_text(node.age)},
         {"tool_version", node.tool_version},
         {"schema_version",
          node.schema_version ? nlohmann::json(*node.schema_version) : nlohmann::json(nullptr)},
         {"notes", node.notes}});
  }
  j["rejected"] = nlohmann::json::array();
  for (const RejectedInput& r : table.rejected) {
    j["rejected"].push_back({{"source", r.source}, {"reason", r.reason}});
  }
  j["stale"] = nlohmann::json::array();
  for (const StaleReport& stale : table.stale) {
    j["stale"].push_back({{"node", stale.node},
                          {"source", stale.source},
                          {"generated_at", stale.generated_at},
                          {"superseded_by", stale.superseded_by}});
  }
  // A file name that is not UTF-8 must not cost the table: such bytes become U+FFFD.
  return j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string render_fleet_markdown(const FleetTable& table) {
  std::string out =
      fmt::format("## gpucheck fleet report\n\n**{}**\n", summary_line(table.summary));
  if (!table.groups.empty()) {
    out += "\n| Nodes | Severity | Code | Meaning | Which |\n| ---: | --- | --- | --- | --- |\n";
    for (const CodeGroup& group : table.groups) {
      out += fmt::format("| {} | {} | `{}` | {} | {} |\n", group.nodes.size(),
                         group.failing ? "fail" : "warn", group.code, cell(group.title),
                         cell(members_text(group)));
    }
  }
  if (!table.nodes.empty()) {
    out += "\n| Node | GPUs | Driver | CUDA | cuDNN | Mode | Age | Verdict | Failing codes |\n"
           "| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n";
    for (const NodeReport& node : table.nodes) {
      out += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", cell(node.node),
                         cell(node.gpus), cell(node.driver), cell(node.cuda), cell(node.cudnn),
                         cell(node.mode), age_text(node.age),
                         node.verdict == "pass" || node.verdict == "warn"
                             ? node.verdict
                             : fmt::format("**{}**", cell(node.verdict)),
                         cell(codes_cell(node)));
    }
  }
  if (!table.rejected.empty()) {
    out += fmt::format("\n### Refused inputs ({})\n\n", table.rejected.size());
    for (const RejectedInput& r : table.rejected) {
      out += fmt::format("- `{}`: {}\n", r.source, cell(r.reason));
    }
  }
  if (!table.stale.empty()) {
    out += fmt::format("\n### Stale reports ({})\n\nA newer report of the same node counts.\n\n",
                       table.stale.size());
    for (const StaleReport& stale : table.stale) {
      out += fmt::format("- {}: `{}` ({}), newer: `{}`\n", cell(stale.node), stale.source,
                         stale.generated_at.empty() ? "no time" : cell(stale.generated_at),
                         stale.superseded_by);
    }
  }
  bool noted = false;
  for (const NodeReport& node : table.nodes) {
    for (const std::string& note : node.notes) {
      if (!noted) {
        out += "\n### Notes\n\n";
        noted = true;
      }
      out += fmt::format("- {} (`{}`): {}\n", cell(node.node), node.source, cell(note));
    }
  }
  return out;
}

} // namespace gpucheck::fleet
