#include "gates/gates.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "findings/catalog.hpp"
#include "gates/found_versions.hpp"
#include "gpucheck/check.hpp"

namespace gpucheck::gates {

namespace {

Status status_from(const std::vector<Finding>& findings, bool skip_ignored) {
  Status status = Status::pass;
  for (const Finding& f : findings) {
    if (!(skip_ignored && f.ignored)) {
      status = worst_of(status, status_for(f.severity));
    }
  }
  return status;
}

/// A gate's result: the id and title are copied, so they may be temporaries.
CheckResult gate_result(const std::string& id, const std::string& title, std::string summary,
                        std::vector<Finding> findings) {
  const CheckInfo info{id, title, "", CheckKind::passive};
  return make_result(info, std::move(summary), std::move(findings));
}

/// 12.1 -> "12.1", 20 -> "20", 55.123 -> "55.12".
std::string number(double value) {
  std::string text = fmt::format("{:.2f}", value);
  while (text.back() == '0') {
    text.pop_back();
  }
  if (text.back() == '.') {
    text.pop_back();
  }
  return text;
}

std::string on_gpu(std::optional<int> gpu_index) {
  return gpu_index ? fmt::format(" on GPU {}", *gpu_index) : "";
}

std::string result_label(const CheckResult& result) {
  return result.gpu_index ? fmt::format("{} [GPU {}]", result.check_id, *result.gpu_index)
                          : result.check_id;
}

CheckResult expect_gpus_gate(int expected, const SystemSnapshot& snapshot) {
  std::optional<int> nvml = snapshot.nvml.device_count;
  if (!nvml && !snapshot.gpus.empty()) {
    nvml = static_cast<int>(snapshot.gpus.size());
  }
  const std::optional<int> cuda = snapshot.cuda.device_count;
  std::vector<std::string> sources;
  if (cuda) {
    sources.push_back(fmt::format("CUDA sees {}", *cuda));
  }
  if (nvml) {
    sources.push_back(fmt::format("NVML sees {}", *nvml));
  }
  const std::string detail = sources.empty() ? std::string("neither CUDA nor NVML reported a "
                                                           "GPU count")
                                             : fmt::format("{}", fmt::join(sources, ", "));
  // The count programs see: CUDA's when cuInit worked, else NVML's.
  const int found = cuda.value_or(nvml.value_or(0));
  const std::string title = "Expected GPU count";
  if (found != expected) {
    return gate_result(
        "gate.expect_gpus", title, fmt::format("found {} GPUs, expected {}", found, expected),
        {make_finding(codes::k_gate_gpu_count_mismatch, std::nullopt, found, expected, detail)});
  }
  return gate_result("gate.expect_gpus", title,
                     fmt::format("{} GPUs, as expected ({})", found, detail), {});
}

CheckResult requirement_gate(std::string_view subject,
                             const std::vector<const Requirement*>& requirements,
                             const SystemSnapshot& snapshot) {
  const std::vector<FoundVersion> found = found_versions(snapshot, subject);
  std::vector<Finding> findings;
  std::vector<std::string> texts;
  for (const Requirement* req : requirements) {
    texts.push_back(req->text);
    for (const FoundVersion& have : found) {
      if (!have.version) {
        findings.push_back(make_finding(codes::k_gate_requirement_unknown, have.gpu_index,
                                        req->subject, have.missing_reason, req->text));
        continue;
      }
      if (!satisfies(*have.version, req->op, req->version)) {
        const std::string where =
            have.gpu_index ? fmt::format(" on GPU {} ({})", *have.gpu_index, have.gpu_name) : "";
        findings.push_back(make_finding(codes::k_gate_requirement_not_met, have.gpu_index,
                                        req->subject, have.text, to_string(negation(req->op)),
                                        req->version.str(), where, req->text));
      }
    }
  }
  const std::string id = fmt::format("gate.require.{}", subject);
  const std::string title = fmt::format("Requirement: {}", subject);
  if (!findings.empty()) {
    std::string summary = findings.front().message; // before the findings are moved
    return gate_result(id, title, std::move(summary), std::move(findings));
  }
  std::set<std::string> seen;
  for (const FoundVersion& have : found) {
    seen.insert(have.text);
  }
  const std::string versions = fmt::format("{}", fmt::join(seen, ", "));
  const std::string scope =
      found.size() > 1 ? fmt::format(" on all {} GPUs", found.size()) : std::string();
  return gate_result(
      id, title, fmt::format("{} {}{} meets {}", subject, versions, scope, fmt::join(texts, ", ")),
      {});
}

CheckResult minimum_gate(const MetricMinimum& minimum, const std::vector<CheckResult>& results) {
  const std::string id = fmt::format("gate.min.{}", minimum.metric);
  const std::string title = fmt::format("Minimum {}", minimum.metric);
  struct Value {
    const CheckResult* result;
    double value;
  };
  std::vector<Value> values;
  std::set<std::string> producers;
  for (const CheckResult& result : results) {
    for (const Metric& metric : result.metrics) {
      if (metric.name == minimum.metric) {
        values.push_back({&result, metric.value});
        producers.insert(result.check_id);
      }
    }
  }
  const CheckInfo info{id, title, "", CheckKind::passive};
  if (values.empty()) {
    return skip_result(info, fmt::format("no check reported {} in this run (GPU measurements are "
                                         "skipped with --quick and when replaying a snapshot; "
                                         "`gpucheck --json` lists each result's metrics)",
                                         minimum.metric));
  }
  std::vector<Finding> findings;
  for (const CheckResult& result : results) {
    if (producers.count(result.check_id) == 0) {
      continue;
    }
    const bool measured = std::any_of(result.metrics.begin(), result.metrics.end(),
                                      [&](const Metric& m) { return m.name == minimum.metric; });
    if (!measured) {
      findings.push_back(make_finding(codes::k_gate_metric_not_measured, result.gpu_index,
                                      minimum.metric, on_gpu(result.gpu_index), result.check_id,
                                      to_string(result.status), result.summary));
    }
  }
  const Value* lowest = &values.front();
  for (const Value& v : values) {
    if (v.value < minimum.minimum) {
      findings.push_back(make_finding(codes::k_gate_metric_below_minimum, v.result->gpu_index,
                                      minimum.metric, number(v.value), number(minimum.minimum),
                                      on_gpu(v.result->gpu_index), v.result->check_id));
    }
    if (v.value < lowest->value) {
      lowest = &v;
    }
  }
  if (!findings.empty()) {
    const std::string summary =
        findings.size() == 1
            ? findings.front().message
            : fmt::format("{} ({} problems)", findings.front().message, findings.size());
    return gate_result(id, title, summary, std::move(findings));
  }
  const std::string scope =
      values.size() > 1 ? fmt::format(" in all {} results", values.size()) : std::string();
  return gate_result(id, title,
                     fmt::format("{} >= {}{} (lowest {}{})", minimum.metric,
                                 number(minimum.minimum), scope, number(lowest->value),
                                 on_gpu(lowest->result->gpu_index)),
                     {});
}

} // namespace

void apply_ignores(std::vector<CheckResult>& results, const std::vector<std::string>& codes) {
  if (codes.empty()) {
    return;
  }
  for (CheckResult& result : results) {
    const bool followed_findings = result.status == status_from(result.findings, false);
    bool any = false;
    for (Finding& f : result.findings) {
      if (std::find(codes.begin(), codes.end(), f.code) != codes.end()) {
        f.ignored = true;
        any = true;
      }
    }
    if (any && followed_findings) {
      result.status = status_from(result.findings, true);
    }
  }
}

std::vector<CheckResult> evaluate_gates(const GateSpec& spec, const SystemSnapshot& snapshot,
                                        const std::vector<CheckResult>& results) {
  std::vector<CheckResult> gates;
  if (spec.expect_gpus) {
    gates.push_back(expect_gpus_gate(*spec.expect_gpus, snapshot));
  }
  for (std::string_view subject : k_requirement_subjects) {
    std::vector<const Requirement*> requirements;
    for (const Requirement& req : spec.requirements) {
      if (req.subject == subject) {
        requirements.push_back(&req);
      }
    }
    if (!requirements.empty()) {
      gates.push_back(requirement_gate(subject, requirements, snapshot));
    }
  }
  for (const MetricMinimum& minimum : spec.minimums) {
    gates.push_back(minimum_gate(minimum, results));
  }
  return gates;
}

CheckResult fail_on_warn_gate(const std::vector<CheckResult>& results) {
  std::vector<std::string> warned;
  int ignored = 0;
  for (const CheckResult& result : results) {
    if (result.status == Status::warn) {
      warned.push_back(result_label(result));
    }
    ignored += static_cast<int>(std::count_if(result.findings.begin(), result.findings.end(),
                                              [](const Finding& f) { return f.ignored; }));
  }
  const std::string title = "Fail on warnings";
  const std::string ignored_note =
      ignored > 0 ? fmt::format(" ({} ignored finding{})", ignored, ignored == 1 ? "" : "s") : "";
  if (warned.empty()) {
    return gate_result("gate.fail_on", title, "no warnings" + ignored_note, {});
  }
  const std::string count =
      fmt::format("{} result{} warned", warned.size(), warned.size() == 1 ? "" : "s");
  Finding finding = make_finding(codes::k_gate_warnings_present, std::nullopt, count,
                                 fmt::format("{}", fmt::join(warned, ", ")));
  return gate_result("gate.fail_on", title, count + ignored_note, {std::move(finding)});
}

std::vector<CheckResult> apply_gates(const GateSpec& spec, const SystemSnapshot& snapshot,
                                     std::vector<CheckResult> results) {
  if (spec.empty()) {
    return results;
  }
  apply_ignores(results, spec.ignored_codes);
  std::vector<CheckResult> gates = evaluate_gates(spec, snapshot, results);
  apply_ignores(gates, spec.ignored_codes);
  results.insert(results.end(), std::make_move_iterator(gates.begin()),
                 std::make_move_iterator(gates.end()));
  if (spec.fail_on_warn) {
    CheckResult gate = fail_on_warn_gate(results);
    std::vector<CheckResult> one{std::move(gate)};
    apply_ignores(one, spec.ignored_codes);
    results.push_back(std::move(one.front()));
  }
  return results;
}

} // namespace gpucheck::gates
