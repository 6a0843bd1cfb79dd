#pragma once
/// JSON Schema (draft 2020-12) validation for the tests, by Debian's python3-jsonschema.
///
/// The first use in a test process starts one python3 running tests/support/validate_json.py and
/// keeps it for the rest of the process: every validation is one line to it and one line back,
/// so hundreds of validations cost one interpreter start. Without python3 or python3-jsonschema,
/// load() fails with a message that says to run scripts/install-deps.sh, so the tests that
/// validate fail instead of passing unchecked.

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "gpucheck/expected.hpp"

namespace gpucheck::testing {

class JsonSchema {
public:
  /// Reads a schema file and checks it against the draft 2020-12 metaschema. The Error names the
  /// file and the reason (unreadable, not JSON, not a schema, python3-jsonschema missing).
  static Expected<JsonSchema> load(const std::string& path);

  /// Every violation of the root schema, each as "<JSON pointer>: <reason>" ("(root): ..." for
  /// the document itself), sorted by place; empty when valid. When the validator cannot answer
  /// (its process died) the one entry says so, so the document never passes unchecked.
  [[nodiscard]] std::vector<std::string> validate(const nlohmann::json& instance) const;

  /// Same, against the sub-schema named by a reference "#/$defs/<name>" such as
  /// "#/$defs/SystemSnapshot". An unresolvable reference is reported as a violation.
  [[nodiscard]] std::vector<std::string> validate(const nlohmann::json& instance,
                                                  std::string_view ref) const;

private:
  explicit JsonSchema(std::string path) : m_path(std::move(path)) {}

  std::string m_path;
};

/// docs/report.schema.json, the exact schema (no key it does not list), loaded on first use.
/// Throws std::runtime_error with the reason when it cannot be loaded: the test fails.
const JsonSchema& report_schema();

/// docs/report.consumer.schema.json, the schema for consumers (open objects and open sets),
/// loaded on first use. Throws like report_schema().
const JsonSchema& consumer_report_schema();

/// Joins violations one per line, for test failure messages.
std::string describe(const std::vector<std::string>& violations);

} // namespace gpucheck::testing
