#include "cli/gate_options.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>
// Header-only, without formatters (CMakeLists.txt): Debian's target would link
// libtomlplusplus.so.3, which the machines gpucheck is copied onto do not have.
// toml++ 3.3 asserts what its parser assumes, and fuzz_config found input that breaks it
// ("[#" reaches parse_key with '#'): without NDEBUG an abort, with it __builtin_assume under
// clang, undefined behaviour. Its checks after the assertion refuse such input (an invalid TOML
// file), so the assertions are off and never assumed: NDEBUG is lifted for the header alone.
#pragma push_macro("NDEBUG")
#undef NDEBUG
#define TOML_ASSERT(expr) static_cast<void>(0)
#include <toml++/toml.h>
#pragma pop_macro("NDEBUG")

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>

#include "cli/options.hpp"
#include "gates/metric_names.hpp"
#include "gpucheck/model/json_input.hpp"
#include "gpucheck/suggest.hpp"
#include "render/utf8.hpp"

namespace gpucheck::cli {

namespace {

/// A --min expression whose metric some check reports (gates/metric_names.hpp).
/// The metric is judged before the syntax of the rest, so that `UNKNOWN_METRIC=20` is told which
/// metrics exist rather than how a name is spelt.
Expected<gates::MetricMinimum> known_minimum(std::string_view text) {
  if (const size_t eq = text.find('='); eq != std::string_view::npos) {
    std::string_view metric = text.substr(0, eq);
    metric.remove_prefix(std::min(metric.find_first_not_of(" \t"), metric.size()));
    metric = metric.substr(0, metric.find_last_not_of(" \t") + 1);
    if (!metric.empty()) {
      if (Expected<std::string_view> known = gates::check_known_metric(metric); !known) {
        return Error{fmt::format("'{}': {}", text, known.error().message)};
      }
    }
  }
  return gates::parse_minimum(text);
}

/// A config file is a few lines; more than this is not one.
constexpr size_t k_max_config_bytes = size_t{1} << 20;

/// A CLI11 validator from one of the gate parsers: empty string when the value is good, else the
/// parser's message.
template <typename Parse> CLI::Validator expression_validator(Parse parse, std::string name) {
  return CLI::Validator(
      [parse](std::string& text) -> std::string {
        for (const std::string& part : split_commas({text})) {
          auto parsed = parse(part);
          if (!parsed) {
            return parsed.error().message;
          }
        }
        return "";
      },
      std::move(name));
}

/// --config files: TOML 1.0 (toml++), or JSON when the file is a JSON object ('{' first). Both
/// are read into one JSON document and then into CLI11's items the same way: option names with
/// '-' or '_' ("expect_gpus" = "expect-gpus"), and a table of minimums (TOML `[min]` or
/// `min = {...}`, JSON "min": {...}) as well as a list of "METRIC=NUMBER" strings.
namespace {
/// The code point of the UTF-8 sequence at text[i] past ASCII and its `length`; 0 when it is
/// not UTF-8 (a bad lead or continuation byte, an overlong form, a surrogate, past U+10FFFF).
uint32_t utf8_point(std::string_view text, size_t i, size_t& length) {
  const auto byte = static_cast<unsigned char>(text[i]);
  length = byte >= 0xf0 && byte < 0xf5   ? 4
           : byte >= 0xe0 && byte < 0xf0 ? 3
           : byte >= 0xc2 && byte < 0xe0 ? 2
                                         : 0;
  uint32_t point = length == 4 ? byte & 0x07U : length == 3 ? byte & 0x0fU : byte & 0x1fU;
  for (size_t k = 1; k < length; ++k) {
    const auto next = i + k < text.size() ? static_cast<unsigned char>(text[i + k]) : 0U;
    if ((next & 0xc0U) != 0x80U) {
      return 0;
    }
    point = (point << 6U) | (next & 0x3fU);
  }
  if (length == 0 || point < 0x80 || point > 0x10ffff || (point >= 0xd800 && point < 0xe000)) {
    return 0;
  }
  return point;
}
} // namespace

class ConfigFile : public CLI::Config {
public:
  /// `app` names the options a file may set; it outlives the parse.
  explicit ConfigFile(const CLI::App& app) : m_app(app) {}

