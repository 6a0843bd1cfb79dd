#include "fleet/fleet_table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <system_error>

#include "gpucheck/finding_catalog.hpp"
#include "gpucheck/model/json_input.hpp"

namespace gpucheck::fleet {

namespace fs = std::filesystem;

bool natural_less(const std::string& a, const std::string& b) {
  size_t i = 0;
  size_t j = 0;
  while (i < a.size() && j < b.size()) {
    const bool da = std::isdigit(static_cast<unsigned char>(a[i])) != 0;
    const bool db = std::isdigit(static_cast<unsigned char>(b[j])) != 0;
    if (da && db) {
      size_t ei = i;
      size_t ej = j;
      while (ei < a.size() && std::isdigit(static_cast<unsigned char>(a[ei])) != 0) {
        ++ei;
      }
      while (ej < b.size() && std::isdigit(static_cast<unsigned char>(b[ej])) != 0) {
        ++ej;
      }
      std::string_view na(a.data() + i, ei - i);
      std::string_view nb(b.data() + j, ej - j);
      while (na.size() > 1 && na.front() == '0') {
        na.remove_prefix(1);
      }
      while (nb.size() > 1 && nb.front() == '0') {
        nb.remove_prefix(1);
      }
      if (na.size() != nb.size()) {
        return na.size() < nb.size();
      }
      if (na != nb) {
        return na < nb;
      }
      i = ei;
      j = ej;
      continue;
    }
    if (a[i] != b[j]) {
      return a[i] < b[j];
    }
    ++i;
    ++j;
  }
  if ((a.size() - i) != (b.size() - j)) {
    return (a.size() - i) < (b.size() - j);
  }
  return a < b;
}

Expected<std::vector<std::string>> report_files(const std::vector<std::string>& paths) {
  std::vector<std::string> files;
  for (const std::string& path : paths) {
    std::error_code ec;
    const fs::file_status status = fs::status(path, ec);
    if (ec || !fs::exists(status)) {
      return Error{fmt::format("'{}' does not exist", path)};
    }
    if (!fs::is_directory(status)) {
      files.push_back(path);
      continue;
    }
    std::vector<std::string> found;
    for (fs::recursive_directory_iterator
             it(path, fs::directory_options::skip_permission_denied, ec),
         end;
         !ec && it != end; it.increment(ec)) {
      // Regular files only: a FIFO named x.json would hang the merge (issue 21, item 5).
      if (it->path().extension() == ".json" && it->is_regular_file(ec)) {
        found.push_back(it->path().string());
      }
    }
    if (ec) {
      return Error{fmt::format("cannot read directory '{}': {}", path, ec.message())};
    }
    if (found.empty()) {
      return Error{fmt::format("directory '{}' holds no *.json file", path)};
    }
    std::sort(found.begin(), found.end(), natural_less);
    files.insert(files.end(), found.begin(), found.end());
  }
  return files;
}

FleetTable merge_files(const std::vector<std::string>& files) {
  std::vector<NodeReport> nodes;
  std::vector<RejectedInput> rejected;
  for (const std::string& file : files) {
    // Read with a size cap (a 1 GB input cost 2 GB of memory); the cap's error names the file.
    Expected<std::string> text = read_input_file(file);
    if (!text) {
      rejected.push_back({file, "cannot be read (" + text.error().message + ")"});
      continue;
    }
    Expected<NodeReport> node = read_node_report(*text, file);
    if (!node) {
      rejected.push_back({file, node.error().message});
      continue;
    }
    nodes.push_back(std::move(node).value());
  }
  return merge_nodes(std::move(nodes), std::move(rejected));
}

FleetTable merge_nodes(std::vector<NodeReport> nodes, std::vector<RejectedInput> rejected) {
  FleetTable table;
  std::stable_sort(nodes.begin(), nodes.end(), [](const NodeReport& a, const NodeReport& b) {
    return a.node != b.node ? natural_less(a.node, b.node) : natural_less(a.source, b.source);
  });
  std::map<std::string, std::vector<std::string>> sources_by_node;
  for (const NodeReport& node : nodes) {
    sources_by_node[node.node].push_back(node.source);
  }
  for (NodeReport& node : nodes) {
    const std::vector<std::string>& sources = sources_by_node[node.node];
    if (sources.size() > 1) {
      node.notes.push_back(fmt::format("host name also in {} other report{}; each is counted",
                                       sources.size() - 1, sources.size() == 2 ? "" : "s"));
    }
  }

  std::map<std::pair<bool, std::string>, std::vector<std::string>> by_code;
  for (const NodeReport& node : nodes) {
    ++table.summary.nodes;
    if (node.verdict == "pass") {
      ++table.summary.pass;
    } else if (node.verdict == "warn") {
      ++table.summary.warn;
    } else {
      ++table.summary.failing;
    }
    for (const std::string& code : node.failing_codes) {
      by_code[{true, code}].push_back(node.node);
    }
    for (const std::string& code : node.warning_codes) {
      by_code[{false, code}].push_back(node.node);
    }
  }
  for (auto& [key, members] : by_code) {
    CodeGroup group;
    group.failing = key.first;
    group.code = key.second;
    if (const FindingSpec* spec = find_finding_spec(group.code)) {
      group.title = std::string(spec->title);
    }
    group.nodes = std::move(members);
    table.groups.push_back(std::move(group));
  }
  std::stable_sort(table.groups.begin(), table.groups.end(),
                   [](const CodeGroup& a, const CodeGroup& b) {
                     if (a.failing != b.failing) {
                       return a.failing;
                     }
                     if (a.nodes.size() != b.nodes.size()) {
                       return a.nodes.size() > b.nodes.size();
                     }
                     return a.code < b.code;
                   });
  table.nodes = std::move(nodes);
  table.rejected = std::move(rejected);
  table.summary.rejected = static_cast<int>(table.rejected.size());
  return table;
}

} // namespace gpucheck::fleet
