// The tests' JSON Schema validation (support/json_schema.hpp): python3-jsonschema behind one
// long-lived process, reporting each violation with its place.
#include "support/json_schema.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "gpucheck/model/json_io.hpp"
#include "gpucheck/model/snapshot.hpp"
#include "support/external_tool.hpp"

namespace gpucheck::testing {
namespace {

using nlohmann::json;

const json k_person = json::parse(R"({
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "title": "person",
  "type": "object",
  "properties": {
    "name": {"type": "string", "pattern": "^[A-Z]"},
    "age": {"type": ["integer", "null"], "minimum": 0},
    "kind": {"type": "string", "enum": ["adult", "child"]},
    "version": {"type": "integer", "const": 1},
    "pet": {"type": ["object", "null"], "$ref": "#/$defs/Pet"},
    "tags": {"type": "array", "items": {"type": "string"}},
    "extra": {"type": "object", "additionalProperties": {"type": "number"}}
  },
  "required": ["name", "age", "kind", "version", "pet", "tags", "extra"],
  "additionalProperties": false,
  "$defs": {
    "Pet": {
      "properties": {"legs": {"type": "integer"}},
      "required": ["legs"],
      "additionalProperties": false
    }
  }
})");

/// `schema` written to a file of this test's own, for load().
std::string schema_file(const std::string& name, const json& schema) {
  const std::string path = ::testing::TempDir() + "/gpucheck_json_schema_" + name + ".json";
  std::ofstream(path) << schema.dump(2);
  return path;
}

JsonSchema person_schema() {
  Expected<JsonSchema> loaded = JsonSchema::load(schema_file("person", k_person));
  if (!loaded) {
    throw std::runtime_error(loaded.error().message);
  }
  return std::move(loaded).value();
}

json valid_person() {
  return json::parse(R"({"name": "Ada", "age": 36, "kind": "adult", "version": 1,
                         "pet": {"legs": 4}, "tags": ["a", "b"], "extra": {"x": 1.5}})");
}

TEST(JsonSchema, AcceptsAValidDocument) {
  const JsonSchema schema = person_schema();
  EXPECT_EQ(schema.validate(valid_person()), std::vector<std::string>{});
  json with_nulls = valid_person();
  with_nulls["age"] = nullptr;
  with_nulls["pet"] = nullptr;
  EXPECT_EQ(schema.validate(with_nulls), std::vector<std::string>{});
  with_nulls["age"] = 2.0; // an integer by the standard: no fractional part
  EXPECT_EQ(schema.validate(with_nulls), std::vector<std::string>{});
}

struct BadCase {
  const char* keyword;
  const char* change; // JSON merge patch applied to the valid document
  const char* place;  // the violation's JSON pointer
  const char* reason; // a fragment of python3-jsonschema's message
};

TEST(JsonSchema, RejectsAViolationOfEachKeywordWithItsPlaceAndReason) {
  const BadCase cases[] = {
      {"type", R"({"name": 3})", "/name", "3 is not of type 'string'"},
      {"type (fraction)", R"({"age": 2.5})", "/age", "is not of type"},
      {"minimum", R"({"age": -1})", "/age", "-1 is less than the minimum of 0"},
      {"enum", R"({"kind": "robot"})", "/kind", "'robot' is not one of ['adult', 'child']"},
      {"const", R"({"version": 2})", "/version", "1 was expected"},
      {"pattern", R"({"name": "ada"})", "/name", "'ada' does not match '^[A-Z]'"},
      {"items", R"({"tags": ["a", 7]})", "/tags/1", "7 is not of type 'string'"},
      {"additionalProperties (schema)", R"({"extra": {"y": "no"}})", "/extra/y",
       "'no' is not of type 'number'"},
      {"additionalProperties (false)", R"({"nickname": "A"})", "(root)",
       "('nickname' was unexpected)"},
      {"required", R"({"tags": null})", "(root)", "'tags' is a required property"},
      {"$ref", R"({"pet": {"legs": "four"}})", "/pet/legs", "'four' is not of type 'integer'"},
      {"$ref (closed object)", R"({"pet": {"legs": 4, "wings": 2}})", "/pet",
       "('wings' was unexpected)"},
  };
  const JsonSchema schema = person_schema();
  for (const BadCase& c : cases) {
    json doc = valid_person();
    doc.merge_patch(json::parse(c.change)); // a null removes the key
    const std::vector<std::string> violations = schema.validate(doc);
    ASSERT_EQ(violations.size(), 1u) << c.keyword << "\n" << describe(violations);
    EXPECT_EQ(violations[0].rfind(std::string(c.place) + ": ", 0), 0u)
        << c.keyword << ": " << violations[0];
    EXPECT_NE(violations[0].find(c.reason), std::string::npos)
        << c.keyword << ": " << violations[0];
  }
}

TEST(JsonSchema, ListsEveryViolationSortedByPlace) {
  json doc = valid_person();
  doc["tags"][1] = 7;
  doc["name"] = 3;
  doc["tags"][0] = 8;
  const std::vector<std::string> violations = person_schema().validate(doc);
  ASSERT_EQ(violations.size(), 3u) << describe(violations);
  EXPECT_EQ(violations[0].rfind("/name: ", 0), 0u) << violations[0];
  EXPECT_EQ(violations[1].rfind("/tags/0: ", 0), 0u) << violations[1];
  EXPECT_EQ(violations[2].rfind("/tags/1: ", 0), 0u) << violations[2];
}

