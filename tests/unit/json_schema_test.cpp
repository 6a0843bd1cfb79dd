#include "support/json_schema.hpp"

#include <gtest/gtest.h>

namespace gpucheck::testing {
namespace {

using nlohmann::json;

JsonSchema compiled(const json& schema) {
  Expected<JsonSchema> result = JsonSchema::compile(schema);
  if (!result) {
    throw std::runtime_error(result.error().message);
  }
  return std::move(result).value();
}

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
      "$comment": "no type: the use site says whether null is allowed",
      "properties": {"legs": {"type": "integer"}},
      "required": ["legs"],
      "additionalProperties": false
    }
  }
})");

json valid_person() {
  return json::parse(R"({"name": "Ada", "age": 36, "kind": "adult", "version": 1,
                         "pet": {"legs": 4}, "tags": ["a", "b"], "extra": {"x": 1.5}})");
}

TEST(JsonSchema, AcceptsAValidDocument) {
  EXPECT_EQ(compiled(k_person).validate(valid_person()), std::vector<std::string>{});
  json with_nulls = valid_person();
  with_nulls["age"] = nullptr;
  with_nulls["pet"] = nullptr;
  with_nulls["age"] = 2.0; // an integer by the standard: no fractional part
  EXPECT_EQ(compiled(k_person).validate(with_nulls), std::vector<std::string>{});
}

struct BadCase {
  const char* what;
  const char* pointer;
  const char* change; // JSON merge patch applied to the valid document
  const char* expected_fragment;
};

TEST(JsonSchema, RejectsEachKindOfViolationWithItsPlace) {
  const BadCase cases[] = {
      {"wrong type", "/name", R"({"name": 3})", "expected string, found integer"},
      {"type array", "/age", R"({"age": "old"})", R"(expected one of ["integer","null"])"},
      {"fraction is not integer", "/age", R"({"age": 2.5})", "found number"},
      {"minimum", "/age", R"({"age": -1})", "below the minimum 0"},
      {"enum", "/kind", R"({"kind": "robot"})", R"(is not one of ["adult","child"])"},
      {"const", "/version", R"({"version": 2})", "2 is not 1"},
      {"pattern", "/name", R"({"name": "ada"})", "does not match the pattern"},
      {"items", "/tags/1", R"({"tags": ["a", 7]})", "expected string"},
      {"additionalProperties schema", "/extra/y", R"({"extra": {"y": "no"}})", "expected number"},
      {"$ref target", "/pet/legs", R"({"pet": {"legs": "four"}})", "expected integer"},
      {"$ref additionalProperties", "/pet", R"({"pet": {"legs": 4, "wings": 2}})",
       R"(property "wings" is not allowed)"},
      {"type with $ref", "/pet", R"({"pet": [1]})", R"(expected one of ["object","null"])"},
  };
  const JsonSchema schema = compiled(k_person);
  for (const BadCase& c : cases) {
    json doc = valid_person();
    doc.merge_patch(json::parse(c.change));
    const std::vector<std::string> violations = schema.validate(doc);
    ASSERT_EQ(violations.size(), 1u) << c.what << "\n" << describe(violations);
    EXPECT_EQ(violations[0].rfind(std::string(c.pointer) + ": ", 0), 0u)
        << c.what << ": " << violations[0];
    EXPECT_NE(violations[0].find(c.expected_fragment), std::string::npos)
        << c.what << ": " << violations[0];
  }
}

TEST(JsonSchema, RejectsMissingAndUnknownProperties) {
  json doc = valid_person();
  doc.erase("tags");
  doc["nickname"] = "A";
  const std::vector<std::string> violations = compiled(k_person).validate(doc);
  ASSERT_EQ(violations.size(), 2u) << describe(violations);
  EXPECT_EQ(violations[0], "(root): required property \"tags\" is missing");
  EXPECT_EQ(violations[1], "(root): property \"nickname\" is not allowed");
}

TEST(JsonSchema, ValidatesAgainstANamedDefinition) {
  const JsonSchema schema = compiled(k_person);
  EXPECT_TRUE(schema.validate(json{{"legs", 2}}, "#/$defs/Pet").empty());
  EXPECT_EQ(schema.validate(json{{"legs", 2}, {"tail", true}}, "#/$defs/Pet").size(), 1u);
  EXPECT_EQ(schema.validate(json{{"legs", 2}}, "#/$defs/Cat").size(), 1u);
}

TEST(JsonSchema, FalseSchemaRejectsAndTrueSchemaAccepts) {
  const JsonSchema schema =
      compiled(json::parse(R"({"type": "object", "properties": {"any": true, "never": false}})"));
  EXPECT_TRUE(schema.validate(json{{"any", {1, 2}}}).empty());
  EXPECT_EQ(schema.validate(json{{"never", 1}}).size(), 1u);
}

TEST(JsonSchema, EscapesPointerTokens) {
  const JsonSchema schema =
      compiled(json::parse(R"({"type": "object", "additionalProperties": {"type": "string"}})"));
  const std::vector<std::string> violations = schema.validate(json{{"a/b~c", 1}});
  ASSERT_EQ(violations.size(), 1u);
  EXPECT_EQ(violations[0].rfind("/a~1b~0c: ", 0), 0u) << violations[0];
}

TEST(JsonSchema, RefusesKeywordsItDoesNotImplement) {
  for (const char* keyword : {R"({"anyOf": [{"type": "string"}]})", R"({"oneOf": []})",
                              R"({"maximum": 3})", R"({"minLength": 1})", R"({"format": "uri"})",
                              R"({"prefixItems": []})", R"({"if": true})"}) {
    Expected<JsonSchema> schema = JsonSchema::compile(json::parse(keyword));
    ASSERT_FALSE(schema) << keyword;
    EXPECT_NE(schema.error().message.find("is not implemented"), std::string::npos)
        << schema.error().message;
  }
  // Also inside sub-schemas that no document would reach.
  Expected<JsonSchema> nested = JsonSchema::compile(
      json::parse(R"({"$defs": {"Unused": {"properties": {"x": {"exclusiveMinimum": 0}}}}})"));
  ASSERT_FALSE(nested);
  EXPECT_NE(nested.error().message.find("/$defs/Unused/properties/x/exclusiveMinimum"),
            std::string::npos)
      << nested.error().message;
}

TEST(JsonSchema, RefusesMalformedKnownKeywords) {
  for (const char* bad :
       {R"({"type": "float"})", R"({"type": []})", R"({"required": "name"})", R"({"enum": []})",
        R"({"minimum": "0"})", R"({"pattern": "("})", R"({"$ref": "#/$defs/Missing"})",
        R"({"$ref": "other.json#/x"})", R"({"properties": {"a": 3}})", R"([1])"}) {
    EXPECT_FALSE(JsonSchema::compile(json::parse(bad))) << bad;
  }
}

TEST(JsonSchema, LoadNamesTheFileItCannotRead) {
  Expected<JsonSchema> schema = JsonSchema::load("/nonexistent/schema.json");
  ASSERT_FALSE(schema);
  EXPECT_NE(schema.error().message.find("/nonexistent/schema.json"), std::string::npos);
}

} // namespace
} // namespace gpucheck::testing
