#include "gates/gate_spec.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>

#include "findings/catalog.hpp"
#include "gpucheck/model/text.hpp"

namespace gpucheck::gates {

namespace {

bool is_name(std::string_view text) {
  if (text.empty() || std::islower(static_cast<unsigned char>(text.front())) == 0) {
    return false;
  }
  return std::all_of(text.begin(), text.end(), [](char c) {
    return std::islower(static_cast<unsigned char>(c)) != 0 ||
           std::isdigit(static_cast<unsigned char>(c)) != 0 || c == '_';
  });
}

std::string subject_list() {
  std::string out;
  for (std::string_view subject : k_requirement_subjects) {
    out += out.empty() ? "" : ", ";
    out += subject;
  }
  return out;
}

struct OperatorSpelling {
  std::string_view text;
  CompareOp op;
};
// Two-character operators first, so ">=" is not read as ">" followed by "=550".
constexpr OperatorSpelling k_operators[] = {
    {">=", CompareOp::greater_equal}, {"<=", CompareOp::less_equal}, {"==", CompareOp::equal},
    {"!=", CompareOp::not_equal},     {">", CompareOp::greater},     {"<", CompareOp::less},
};

} // namespace

std::string_view to_string(CompareOp op) {
  for (const OperatorSpelling& spelling : k_operators) {
    if (spelling.op == op) {
      return spelling.text;
    }
  }
  return "?";
}

CompareOp negation(CompareOp op) {
  switch (op) {
  case CompareOp::greater_equal:
    return CompareOp::less;
  case CompareOp::greater:
    return CompareOp::less_equal;
  case CompareOp::less_equal:
    return CompareOp::greater;
  case CompareOp::less:
    return CompareOp::greater_equal;
  case CompareOp::equal:
    return CompareOp::not_equal;
  case CompareOp::not_equal:
    return CompareOp::equal;
  }
  return op;
}

bool satisfies(const Version& have, CompareOp op, const Version& need) {
  const Version h = have.truncated(need.parts().size());
  switch (op) {
  case CompareOp::greater_equal:
    return h >= need;
  case CompareOp::greater:
    return h > need;
  case CompareOp::less_equal:
    return h <= need;
  case CompareOp::less:
    return h < need;
  case CompareOp::equal:
    return h == need;
  case CompareOp::not_equal:
    return h != need;
  }
  return false;
}

Expected<Requirement> parse_requirement(std::string_view text) {
  const std::string_view expr = trim(text);
  const size_t op_pos = expr.find_first_of("<>=!");
  if (op_pos == std::string_view::npos) {
    return Error{fmt::format("'{}' is not a requirement: write COMPONENT OP VERSION, e.g. "
                             "driver>=550 (operators >=, >, <=, <, ==, !=)",
                             text)};
  }
  Requirement req;
  req.subject = std::string(trim(expr.substr(0, op_pos)));
  if (std::find(std::begin(k_requirement_subjects), std::end(k_requirement_subjects),
                req.subject) == std::end(k_requirement_subjects)) {
    return Error{
        fmt::format("'{}': unknown component '{}' (one of {})", text, req.subject, subject_list())};
  }
  std::string_view rest = expr.substr(op_pos);
  const OperatorSpelling* found = nullptr;
  for (const OperatorSpelling& spelling : k_operators) {
    if (rest.starts_with(spelling.text)) {
      found = &spelling;
      break;
    }
  }
  if (found == nullptr) {
    return Error{fmt::format("'{}': unknown operator (one of >=, >, <=, <, ==, !=)", text)};
  }
  req.op = found->op;
  const std::string_view version_text = trim(rest.substr(found->text.size()));
  if (version_text.find_first_of("<>=!") == 0) {
    return Error{fmt::format("'{}': unknown operator (one of >=, >, <=, <, ==, !=)", text)};
  }
  const std::optional<Version> version =
      req.subject == "cc" ? parse_cc(version_text) : Version::parse(version_text);
  if (!version || version->empty()) {
    return Error{fmt::format("'{}': '{}' is not a version ({})", text, version_text,
                             req.subject == "cc" ? "e.g. 8.0 or sm_80" : "e.g. 550 or 12.4")};
  }
  req.version = *version;
  req.text = fmt::format("{}{}{}", req.subject, to_string(req.op), version_text);
  return req;
}

Expected<MetricMinimum> parse_minimum(std::string_view text) {
  const std::string_view expr = trim(text);
  const size_t eq = expr.find('=');
  if (eq == std::string_view::npos) {
    return Error{fmt::format("'{}' is not a minimum: write METRIC=NUMBER, e.g. h2d_gbps=20", text)};
  }
  MetricMinimum minimum;
  minimum.metric = std::string(trim(expr.substr(0, eq)));
  if (!is_name(minimum.metric)) {
    return Error{fmt::format("'{}': '{}' is not a metric name (lower case, digits and _, "
                             "e.g. h2d_gbps)",
                             text, minimum.metric)};
  }
  const std::string value_text(trim(expr.substr(eq + 1)));
  double value = 0.0;
  const auto [end, ec] =
      std::from_chars(value_text.data(), value_text.data() + value_text.size(), value);
  if (value_text.empty() || ec != std::errc() || end != value_text.data() + value_text.size() ||
      !std::isfinite(value) || value < 0.0) {
    return Error{fmt::format("'{}': '{}' is not a number >= 0", text, value_text)};
  }
  minimum.minimum = value;
  minimum.text = fmt::format("{}={}", minimum.metric, value_text);
  return minimum;
}

Expected<bool> parse_fail_on(std::string_view text) {
  const std::string_view level = trim(text);
  if (level == "warn") {
    return true;
  }
  if (level == "fail") {
    return false;
  }
  return Error{fmt::format("'{}' is not a level for --fail-on (warn or fail)", text)};
}

Expected<std::string> parse_ignored_code(std::string_view text) {
  const std::string_view code = trim(text);
  if (find_finding_spec(code) == nullptr) {
    return Error{fmt::format("'{}' is not a finding code (gpucheck explain all lists them)", text)};
  }
  return std::string(code);
}

} // namespace gpucheck::gates
