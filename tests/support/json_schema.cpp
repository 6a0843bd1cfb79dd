#include "support/json_schema.hpp"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <fstream>
#include <optional>
#include <regex>
#include <span>
#include <sstream>

namespace gpucheck::testing {

namespace {

using nlohmann::json;

constexpr std::array<std::string_view, 7> k_type_names{"null",   "boolean", "integer", "number",
                                                       "string", "array",   "object"};
constexpr std::array<std::string_view, 6> k_annotations{"$schema",  "$id",   "$defs",
                                                        "$comment", "title", "description"};
constexpr std::string_view k_defs_prefix = "#/$defs/";
// $ref chains deeper than this are a cycle in the schema, not a deep document.
constexpr int k_max_ref_depth = 64;

bool contains(std::span<const std::string_view> set, std::string_view value) {
  for (std::string_view item : set) {
    if (item == value) {
      return true;
    }
  }
  return false;
}

std::string escape_pointer_token(std::string_view token) {
  std::string out;
  for (char c : token) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

std::string child_pointer(const std::string& parent, std::string_view token) {
  return parent + "/" + escape_pointer_token(token);
}

std::string show(const std::string& pointer) {
  return pointer.empty() ? "(root)" : pointer;
}

/// The $defs entry a "#/$defs/<name>" reference names, or nullptr.
const json* resolve(const json& root, std::string_view ref) {
  if (!ref.starts_with(k_defs_prefix)) {
    return nullptr;
  }
  const std::string name(ref.substr(k_defs_prefix.size()));
  if (!root.is_object() || !root.contains("$defs") || !root["$defs"].is_object() ||
      !root["$defs"].contains(name)) {
    return nullptr;
  }
  return &root["$defs"][name];
}

// ---- compile: check the schema itself --------------------------------------------------------

class SchemaChecker {
public:
  explicit SchemaChecker(const json& root) : m_root(root) {}

  std::optional<std::string> check(const json& schema, const std::string& where) {
    if (schema.is_boolean()) {
      return std::nullopt;
    }
    if (!schema.is_object()) {
      return fmt::format("{}: a schema must be an object or a boolean", show(where));
    }
    for (const auto& [key, value] : schema.items()) {
      const std::string at = child_pointer(where, key);
      std::optional<std::string> problem = check_keyword(key, value, at);
      if (problem) {
        return problem;
      }
    }
    return std::nullopt;
  }

private:
  std::optional<std::string> check_keyword(const std::string& key, const json& value,
                                           const std::string& at) {
    if (key == "type") {
      return check_type(value, at);
    }
    if (key == "properties" || key == "$defs") {
      if (!value.is_object()) {
        return fmt::format("{}: must be an object of schemas", at);
      }
      for (const auto& [name, sub] : value.items()) {
        if (auto problem = check(sub, child_pointer(at, name))) {
          return problem;
        }
      }
      return std::nullopt;
    }
    if (key == "additionalProperties" || key == "items") {
      return check(value, at);
    }
    if (key == "required") {
      if (!value.is_array()) {
        return fmt::format("{}: must be an array of strings", at);
      }
      for (const json& name : value) {
        if (!name.is_string()) {
          return fmt::format("{}: must be an array of strings", at);
        }
      }
      return std::nullopt;
    }
    if (key == "enum") {
      return value.is_array() && !value.empty()
                 ? std::nullopt
                 : std::optional<std::string>(fmt::format("{}: must be a non-empty array", at));
    }
    if (key == "const") {
      return std::nullopt;
    }
    if (key == "$ref") {
      if (!value.is_string() || resolve(m_root, value.get<std::string>()) == nullptr) {
        return fmt::format("{}: only resolvable \"#/$defs/<name>\" references are supported", at);
      }
      return std::nullopt;
    }
    if (key == "minimum") {
      return value.is_number()
                 ? std::nullopt
                 : std::optional<std::string>(fmt::format("{}: must be a number", at));
    }
    if (key == "pattern") {
      if (!value.is_string()) {
        return fmt::format("{}: must be a string", at);
      }
      try {
        std::regex compiled(value.get<std::string>(), std::regex::ECMAScript);
      } catch (const std::regex_error& e) {
        return fmt::format("{}: not a valid regular expression: {}", at, e.what());
      }
      return std::nullopt;
    }
    if (contains(k_annotations, key)) {
      return std::nullopt;
    }
    return fmt::format("{}: keyword '{}' is not implemented by this validator", at, key);
  }

  static std::optional<std::string> check_type(const json& value, const std::string& at) {
    const auto valid_name = [](const json& name) {
      return name.is_string() && contains(k_type_names, name.get<std::string>());
    };
    if (value.is_string()) {
      return valid_name(value) ? std::nullopt
                               : std::optional<std::string>(
                                     fmt::format("{}: unknown type name {}", at, value.dump()));
    }
    if (value.is_array() && !value.empty()) {
      for (const json& name : value) {
        if (!valid_name(name)) {
          return fmt::format("{}: unknown type name {}", at, name.dump());
        }
      }
      return std::nullopt;
    }
    return fmt::format("{}: must be a type name or a non-empty array of them", at);
  }

  const json& m_root;
};

// ---- validate: check an instance ------------------------------------------------------------

bool has_type(const json& instance, std::string_view type) {
  if (type == "null") {
    return instance.is_null();
  }
  if (type == "boolean") {
    return instance.is_boolean();
  }
  if (type == "integer") {
    if (instance.is_number_integer()) {
      return true;
    }
    // The standard counts 2.0 as an integer: a number with no fractional part.
    if (instance.is_number_float()) {
      const double value = instance.get<double>();
      return std::isfinite(value) && std::floor(value) == value;
    }
    return false;
  }
  if (type == "number") {
    return instance.is_number();
  }
  if (type == "string") {
    return instance.is_string();
  }
  if (type == "array") {
    return instance.is_array();
  }
  if (type == "object") {
    return instance.is_object();
  }
  return false;
}

std::string_view type_of(const json& instance) {
  if (instance.is_null()) {
    return "null";
  }
  if (instance.is_boolean()) {
    return "boolean";
  }
  if (instance.is_number_integer()) {
    return "integer";
  }
  if (instance.is_number()) {
    return "number";
  }
  if (instance.is_string()) {
    return "string";
  }
  if (instance.is_array()) {
    return "array";
  }
  return "object";
}

bool number_below(const json& instance, const json& minimum) {
  if (instance.is_number_unsigned()) {
    // An unsigned value cannot be below a negative minimum; compare exactly when both are whole.
    if (minimum.is_number_integer()) {
      return minimum.get<int64_t>() >= 0 &&
             instance.get<uint64_t>() < static_cast<uint64_t>(minimum.get<int64_t>());
    }
    return static_cast<double>(instance.get<uint64_t>()) < minimum.get<double>();
  }
  if (instance.is_number_integer() && minimum.is_number_integer()) {
    return instance.get<int64_t>() < minimum.get<int64_t>();
  }
  return instance.get<double>() < minimum.get<double>();
}

class Validator {
public:
  explicit Validator(const json& root) : m_root(root) {}

  void validate(const json& instance, const json& schema, const std::string& where, int depth) {
    if (schema.is_boolean()) {
      if (!schema.get<bool>()) {
        fail(where, "no value is allowed here");
      }
      return;
    }
    if (depth > k_max_ref_depth) {
      fail(where, "$ref chain too deep (a cycle in the schema)");
      return;
    }
    if (schema.contains("$ref")) {
      validate(instance, *resolve(m_root, schema["$ref"].get<std::string>()), where, depth + 1);
    }
    if (schema.contains("type")) {
      check_type(instance, schema["type"], where);
    }
    if (schema.contains("enum")) {
      bool found = false;
      for (const json& candidate : schema["enum"]) {
        found = found || candidate == instance;
      }
      if (!found) {
        fail(where, fmt::format("{} is not one of {}", instance.dump(), schema["enum"].dump()));
      }
    }
    if (schema.contains("const") && schema["const"] != instance) {
      fail(where, fmt::format("{} is not {}", instance.dump(), schema["const"].dump()));
    }
    if (schema.contains("minimum") && instance.is_number() &&
        number_below(instance, schema["minimum"])) {
      fail(where,
           fmt::format("{} is below the minimum {}", instance.dump(), schema["minimum"].dump()));
    }
    if (schema.contains("pattern") && instance.is_string()) {
      const std::regex pattern(schema["pattern"].get<std::string>(), std::regex::ECMAScript);
      if (!std::regex_search(instance.get<std::string>(), pattern)) {
        fail(where, fmt::format("{} does not match the pattern {}", instance.dump(),
                                schema["pattern"].dump()));
      }
    }
    if (instance.is_object()) {
      check_object(instance, schema, where, depth);
    }
    if (instance.is_array() && schema.contains("items")) {
      for (size_t i = 0; i < instance.size(); ++i) {
        validate(instance[i], schema["items"], child_pointer(where, std::to_string(i)), depth);
      }
    }
  }

  std::vector<std::string> take() { return std::move(m_violations); }

private:
  void fail(const std::string& where, std::string problem) {
    m_violations.push_back(fmt::format("{}: {}", show(where), problem));
  }

  void check_type(const json& instance, const json& type, const std::string& where) {
    if (type.is_string()) {
      if (!has_type(instance, type.get<std::string>())) {
        fail(where,
             fmt::format("expected {}, found {}", type.get<std::string>(), type_of(instance)));
      }
      return;
    }
    for (const json& name : type) {
      if (has_type(instance, name.get<std::string>())) {
        return;
      }
    }
    fail(where, fmt::format("expected one of {}, found {}", type.dump(), type_of(instance)));
  }

  void check_object(const json& instance, const json& schema, const std::string& where, int depth) {
    if (schema.contains("required")) {
      for (const json& name : schema["required"]) {
        if (!instance.contains(name.get<std::string>())) {
          fail(where, fmt::format("required property \"{}\" is missing", name.get<std::string>()));
        }
      }
    }
    const json* properties = schema.contains("properties") ? &schema["properties"] : nullptr;
    for (const auto& [key, value] : instance.items()) {
      const std::string at = child_pointer(where, key);
      if (properties != nullptr && properties->contains(key)) {
        validate(value, (*properties)[key], at, depth);
      } else if (schema.contains("additionalProperties")) {
        const json& additional = schema["additionalProperties"];
        if (additional.is_boolean() && !additional.get<bool>()) {
          fail(where, fmt::format("property \"{}\" is not allowed", key));
        } else {
          validate(value, additional, at, depth);
        }
      }
    }
  }

  const json& m_root;
  std::vector<std::string> m_violations;
};

} // namespace

Expected<JsonSchema> JsonSchema::compile(nlohmann::json schema) {
  SchemaChecker checker(schema);
  if (std::optional<std::string> problem = checker.check(schema, "")) {
    return Error{*problem};
  }
  return JsonSchema(std::move(schema));
}

Expected<JsonSchema> JsonSchema::load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Error{fmt::format("cannot read schema file '{}'", path)};
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  nlohmann::json schema;
  try {
    schema = nlohmann::json::parse(buffer.str());
  } catch (const nlohmann::json::parse_error& e) {
    return Error{fmt::format("{}: not valid JSON: {}", path, e.what())};
  }
  Expected<JsonSchema> compiled = compile(std::move(schema));
  if (!compiled) {
    return Error{fmt::format("{}: {}", path, compiled.error().message)};
  }
  return compiled;
}

std::vector<std::string> JsonSchema::validate(const nlohmann::json& instance) const {
  Validator validator(m_schema);
  validator.validate(instance, m_schema, "", 0);
  return validator.take();
}

std::vector<std::string> JsonSchema::validate(const nlohmann::json& instance,
                                              std::string_view ref) const {
  const json* target = resolve(m_schema, ref);
  if (target == nullptr) {
    return {fmt::format("(schema): reference {} does not resolve", ref)};
  }
  Validator validator(m_schema);
  validator.validate(instance, *target, "", 0);
  return validator.take();
}

std::string describe(const std::vector<std::string>& violations) {
  std::string out;
  for (const std::string& violation : violations) {
    out += violation + "\n";
  }
  return out;
}

} // namespace gpucheck::testing
