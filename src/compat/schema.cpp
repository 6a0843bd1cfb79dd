#include "compat/schema.hpp"

#include <fmt/format.h>

#include <map>

#include "compat/name_pattern.hpp"

namespace gpucheck::compat {

namespace {

std::string_view type_name(const nlohmann::json& value) {
  switch (value.type()) {
  case nlohmann::json::value_t::null:
    return "null";
  case nlohmann::json::value_t::boolean:
    return "boolean";
  case nlohmann::json::value_t::number_integer:
  case nlohmann::json::value_t::number_unsigned:
    return "integer";
  case nlohmann::json::value_t::number_float:
    return "number";
  case nlohmann::json::value_t::string:
    return "string";
  case nlohmann::json::value_t::array:
    return "array";
  case nlohmann::json::value_t::object:
    return "object";
  default:
    return "unknown";
  }
}

bool has_type(const nlohmann::json& value, const std::string& type) {
  const std::string_view actual = type_name(value);
  return actual == type || (type == "number" && actual == "integer");
}

class Validator {
public:
  Validator(const nlohmann::json& root, size_t max_problems)
      : m_root(root), m_max_problems(max_problems) {}

  void check(const nlohmann::json& value, const nlohmann::json& schema, const std::string& path) {
    if (m_problems.size() >= m_max_problems || !schema.is_object()) {
      return;
    }
    if (const auto ref = schema.find("$ref"); ref != schema.end()) {
      const nlohmann::json* target = resolve(ref->get<std::string>());
      if (target == nullptr) {
        add(path, fmt::format("schema reference '{}' cannot be resolved", ref->get<std::string>()));
        return;
      }
      check(value, *target, path);
    }
    if (const auto type = schema.find("type"); type != schema.end() && !check_type(value, *type)) {
      add(path, fmt::format("expected {}, got {}", type->dump(), type_name(value)));
      return;
    }
    if (const auto allowed = schema.find("enum"); allowed != schema.end()) {
      if (std::find(allowed->begin(), allowed->end(), value) == allowed->end()) {
        add(path, fmt::format("{} is not one of {}", value.dump(), allowed->dump()));
      }
    }
    if (value.is_string()) {
      check_string(value.get<std::string>(), schema, path);
    }
    if (value.is_number()) {
      if (const auto minimum = schema.find("minimum");
          minimum != schema.end() && value.get<double>() < minimum->get<double>()) {
        add(path, fmt::format("{} is below the minimum {}", value.dump(), minimum->dump()));
      }
    }
    if (value.is_array()) {
      check_array(value, schema, path);
    }
    if (value.is_object()) {
      check_object(value, schema, path);
    }
  }

  std::vector<SchemaProblem> take() { return std::move(m_problems); }

private:
  void add(const std::string& path, std::string message) {
    if (m_problems.size() < m_max_problems) {
      m_problems.push_back({path, std::move(message)});
    }
  }

  const nlohmann::json* resolve(const std::string& ref) const {
    constexpr std::string_view k_prefix = "#/$defs/";
    if (ref.rfind(k_prefix, 0) != 0) {
      return nullptr;
    }
    const auto defs = m_root.find("$defs");
    if (defs == m_root.end()) {
      return nullptr;
    }
    const auto target = defs->find(ref.substr(k_prefix.size()));
    return target == defs->end() ? nullptr : &*target;
  }

  static bool check_type(const nlohmann::json& value, const nlohmann::json& type) {
    if (type.is_string()) {
      return has_type(value, type.get<std::string>());
    }
    for (const nlohmann::json& one : type) {
      if (has_type(value, one.get<std::string>())) {
        return true;
      }
    }
    return false;
  }

  void check_string(const std::string& text, const nlohmann::json& schema,
                    const std::string& path) {
    if (const auto min_length = schema.find("minLength");
        min_length != schema.end() && text.size() < min_length->get<size_t>()) {
      add(path, fmt::format("'{}' is shorter than {} characters", text, min_length->get<size_t>()));
    }
    if (const auto pattern = schema.find("pattern"); pattern != schema.end()) {
      const Expected<NamePattern>& compiled_pattern = compiled(pattern->get<std::string>());
      if (text.size() > NamePattern::k_max_text_bytes) {
        add(path, fmt::format("a string of {} bytes (at most {} are accepted here)", text.size(),
                              NamePattern::k_max_text_bytes));
      } else if (!compiled_pattern) {
        add(path, fmt::format("the schema's pattern {} cannot be used: {}",
                              pattern->get<std::string>(), compiled_pattern.error().message));
      } else if (!compiled_pattern->search(text)) {
        add(path, fmt::format("'{}' does not match {}", text, pattern->get<std::string>()));
      }
    }
  }

  void check_array(const nlohmann::json& value, const nlohmann::json& schema,
                   const std::string& path) {
    if (const auto min_items = schema.find("minItems");
        min_items != schema.end() && value.size() < min_items->get<size_t>()) {
      add(path,
          fmt::format("needs at least {} items, has {}", min_items->get<size_t>(), value.size()));
    }
    if (const auto items = schema.find("items"); items != schema.end()) {
      for (size_t i = 0; i < value.size(); ++i) {
        check(value[i], *items, fmt::format("{}[{}]", path, i));
      }
    }
  }

  void check_object(const nlohmann::json& value, const nlohmann::json& schema,
                    const std::string& path) {
    if (const auto required = schema.find("required"); required != schema.end()) {
      for (const nlohmann::json& name : *required) {
        if (!value.contains(name.get<std::string>())) {
          add(path, fmt::format("missing required member '{}'", name.get<std::string>()));
        }
      }
    }
    const auto properties = schema.find("properties");
    const auto additional = schema.find("additionalProperties");
    for (const auto& [key, member] : value.items()) {
      const std::string member_path = fmt::format("{}.{}", path, key);
      if (properties != schema.end() && properties->contains(key)) {
        check(member, (*properties)[key], member_path);
      } else if (additional != schema.end() && additional->is_boolean() &&
                 !additional->get<bool>()) {
        add(member_path, "member not allowed here");
      }
    }
  }

  /// Linear-time matching (name_pattern.hpp): the text comes from a --matrix file.
  const Expected<NamePattern>& compiled(const std::string& pattern) {
    auto it = m_patterns.find(pattern);
    if (it == m_patterns.end()) {
      it = m_patterns.emplace(pattern, NamePattern::compile(pattern, false)).first;
    }
    return it->second;
  }

  const nlohmann::json& m_root;
  size_t m_max_problems;
  std::vector<SchemaProblem> m_problems;
  std::map<std::string, Expected<NamePattern>> m_patterns;
};

} // namespace

std::vector<SchemaProblem> validate_schema(const nlohmann::json& document,
                                           const nlohmann::json& schema, size_t max_problems) {
  Validator validator(schema, max_problems);
  validator.check(document, schema, "$");
  return validator.take();
}

} // namespace gpucheck::compat