  /// "config file 'PATH', line 3" (the line of a TOML file's key; JSON's are not kept) for an
  /// option the file set, or nullopt for one it did not.
  std::optional<std::string> position(std::string_view option) const {
    if (std::find(m_read.begin(), m_read.end(), option) == m_read.end()) {
      return std::nullopt;
    }
    const auto line = m_lines.find(std::string(option));
    return line != m_lines.end() ? fmt::format("{}, line {}", config_label(), line->second)
                                 : config_label();
  }

  std::vector<CLI::ConfigItem> from_config(std::istream& input) const override {
    // A size cap: `--config /dev/zero` read forever and threw bad_alloc.
    std::string text;
    char chunk[1 << 14];
    while (input.read(chunk, sizeof chunk) || input.gcount() > 0) {
      text.append(chunk, static_cast<size_t>(input.gcount()));
      if (text.size() > k_max_config_bytes) {
        throw CLI::ConfigError(
            fmt::format("{}: larger than {} KiB", config_label(), k_max_config_bytes >> 10));
      }
    }
    // A binary file is not a config: its bytes would otherwise come back as an "unknown
    // option" of raw control characters on the terminal.
    if (text.find('\0') != std::string::npos || !render::is_valid_utf8(text)) {
      throw CLI::ConfigError(
          fmt::format("{} is not a text file (a config is TOML or JSON)", config_label()));
    }
    const size_t first = text.find_first_not_of(" \t\r\n");
    // A JSON object starts with '{'; a JSON array would read as a TOML section, so it is
    // recognised by parsing (and then refused: a config is an object).
    const bool is_json =
        first != std::string::npos &&
        (text[first] == '{' || (text[first] == '[' && nlohmann::json::accept(text)));
    return items_of(is_json ? json_document(text) : toml_document(text));
  }

private:
  /// A key as a message shows it: control characters escaped, at most 64 characters.
  static std::string shown_key(std::string_view key) {
    std::string shown;
    for (const char c : key.substr(0, 64)) {
      const auto byte = static_cast<unsigned char>(c);
      shown += byte < 0x20 || byte == 0x7f ? fmt::format("\\x{:02x}", byte) : std::string(1, c);
    }
    return key.size() > 64 ? render::visible_utf8(shown) + "..." : render::visible_utf8(shown);
  }

  /// "config file 'PATH'", for messages.
  std::string config_label() const {
    const CLI::Option* option = m_app.get_option_no_throw("--config");
    if (option != nullptr && !option->results().empty()) {
      return fmt::format("config file '{}'", option->results().back());
    }
    return "config file";
  }

  static std::string scalar(const nlohmann::json& value, const std::string& key) {
    if (value.is_string()) {
      return value.get<std::string>();
    }
    if (value.is_boolean()) {
      return value.get<bool>() ? "true" : "false";
    }
    if (value.is_number()) {
      return value.dump();
    }
    throw CLI::ConfigError(fmt::format(
        "config file: \"{}\" must be a string, number, boolean or a list of them", key));
  }

  /// Writing configs is not supported (`--write-config` does not exist).
  std::string to_config(const CLI::App* /*app*/, bool /*default_also*/, bool /*write_description*/,
                        std::string /*prefix*/) const override {
    return "";
  }

  nlohmann::json json_document(const std::string& text) const {
    // Never throws: 1e400 aborted the run (SIGABRT); now it names the JSON path.
    Expected<nlohmann::json> parsed = parse_json_input(text);
    if (!parsed) {
      throw CLI::ConfigError(
          fmt::format("{} is not valid JSON {}", config_label(), parsed.error().message));
    }
    nlohmann::json doc = std::move(parsed).value();
    if (!doc.is_object()) {
      throw CLI::ConfigError("config file: a JSON config must be an object of options");
    }
    return doc;
  }

