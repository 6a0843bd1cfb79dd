#include "fleet/fleet_table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string_view>
#include <system_error>

#include "findings/catalog.hpp"
#include "gpucheck/model/json_input.hpp"
#include "gpucheck/model/utc_time.hpp"

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
      // Regular files only, never a link (a FIFO named x.json would hang the merge; a link
      // planted in a shared folder would have root read /etc/shadow).
      if (it->path().extension() == ".json" && it->is_regular_file(ec) && !it->is_symlink(ec)) {
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

FleetTable merge_files(const std::vector<std::string>& files, std::chrono::sys_seconds now) {
  std::vector<NodeReport> nodes;
  std::vector<RejectedInput> rejected;
  for (const std::string& file : files) {
    // Read with a size cap (a 1 GB input cost 2 GB of memory); the cap's error names the file.
    Expected<std::string> text = read_input_file(file, k_max_input_bytes, /*follow_links=*/false);
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
  return merge_nodes(std::move(nodes), std::move(rejected), now);
}

namespace {
/// Whether `text` is shaped like a finding code: "gpu.ecc_dbe", lower-case letters, digits, '_'
/// and '.', at most 64 characters.
bool code_shaped(std::string_view text) {
  return !text.empty() && text.size() <= 64 && std::all_of(text.begin(), text.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.';
  });
}
} // namespace

std::string_view unknown_code_title(std::string_view code) {
  // "gpu.compute (fail)": a failed result without a finding of its own, named by its check.
  if (const size_t open = code.find(" ("); open != std::string_view::npos && code.ends_with(')')) {
    const std::string_view status = code.substr(open + 2, code.size() - open - 3);
    if ((code_shaped(code.substr(0, open)) || code.substr(0, open) == "unnamed check") &&
        (status == "fail" || status == "error" || status == "warn")) {
      return "";
    }
  }
  return code_shaped(code) ? "not in this gpucheck's catalogue (another version's code?)"
                           : "not a finding code: as the node's report wrote it";
}

namespace {

/// The reports of one host (positions in the merge's list) and what to say about its name.
struct Host {
  std::vector<size_t> reports;
  std::string note;
};

/// Union-find over a few positions: which reports share a GPU, directly or through others.
class Components {
public:
  explicit Components(size_t n) : m_parent(n) {
    for (size_t i = 0; i < n; ++i) {
      m_parent[i] = i;
    }
  }
  size_t find(size_t i) {
    while (m_parent[i] != i) {
      m_parent[i] = m_parent[m_parent[i]];
      i = m_parent[i];
    }
    return i;
  }
  void unite(size_t a, size_t b) { m_parent[find(a)] = find(b); }

private:
  std::vector<size_t> m_parent;
};

/// The hosts among `nodes`, by the rule of merge_nodes.
std::vector<Host> hosts_of(const std::vector<NodeReport>& nodes) {
  std::vector<Host> hosts;
  std::map<std::string, std::vector<size_t>> by_name;
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i].anonymous) {
      hosts.push_back({{i}, ""});
    } else {
      by_name[nodes[i].node].push_back(i);
    }
  }
  for (const auto& [name, members] : by_name) {
    Components components(members.size());
    std::map<std::string, size_t> holder; // UUID -> the first member that names it
    for (size_t m = 0; m < members.size(); ++m) {
      for (const std::string& uuid : nodes[members[m]].gpu_uuids) {
        const auto [it, fresh] = holder.emplace(uuid, m);
        if (!fresh) {
          components.unite(m, it->second);
        }
      }
    }
    std::map<size_t, std::vector<size_t>> machines; // component -> reports, in list order
    std::vector<size_t> without_uuids;
    for (size_t m = 0; m < members.size(); ++m) {
      if (nodes[members[m]].gpu_uuids.empty()) {
        without_uuids.push_back(members[m]);
      } else {
        machines[components.find(m)].push_back(members[m]);
      }
    }
    if (machines.size() <= 1) {
      Host host;
      if (!machines.empty()) {
        host.reports = machines.begin()->second;
      }
      host.reports.insert(host.reports.end(), without_uuids.begin(), without_uuids.end());
      std::sort(host.reports.begin(), host.reports.end());
      hosts.push_back(std::move(host));
      continue;
    }
    // Machines with no GPU in common that share a host name (a cloned image, a default name):
    // each is a node; a report without GPU UUIDs cannot be placed and stands alone.
    for (auto& [component, reports] : machines) {
      hosts.push_back({std::move(reports),
                       fmt::format("host name shared by {} machines without a GPU in common: "
                                   "counted as {} nodes",
                                   machines.size(), machines.size())});
    }
    for (const size_t i : without_uuids) {
      hosts.push_back({{i},
                       fmt::format("host name shared by {} machines and this report names no "
                                   "GPU UUID: counted on its own",
                                   machines.size())});
    }
  }
  return hosts;
}