TEST(JsonSchema, EscapesPointerTokens) {
  const JsonSchema schema = JsonSchema::load(schema_file("map", json::parse(R"({"type": "object",
                                         "additionalProperties": {"type": "string"}})")))
                                .value();
  const std::vector<std::string> violations = schema.validate(json{{"a/b~c", 1}});
  ASSERT_EQ(violations.size(), 1u) << describe(violations);
  EXPECT_EQ(violations[0].rfind("/a~1b~0c: ", 0), 0u) << violations[0];
}

TEST(JsonSchema, ValidatesAgainstANamedDefinition) {
  const JsonSchema schema = person_schema();
  EXPECT_EQ(schema.validate(json{{"legs", 2}}, "#/$defs/Pet"), std::vector<std::string>{});
  const std::vector<std::string> extra =
      schema.validate(json{{"legs", 2}, {"tail", true}}, "#/$defs/Pet");
  ASSERT_EQ(extra.size(), 1u) << describe(extra);
  EXPECT_NE(extra[0].find("'tail' was unexpected"), std::string::npos) << extra[0];
  const std::vector<std::string> unknown = schema.validate(json{{"legs", 2}}, "#/$defs/Cat");
  ASSERT_EQ(unknown.size(), 1u);
  EXPECT_NE(unknown[0].find("#/$defs/Cat"), std::string::npos) << unknown[0];
}

TEST(JsonSchema, LoadNamesTheFileItCannotReadOrThatIsNoSchema) {
  const Expected<JsonSchema> missing = JsonSchema::load("/nonexistent/schema.json");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("/nonexistent/schema.json"), std::string::npos)
      << missing.error().message;
  const std::string bad = schema_file("bad", json::parse(R"({"type": "float"})"));
  const Expected<JsonSchema> not_a_schema = JsonSchema::load(bad);
  ASSERT_FALSE(not_a_schema);
  EXPECT_NE(not_a_schema.error().message.find(bad), std::string::npos)
      << not_a_schema.error().message;
  EXPECT_NE(not_a_schema.error().message.find("not a JSON Schema"), std::string::npos)
      << not_a_schema.error().message;
}

// Without python3 or python3-jsonschema a test that validates must fail and say what to install.

TEST(JsonSchema, ReportSchemaLoads) {
  // Also the inner test of the next one, which runs it with GPUCHECK_TEST_PYTHON set.
  const Expected<JsonSchema> schema =
      JsonSchema::load(std::string(GPUCHECK_SOURCE_DIR) + "/docs/report.schema.json");
  ASSERT_TRUE(schema) << schema.error().message;
  EXPECT_EQ(schema->validate(json::object()).size(), 5u); // the report's five required keys
}

/// ChildFailure's kinds: one spelling in the code (to_string) and the schema's enum, the same set
/// in the same order; each one round-trips through JSON and an unknown one is refused.
TEST(JsonSchema, ChildFailureKindsAreTheSchemasEnum) {
  std::ifstream file(std::string(GPUCHECK_SOURCE_DIR) + "/docs/report.schema.json");
  ASSERT_TRUE(file);
  const nlohmann::json schema = nlohmann::json::parse(file);
  std::vector<std::string> in_code;
  for (const ChildFailureKind kind : k_child_failure_kinds) {
    in_code.emplace_back(to_string(kind));
    const nlohmann::json j = ChildFailure{.kind = kind};
    EXPECT_EQ(j.at("kind"), std::string(to_string(kind)));
    EXPECT_EQ(j.get<ChildFailure>().kind, kind);
  }
  EXPECT_EQ(schema.at("$defs").at("ChildFailure").at("properties").at("kind").at("enum"),
            nlohmann::json(in_code));
  nlohmann::json unknown = ChildFailure{};
  unknown["kind"] = "exploded";
  EXPECT_THROW((void)unknown.get<ChildFailure>(), std::exception);
}

TEST(JsonSchema, WithoutPython3ATestFailsSayingWhatToInstall) {
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  const ToolResult run = run_tool({"env", "GPUCHECK_TEST_PYTHON=/nonexistent/python3", self,
                                   "--gtest_filter=JsonSchema.ReportSchemaLoads"});
  EXPECT_NE(run.exit_code, 0) << run.output;
  EXPECT_NE(run.output.find("/nonexistent/python3"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("run scripts/install-deps.sh"), std::string::npos) << run.output;
}

TEST(JsonSchema, WithoutJsonschemaTheValidatorExitsSayingWhatToInstall) {
  // python3 -S leaves out site-packages and dist-packages, where python3-jsonschema lives.
  const ToolResult run = run_tool(
      {GPUCHECK_PYTHON, "-S", std::string(GPUCHECK_SOURCE_DIR) + "/tests/support/validate_json.py"},
      R"({"schema": "/dev/null"})"
      "\n");
  EXPECT_EQ(run.exit_code, 3) << run.output;
  EXPECT_NE(run.output.find("python3-jsonschema is missing"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("run scripts/install-deps.sh"), std::string::npos) << run.output;
}

} // namespace
} // namespace gpucheck::testing
