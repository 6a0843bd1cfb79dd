#pragma once
/// A small JSON Schema validator: the keywords data/compat/matrix.schema.json uses, no more.
///
/// Supported: type (a name or a list), enum, properties, required, additionalProperties (bool),
/// items, minItems, minimum, minLength, pattern (ECMAScript), $ref to "#/$defs/<name>".
/// Other keywords (title, description, $schema, $id) are ignored; an unsupported $ref form is
/// reported as a problem, never skipped.

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace gpucheck::compat {

/// One place where a document breaks its schema.
struct SchemaProblem {
  std::string path;    ///< JSON path, "$.cuda_releases[3].linux_min_driver"
  std::string message; ///< "expected string, got number"
};

/// Every problem found (empty: the document is valid). Stops after `max_problems`.
std::vector<SchemaProblem> validate_schema(const nlohmann::json& document,
                                           const nlohmann::json& schema, size_t max_problems = 20);

} // namespace gpucheck::compat