  /// A TOML file as the JSON document it means. Dates and times (which no option takes) and
  /// inf/nan are refused with the key's dotted path.
  /// The config as toml++ 3.3 may read it: ASCII only. Its whitespace classifier reaches
  /// __builtin_unreachable for many characters past ASCII (U+03CF after a bare key, U+0492 after
  /// a malformed number; found by fuzz_config), wherever its parser asks, malformed documents
  /// included. So each such character in a "basic" string becomes its \u escape (the same
  /// string), in a comment a '?'; anywhere else (a bare key, a 'literal' string, which TOML
  /// cannot escape) it is refused naming the line, as is text that is not UTF-8.
  std::string ascii_toml(std::string_view text) const {
    std::string out;
    out.reserve(text.size());
    size_t line = 1;
    enum class In { bare, comment, basic, literal, multi_basic, multi_literal } in = In::bare;
    const auto refuse = [&](std::string_view what) {
      throw CLI::ConfigError(
          fmt::format("{} is not valid TOML: line {}: {}", config_label(), line, what));
    };
    for (size_t i = 0; i < text.size(); ++i) {
      const auto byte = static_cast<unsigned char>(text[i]);
      const char c = text[i];
      if (byte >= 0x80) {
        size_t length = 0;
        const uint32_t point = utf8_point(text, i, length);
        if (point == 0) {
          refuse("text that is not UTF-8");
        }
        if (in == In::comment) {
          out += '?';
        } else if (in == In::basic || in == In::multi_basic) {
          out += point > 0xffff ? fmt::format("\\U{:08X}", point) : fmt::format("\\u{:04X}", point);
        } else if (in == In::literal || in == In::multi_literal) {
          refuse("a character past ASCII in a 'literal' string: write it in a \"basic\" string");
        } else {
          refuse("a character past ASCII outside a string or a comment");
        }
        i += length - 1;
        continue;
      }
      const auto at = [&](std::string_view token) { return text.substr(i, token.size()) == token; };
      out += c;
      if (c == '\n') {
        ++line;
      }
      switch (in) {
      case In::bare:
        if (c == '#') {
          in = In::comment;
        } else if (at("\"\"\"") || at("'''")) {
          in = c == '"' ? In::multi_basic : In::multi_literal;
          out.append(text.substr(i + 1, 2));
          i += 2;
        } else if (c == '"') {
          in = In::basic;
        } else if (c == '\'') {
          in = In::literal;
        }
        break;
      case In::comment:
        in = c == '\n' ? In::bare : In::comment;
        break;
      case In::basic:
      case In::multi_basic:
        if (c == '\\' && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) < 0x80) {
          line += text[i + 1] == '\n' ? 1 : 0;
          out += text[++i]; // an escaped character (a quote), or a line-ending backslash's newline
        } else if (in == In::basic && (c == '"' || c == '\n')) {
          in = In::bare;
        } else if (in == In::multi_basic && at("\"\"\"")) {
          in = In::bare;
          out.append(text.substr(i + 1, 2));
          i += 2;
        }
        break;
      case In::literal:
        in = c == '\'' || c == '\n' ? In::bare : In::literal;
        break;
      case In::multi_literal:
        if (at("'''")) {
          in = In::bare;
          out.append(text.substr(i + 1, 2));
          i += 2;
        }
        break;
      }
    }
    return out;
  }

  nlohmann::json toml_document(const std::string& text) const {
    const std::string ascii = ascii_toml(text);
    try {
      const toml::table document = toml::parse(ascii);
      for (const auto& [name, value] : document) {
        std::string option(name.str());
        std::replace(option.begin(), option.end(), '_', '-');
        m_lines[option] = static_cast<int>(value.source().begin.line);
      }
      return json_of(document, "");
    } catch (const toml::parse_error& error) {
      throw CLI::ConfigError(fmt::format("{} is not valid TOML: line {}, column {}: {}",
                                         config_label(), error.source().begin.line,
                                         error.source().begin.column, error.description()));
    }
  }

  static nlohmann::json json_of(const toml::node& node, const std::string& key) {
    if (const toml::table* table = node.as_table()) {
      nlohmann::json object = nlohmann::json::object();
      for (const auto& [name, value] : *table) {
        const std::string child(name.str());
        object[child] = json_of(value, key.empty() ? child : key + "." + child);
      }
      return object;
    }
    if (const toml::array* array = node.as_array()) {
      nlohmann::json list = nlohmann::json::array();
      for (const toml::node& element : *array) {
        list.push_back(json_of(element, key));
      }
      return list;
    }
    if (const auto* string = node.as_string()) {
      return string->get();
    }
    if (const auto* integer = node.as_integer()) {
      return integer->get();
    }
    if (const auto* boolean = node.as_boolean()) {
      return boolean->get();
    }
    if (const auto* number = node.as_floating_point();
        number != nullptr && std::isfinite(number->get())) {
      return number->get();
    }
    throw CLI::ConfigError(fmt::format(
        "config file: \"{}\" must be a string, finite number, boolean or a list of them", key));
  }

