#pragma once
/// A small JSON Schema (draft 2020-12) validator for the subset docs/report.schema.json uses.
///
/// Implemented keywords: type (a name or an array of names), properties, required,
/// additionalProperties (boolean or schema), items (one schema), enum, const, $ref (only local
/// "#/$defs/<name>"), minimum, pattern (ECMAScript, unanchored as the standard says).
/// Accepted and ignored annotations: $schema, $id, $defs, $comment, title, description.
/// Any other keyword makes compile() fail, so the published schema cannot silently rely on a
/// keyword this validator would ignore.

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "gpucheck/expected.hpp"

namespace gpucheck::testing {

class JsonSchema {
public:
  /// Checks every sub-schema (also unreferenced ones): an unknown keyword, a malformed value of a
  /// known keyword, a bad regex or a $ref that does not resolve is an Error naming its place.
  static Expected<JsonSchema> compile(nlohmann::json schema);

  /// Reads and compiles a schema file; the Error names the file.
  static Expected<JsonSchema> load(const std::string& path);

  /// Every violation of the root schema, each as "<JSON pointer>: <problem>"; empty when valid.
  [[nodiscard]] std::vector<std::string> validate(const nlohmann::json& instance) const;

  /// Same, against the sub-schema named by a local reference such as "#/$defs/SystemSnapshot".
  /// An unresolvable reference is reported as a violation.
  [[nodiscard]] std::vector<std::string> validate(const nlohmann::json& instance,
                                                  std::string_view ref) const;

private:
  explicit JsonSchema(nlohmann::json schema) : m_schema(std::move(schema)) {}

  nlohmann::json m_schema;
};

/// Joins violations one per line, for test failure messages.
std::string describe(const std::vector<std::string>& violations);

} // namespace gpucheck::testing
