#include "fleet/node_report.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>
#include <set>

#include "gpucheck/model/json_input.hpp"
#include "gpucheck/model/report.hpp"
#include "gpucheck/model/stack_versions.hpp"
#include "gpucheck/model/utc_time.hpp"

namespace gpucheck::fleet {

namespace {

using nlohmann::json;

/// The member `key` of `j` when `j` is an object that has it, else nullptr.
const json* member(const json* j, std::string_view key) {
  if (j == nullptr || !j->is_object()) {
    return nullptr;
  }
  const auto it = j->find(key);
  return it == j->end() ? nullptr : &*it;
}

std::string string_at(const json* j) {
  return j != nullptr && j->is_string() ? j->get<std::string>() : std::string();
}

std::optional<int64_t> int_at(const json* j) {
  if (j != nullptr && j->is_number_integer()) {
    return j->get<int64_t>();
  }
  return std::nullopt;
}

std::string cuda_text(std::optional<int64_t> encoded) {
  if (!encoded || *encoded <= 0) {
    return "";
  }
  return cuda_version_text(*encoded);
}

std::string gpu_text(const json* gpus, int& count) {
  count = 0;
  if (gpus == nullptr || !gpus->is_array()) {
    return "0";
  }
  std::vector<std::pair<std::string, int>> models; // in first-seen order
  for (const json& gpu : *gpus) {
    std::string name = string_at(member(&gpu, "name"));
    if (name.empty()) {
      name = "unknown GPU";
    }
    ++count;
    auto it = std::find_if(models.begin(), models.end(),
                           [&](const auto& model) { return model.first == name; });
    if (it == models.end()) {
      models.emplace_back(name, 1);
    } else {
      ++it->second;
    }
  }
  if (models.empty()) {
    return "0";
  }
  std::vector<std::string> parts;
  for (const auto& [name, n] : models) {
    parts.push_back(fmt::format("{}x {}", n, name));
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

/// A GPU's identity in the report's inventory.
struct GpuIdentity {
  std::string uuid;
  std::string serial;
};

/// Index -> identity of each GPU in the inventory; a GPU without an index is known by its place.
std::map<int, GpuIdentity> gpu_identities(const json* gpus) {
  std::map<int, GpuIdentity> out;
  if (gpus == nullptr || !gpus->is_array()) {
    return out;
  }
  int place = 0;
  for (const json& gpu : *gpus) {
    const std::optional<int64_t> index = int_at(member(&gpu, "index"));
    const int key = index && *index >= 0 && *index < 1'000'000 ? static_cast<int>(*index) : place;
    out.emplace(key,
                GpuIdentity{string_at(member(&gpu, "uuid")), string_at(member(&gpu, "serial"))});
    ++place;
  }
  return out;
}

/// A UUID as NVML gives it ("GPU-8c02e6d2-3e7a-..."), not a redaction placeholder ("GPU-0").
bool is_real_uuid(const std::string& uuid) {
  if (!uuid.starts_with("GPU-")) {
    return false;
  }
  return std::count_if(uuid.begin() + 4, uuid.end(), [](char c) {
           return std::isxdigit(static_cast<unsigned char>(c)) != 0;
         }) >= 32;
}

/// "host-3": the placeholder redaction puts for a host name.
bool is_redacted_host(const std::string& host) {
  return host.size() > 5 && host.starts_with("host-") &&
         std::all_of(host.begin() + 5, host.end(),
                     [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; });
}

/// NVIDIA display (0x0300) and 3D (0x0302) controllers among the PCI functions: not their audio
/// functions or NVSwitches.
int pci_gpu_count(const json* pci_devices) {
  if (pci_devices == nullptr || !pci_devices->is_array()) {
    return 0;
  }
  return static_cast<int>(
      std::count_if(pci_devices->begin(), pci_devices->end(), [](const json& d) {
        const std::string klass = string_at(member(&d, "class_code"));
        return klass.starts_with("0x0300") || klass.starts_with("0x0302");
      }));
}

std::string cudnn_text(const json* libraries) {
  if (libraries == nullptr || !libraries->is_array()) {
    return "";
  }
  for (const json& family : *libraries) {
    if (string_at(member(&family, "family")) == "cudnn") {
      const json* load = member(&family, "load");
      const json* loaded = member(load, "loaded");
      if (loaded != nullptr && loaded->is_boolean() && loaded->get<bool>()) {
        return string_at(member(load, "version"));
      }
    }
  }
  return "";
}

int rank_of(const std::string& status) {
  if (status == "error") {
    return 4;
  }
  if (status == "fail") {
    return 3;
  }
  if (status == "warn") {
    return 2;
  }
  return status == "pass" ? 1 : 0;
}

bool is_bad(const std::string& severity) {
  return severity == "fail" || severity == "error";
}

} // namespace

std::string gpu_label(const CodeOnGpu& item) {
  if (!item.gpu_index) {
    return "";
  }
  const std::string& id = item.serial.empty() ? item.uuid : item.serial;
  return id.empty() ? fmt::format("GPU {}", *item.gpu_index)
                    : fmt::format("GPU {} ({})", *item.gpu_index, id);
}

bool is_failing(const std::string& verdict) {
  return verdict != "pass" && verdict != "warn";
}

namespace {
/// The report's tool and schema versions (a note for one newer or missing: read what it knows).
void read_versions(NodeReport& node, const json* context) {
  node.tool_version = string_at(member(context, "tool_version"));
  if (const std::optional<int64_t> schema = int_at(member(context, "schema_version"))) {
    node.schema_version = static_cast<int>(*schema);
    if (*schema > ReportContext::k_schema_version) {
      node.notes.push_back(fmt::format("schema_version {} is newer than this gpucheck reads "
                                       "({}): read what it knows",
                                       *schema, ReportContext::k_schema_version));
    } else if (*schema < 1) {
      node.notes.push_back(
          fmt::format("schema_version {} is not a gpucheck schema version", *schema));
    }
  } else {
    node.notes.push_back("no schema_version in the report: read what it knows");
  }
}

/// When the report was made: its generated_at, else its snapshot's collected_at, else unknown.
void read_date(NodeReport& node, const json* context, const json* snapshot) {
  node.mode = string_at(member(context, "mode"));
  node.generated_at = string_at(member(context, "generated_at"));
  node.generated = parse_utc_time(node.generated_at);
  if (!node.generated) {
    // A report without its own time still has the snapshot's.
    const std::string collected = string_at(member(snapshot, "collected_at"));
    if (std::optional<std::chrono::sys_seconds> time = parse_utc_time(collected)) {
      node.notes.push_back(
          node.generated_at.empty()
              ? "no generated_at: dated by its snapshot's collected_at"
              : fmt::format("generated_at '{}' is not a time: dated by its snapshot's collected_at",
                            node.generated_at));
      node.generated_at = collected;
      node.generated = time;
    } else {
      node.notes.push_back(node.generated_at.empty()
                               ? "no generated_at: its age is unknown"
                               : fmt::format("generated_at '{}' is not a time: its age is unknown",
                                             node.generated_at));
    }
  }
}

/// Which node and GPUs it is, and the stack's versions, read leniently from the snapshot.
void read_identity(NodeReport& node, const std::string& source, const json* snapshot,
                   const std::map<int, GpuIdentity>& identities) {
  node.node = string_at(member(member(snapshot, "host"), "hostname"));
  if (node.node.empty()) {
    node.node = std::filesystem::path(source).stem().string();
    node.anonymous = true;
    node.notes.push_back("no host name in the report: named after its file");
  }
  for (const auto& [index, identity] : identities) {
    if (is_real_uuid(identity.uuid)) {
      node.gpu_uuids.push_back(identity.uuid);
    }
  }
  std::sort(node.gpu_uuids.begin(), node.gpu_uuids.end());
  node.gpu_uuids.erase(std::unique(node.gpu_uuids.begin(), node.gpu_uuids.end()),
                       node.gpu_uuids.end());
  if (!node.anonymous && node.gpu_uuids.empty() && is_redacted_host(node.node)) {
    node.anonymous = true;
    node.notes.push_back("a redacted report (host name and GPU UUIDs replaced): never taken for "
                         "another report of the same host");
  }
  node.gpus = gpu_text(member(snapshot, "gpus"), node.gpu_count);
  node.pci_gpu_count = pci_gpu_count(member(member(snapshot, "kernel_module"), "pci_devices"));
  if (node.gpu_count == 0 && node.pci_gpu_count > 0) {
    node.gpus = fmt::format("{} (PCI)", node.pci_gpu_count);
  }
  // driver_version() and driver_cuda_version()'s rules (gpucheck/model/stack_versions.hpp), over
  // another node's JSON read leniently: any version of the report, any field missing.
  node.driver = string_at(member(member(snapshot, "kernel_module"), "version"));
  if (node.driver.empty()) {
    node.driver = string_at(member(member(snapshot, "nvml"), "driver_version"));
  }
  node.cuda = cuda_text(int_at(member(member(snapshot, "cuda"), "driver_version")));
  if (node.cuda.empty()) {
    node.cuda = cuda_text(int_at(member(member(snapshot, "nvml"), "cuda_driver_version")));
  }
  node.cudnn = cudnn_text(member(snapshot, "libraries"));
}

/// A code with the GPU it names (index, UUID and serial where the snapshot has them).
CodeOnGpu code_on_gpu(const std::string& code, std::optional<int64_t> index,
                      const std::map<int, GpuIdentity>& identities) {
  CodeOnGpu item{code, std::nullopt, "", ""};
  if (index && *index >= 0 && *index < 1'000'000) {
    item.gpu_index = static_cast<int>(*index);
    if (const auto it = identities.find(*item.gpu_index); it != identities.end()) {
      item.uuid = it->second.uuid;
      item.serial = it->second.serial;
    }
  }
  return item;
}

/// The verdict and the codes that fail or warn, each with the GPU it names.
void read_results(NodeReport& node, const json& doc, const json* results,
                  const std::map<int, GpuIdentity>& identities) {
  std::set<std::string> failing;
  std::set<std::string> warning;
  std::set<CodeOnGpu> failing_on;
  std::set<CodeOnGpu> warning_on;
  const auto on_gpu = [&identities](const std::string& code, std::optional<int64_t> index) {
    return code_on_gpu(code, index, identities);
  };
  std::set<std::string> unknown_statuses;
  std::string worst = "pass";
  for (const json& result : *results) {
    const std::string status = string_at(member(&result, "status"));
    if (rank_of(status) == 0 && status != "skip") {
      unknown_statuses.insert(status.empty() ? "(none)" : status);
    }
    if (rank_of(status) > rank_of(worst)) {
      worst = status;
    }
    const bool bad_result = status == "fail" || status == "error";
    if (!bad_result && status != "warn") {
      continue;
    }
    bool named = false;
    const std::optional<int64_t> result_gpu = int_at(member(&result, "gpu_index"));
    const json* findings = member(&result, "findings");
    if (findings != nullptr && findings->is_array()) {
      for (const json& finding : *findings) {
        const json* ignored = member(&finding, "ignored");
        if (ignored != nullptr && ignored->is_boolean() && ignored->get<bool>()) {
          continue;
        }
        const std::string code = string_at(member(&finding, "code"));
        const std::string severity = string_at(member(&finding, "severity"));
        if (code.empty()) {
          continue;
        }
        std::optional<int64_t> gpu = int_at(member(&finding, "gpu_index"));
        if (!gpu) {
          gpu = result_gpu;
        }
        if (bad_result && is_bad(severity)) {
          failing.insert(code);
          failing_on.insert(on_gpu(code, gpu));
          named = true;
        } else if (status == "warn" && severity == "warn") {
          warning.insert(code);
          warning_on.insert(on_gpu(code, gpu));
          named = true;
        }
      }
    }
    if (bad_result && !named) {
      const std::string id = string_at(member(&result, "check_id"));
      const std::string code = fmt::format("{} ({})", id.empty() ? "unnamed check" : id, status);
      failing.insert(code);
      failing_on.insert(on_gpu(code, result_gpu));
    }
  }
  for (const std::string& status : unknown_statuses) {
    node.notes.push_back(fmt::format("unknown result status '{}'", status));
  }
  node.verdict = string_at(member(member(&doc, "summary"), "overall"));
  if (node.verdict.empty()) {
    node.verdict = worst;
    node.notes.push_back("no summary.overall: verdict taken from the results");
  } else if (rank_of(node.verdict) == 0) {
    node.notes.push_back(fmt::format("unknown verdict '{}': counted as failing", node.verdict));
  }
  node.failing_codes.assign(failing.begin(), failing.end());
  node.warning_codes.assign(warning.begin(), warning.end());
  node.failing.assign(failing_on.begin(), failing_on.end());
  node.warnings.assign(warning_on.begin(), warning_on.end());
}
} // namespace

Expected<NodeReport> read_node_report(const std::string& text, const std::string& source) {
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) {
    return Error{"empty file"};
  }
  // parse_json_input names the byte and the JSON path; a truncated report ends "unexpected end
  // of input", a number like 1e400 says "number overflow"; depth and size are capped.
  Expected<json> parsed = parse_json_input(text);
  if (!parsed) {
    return Error{fmt::format("not valid JSON ({})", parsed.error().message)};
  }
  json doc = std::move(parsed).value();
  if (!doc.is_object()) {
    return Error{fmt::format("JSON, but not a gpucheck report (the top level is {}, not an "
                             "object)",
                             doc.type_name())};
  }
  const json* results = member(&doc, "results");
  const json* context = member(&doc, "context");
  if (results == nullptr && member(&doc, "format_version") != nullptr) {
    return Error{"a gpucheck snapshot, not a report: judge it first with "
                 "`gpucheck --from-snapshot FILE --json`"};
  }
  if (results == nullptr || context == nullptr || !context->is_object()) {
    return Error{"JSON, but not a gpucheck report (no \"context\" and \"results\")"};
  }
  if (!results->is_array()) {
    return Error{"not a gpucheck report: \"results\" is not a list"};
  }

  NodeReport node;
  node.source = source;
  read_versions(node, context);
  const json* snapshot = member(&doc, "snapshot");
  read_date(node, context, snapshot);
  const std::map<int, GpuIdentity> identities = gpu_identities(member(snapshot, "gpus"));
  read_identity(node, source, snapshot, identities);
  read_results(node, doc, results, identities);
  return node;
}

} // namespace gpucheck::fleet