/// Whether report `a` supersedes `b`: newer; with a time before without; on a tie, the source
/// that sorts last.
bool supersedes(const NodeReport& a, const NodeReport& b) {
  if (a.generated.has_value() != b.generated.has_value()) {
    return a.generated.has_value();
  }
  if (a.generated && *a.generated != *b.generated) {
    return *a.generated > *b.generated;
  }
  return natural_less(b.source, a.source);
}

bool by_node_then_source(const std::string& node_a, const std::string& source_a,
                         const std::string& node_b, const std::string& source_b) {
  return node_a != node_b ? natural_less(node_a, node_b) : natural_less(source_a, source_b);
}

} // namespace

std::string age_text(std::optional<std::chrono::seconds> age) {
  if (!age) {
    return "-";
  }
  const int64_t s = age->count();
  if (s < -60) {
    return "future";
  }
  if (s < 60) {
    return fmt::format("{}s", std::max<int64_t>(s, 0));
  }
  if (s < 3600) {
    return fmt::format("{}m", s / 60);
  }
  if (s < 86400) {
    return fmt::format("{}h", s / 3600);
  }
  return fmt::format("{}d", s / 86400);
}

namespace {
/// Each host's newest report, with notes on its clock; the older ones are `stale`.
std::vector<NodeReport> newest_per_host(std::vector<NodeReport>& nodes,
                                        std::chrono::sys_seconds now,
                                        std::vector<StaleReport>& stale) {
  std::vector<NodeReport> counted;
  for (const Host& host : hosts_of(nodes)) {
    size_t newest = host.reports.front();
    for (const size_t i : host.reports) {
      if (supersedes(nodes[i], nodes[newest])) {
        newest = i;
      }
    }
    for (const size_t i : host.reports) {
      if (i != newest) {
        stale.push_back(
            {nodes[i].node, nodes[i].source, nodes[i].generated_at, nodes[newest].source});
      }
    }
    NodeReport node = std::move(nodes[newest]);
    if (!host.note.empty()) {
      node.notes.push_back(host.note);
    }
    if (node.generated) {
      node.age = now - *node.generated;
      if (*node.age < -std::chrono::minutes(1)) {
        node.notes.push_back(fmt::format("generated_at {} is ahead of this clock ({}): the "
                                         "node's clock runs ahead",
                                         node.generated_at, format_utc_time(now)));
      }
    }
    counted.push_back(std::move(node));
  }
  return counted;
}

/// The summary's counts, and one group per (failing, code) naming its nodes and their GPUs:
/// failing groups first, then the most nodes, then by code.
void count_and_group(const std::vector<NodeReport>& counted, FleetTable& table) {
  // (failing, code) -> (the node's place in `counted`, its GPUs with the code), in node order.
  std::map<std::pair<bool, std::string>, std::vector<std::pair<size_t, std::set<int>>>> by_code;
  const auto add = [&](bool failing, size_t node, const CodeOnGpu& item) {
    auto& members = by_code[{failing, item.code}];
    if (members.empty() || members.back().first != node) {
      members.emplace_back(node, std::set<int>());
    }
    if (item.gpu_index) {
      members.back().second.insert(*item.gpu_index);
    }
  };
  for (size_t n = 0; n < counted.size(); ++n) {
    const NodeReport& node = counted[n];
    ++table.summary.nodes;
    if (node.verdict == "pass") {
      ++table.summary.pass;
    } else if (node.verdict == "warn") {
      ++table.summary.warn;
    } else {
      ++table.summary.failing;
    }
    for (const CodeOnGpu& item : node.failing) {
      add(true, n, item);
    }
    for (const CodeOnGpu& item : node.warnings) {
      add(false, n, item);
    }
  }
  for (auto& [key, members] : by_code) {
    CodeGroup group;
    group.failing = key.first;
    group.code = key.second;
    if (const FindingSpec* spec = find_finding_spec(group.code)) {
      group.title = std::string(spec->title);
      group.known = true;
    } else {
      group.title = std::string(unknown_code_title(group.code));
    }
    for (auto& [node, gpus] : members) {
      group.nodes.push_back(counted[node].node);
      group.gpus.emplace_back(gpus.begin(), gpus.end());
    }
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
}
} // namespace

FleetTable merge_nodes(std::vector<NodeReport> nodes, std::vector<RejectedInput> rejected,
                       std::chrono::sys_seconds now) {
  FleetTable table;
  table.now = now;
  const auto node_order = [](const auto& a, const auto& b) {
    return by_node_then_source(a.node, a.source, b.node, b.source);
  };
  std::stable_sort(nodes.begin(), nodes.end(), node_order);
  std::vector<NodeReport> counted = newest_per_host(nodes, now, table.stale);
  std::stable_sort(counted.begin(), counted.end(), node_order);
  std::stable_sort(table.stale.begin(), table.stale.end(), node_order);
  count_and_group(counted, table);
  table.nodes = std::move(counted);
  table.rejected = std::move(rejected);
  table.summary.rejected = static_cast<int>(table.rejected.size());
  table.summary.stale = static_cast<int>(table.stale.size());
  return table;
}

} // namespace gpucheck::fleet
