#include "fleet/node_report.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "gpucheck/model/json_input.hpp"
#include "gpucheck/model/report.hpp"

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
  return fmt::format("{}.{}", *encoded / 1000, (*encoded % 1000) / 10);
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

bool is_failing(const std::string& verdict) {
  return verdict != "pass" && verdict != "warn";
}

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

  const json* snapshot = member(&doc, "snapshot");
  node.node = string_at(member(member(snapshot, "host"), "hostname"));
  if (node.node.empty()) {
    node.node = std::filesystem::path(source).stem().string();
    node.notes.push_back("no host name in the report: named after its file");
  }
  node.gpus = gpu_text(member(snapshot, "gpus"), node.gpu_count);
  node.driver = string_at(member(member(snapshot, "kernel_module"), "version"));
  if (node.driver.empty()) {
    node.driver = string_at(member(member(snapshot, "nvml"), "driver_version"));
  }
  node.cuda = cuda_text(int_at(member(member(snapshot, "cuda"), "driver_version")));
  if (node.cuda.empty()) {
    node.cuda = cuda_text(int_at(member(member(snapshot, "nvml"), "cuda_driver_version")));
  }
  node.cudnn = cudnn_text(member(snapshot, "libraries"));

  std::set<std::string> failing;
  std::set<std::string> warning;
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
        if (bad_result && is_bad(severity)) {
          failing.insert(code);
          named = true;
        } else if (status == "warn" && severity == "warn") {
          warning.insert(code);
          named = true;
        }
      }
    }
    if (bad_result && !named) {
      const std::string id = string_at(member(&result, "check_id"));
      failing.insert(fmt::format("{} ({})", id.empty() ? "unnamed check" : id, status));
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
  return node;
}

} // namespace gpucheck::fleet