  /// A config document's options as CLI11 items: '_' in names read as '-', a list gives one
  /// input per element, the "min" object one "METRIC=NUMBER" input per entry ('-' in a metric
  /// read as '_').
  std::vector<CLI::ConfigItem> items_of(const nlohmann::json& doc) const {
    std::vector<CLI::ConfigItem> read;
    for (const auto& [key, value] : doc.items()) {
      CLI::ConfigItem item;
      item.name = key;
      std::replace(item.name.begin(), item.name.end(), '_', '-');
      if (m_app.get_option_no_throw("--" + item.name) == nullptr) {
        std::vector<std::string> keys;
        for (const CLI::Option* option : m_app.get_options()) {
          for (const std::string& name : option->get_lnames()) {
            keys.push_back(name);
          }
        }
        throw CLI::ConfigError(fmt::format(
            "{}: unknown option '{}'{} (keys are long option names, e.g. expect-gpus, require, "
            "min, fail-on, ignore)",
            config_label(), shown_key(item.name), did_you_mean_words(item.name, keys)));
      }
      if (value.is_null()) {
        continue;
      }
      if (value.is_array()) {
        for (const nlohmann::json& element : value) {
          item.inputs.push_back(scalar(element, key));
        }
      } else if (value.is_object() && (key == "min")) {
        for (const auto& [metric, minimum] : value.items()) {
          std::string name = metric;
          std::replace(name.begin(), name.end(), '-', '_');
          item.inputs.push_back(fmt::format("{}={}", name, scalar(minimum, key + "." + metric)));
        }
      } else {
        item.inputs.push_back(scalar(value, key));
      }
      m_read.push_back(item.name);
      read.push_back(std::move(item));
    }
    return read;
  }

  const CLI::App& m_app;
  mutable std::vector<std::string> m_read;    ///< the options the file set (CLI11's names)
  mutable std::map<std::string, int> m_lines; ///< a TOML file's line of each option
};

} // namespace

void add_gate_options(CLI::App& app, GateOptions& options) {
  app.add_option("--expect-gpus", options.expect_gpus,
                 "Gate: fail unless exactly N GPUs are seen (gate.expect_gpus)")
      ->check(CLI::Range(0, 4096));
  app.add_option("--require", options.require,
                 "Gate: a version requirement, e.g. 'driver>=550', 'cudnn>=9.1', 'cc>=8.0' "
                 "(driver, cuda, cudart, cudnn, cublas, nccl, toolkit, cc; repeatable)")
      ->check(expression_validator(gates::parse_requirement, "EXPR"));
  app.add_option("--min", options.min,
                 "Gate: a minimum for a metric on every GPU, e.g. h2d_gbps=20 (repeatable; an "
                 "unknown metric is a usage error)")
      ->check(expression_validator(known_minimum, "METRIC=N"));
  app.add_option("--fail-on", options.fail_on,
                 "Gate: 'warn' makes warnings fail the run (exit 1); default 'fail'")
      ->check(expression_validator(gates::parse_fail_on, "LEVEL"));
  app.add_option("--ignore", options.ignore,
                 "Keep findings with this code in the report but do not count them "
                 "(repeatable, comma-separated)")
      ->check(expression_validator(gates::parse_ignored_code, "CODE"));
  app.set_config("--config", "",
                 "Read options (gates and others) from a TOML or JSON file; the command line "
                 "overrides it");
  app.config_formatter(std::make_shared<ConfigFile>(app));
  app.allow_config_extras(CLI::config_extras_mode::error);
}

std::optional<std::string> config_position(const CLI::App& app, std::string_view option) {
  const auto file = std::dynamic_pointer_cast<const ConfigFile>(app.get_config_formatter());
  if (file == nullptr || option.empty()) {
    return std::nullopt;
  }
  return file->position(option);
}

gates::GateSpec gate_spec(const GateOptions& options) {
  const auto value = [](auto parsed) {
    if (!parsed) {
      throw std::invalid_argument(parsed.error().message);
    }
    return std::move(parsed).value();
  };
  gates::GateSpec spec;
  spec.expect_gpus = options.expect_gpus;
  for (const std::string& text : split_commas(options.require)) {
    spec.requirements.push_back(value(gates::parse_requirement(text)));
  }
  for (const std::string& text : split_commas(options.min)) {
    spec.minimums.push_back(value(known_minimum(text)));
  }
  spec.fail_on_warn = value(gates::parse_fail_on(options.fail_on));
  for (const std::string& text : split_commas(options.ignore)) {
    spec.ignored_codes.push_back(value(gates::parse_ignored_code(text)));
  }
  return spec;
}

} // namespace gpucheck::cli
