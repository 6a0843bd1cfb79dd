// The gate options through CLI11: command line, TOML and JSON config files, the command line
// overriding the file, and malformed values refused with a message naming the problem.
#include "cli/gate_options.hpp"

#include <CLI/CLI.hpp>
#include <gtest/gtest.h>

#include <fstream>

namespace gpucheck::cli {
namespace {

struct Parsed {
  GateOptions options;
  std::string error; ///< CLI11's message when the parse failed
};

Parsed parse(std::vector<std::string> args) {
  Parsed parsed;
  CLI::App app{"test"};
  add_gate_options(app, parsed.options);
  std::vector<char*> argv;
  std::string name = "gpucheck";
  argv.push_back(name.data());
  for (std::string& arg : args) {
    argv.push_back(arg.data());
  }
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError& e) {
    parsed.error = e.what();
  }
  return parsed;
}

std::string config_file(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "gpucheck_gate_options_" + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

TEST(GateOptions, CommandLineGivesTheSpec) {
  const Parsed p =
      parse({"--expect-gpus", "8", "--require", "driver>=550", "--require", "cudnn>=9.1,cuda>=12.4",
             "--min", "h2d_gbps=20", "--fail-on", "warn", "--ignore", "gpu.persistence_off"});
  ASSERT_EQ(p.error, "");
  const gates::GateSpec spec = gate_spec(p.options);
  EXPECT_EQ(spec.expect_gpus, 8);
  ASSERT_EQ(spec.requirements.size(), 3u);
  EXPECT_EQ(spec.requirements[2].text, "cuda>=12.4");
  ASSERT_EQ(spec.minimums.size(), 1u);
  EXPECT_EQ(spec.minimums[0].metric, "h2d_gbps");
  EXPECT_TRUE(spec.fail_on_warn);
  EXPECT_EQ(spec.ignored_codes, std::vector<std::string>{"gpu.persistence_off"});
}

TEST(GateOptions, NoGateOptionsMeansAnEmptySpec) {
  const Parsed p = parse({});
  ASSERT_EQ(p.error, "");
  EXPECT_TRUE(gate_spec(p.options).empty());
}

TEST(GateOptions, MalformedValuesAreParseErrors) {
  const struct {
    std::vector<std::string> args;
    std::string says;
  } cases[] = {
      {{"--require", "drvier>=550"}, "unknown component 'drvier'"},
      {{"--require", "driver=>550"}, "unknown operator"},
      {{"--min", "h2d_gbps"}, "write METRIC=NUMBER"},
      {{"--min", "h2d_gbps=fast"}, "'fast' is not a number"},
      {{"--min", "UNKNOWN_METRIC=20"}, "h2d_gbps, d2h_gbps"},
      {{"--min", "unknown_metric=20"}, "'unknown_metric' is not a metric any check reports"},
      {{"--fail-on", "sometimes"}, "warn or fail"},
      {{"--ignore", "no.such_code"}, "is not a finding code"},
      {{"--expect-gpus", "-1"}, "--expect-gpus"},
      {{"--expect-gpus", "eight"}, "--expect-gpus"},
  };
  for (const auto& c : cases) {
    const Parsed p = parse(c.args);
    EXPECT_NE(p.error.find(c.says), std::string::npos) << c.args[1] << " -> '" << p.error << "'";
  }
}

TEST(GateOptions, TomlConfigFile) {
  const std::string path = config_file("gates.toml", R"(# gates for the GPU runners
expect-gpus = 4
require = ["driver>=550", "cudnn>=9.1"]
fail_on = "warn"
ignore = ["gpu.persistence_off"]

[min]
h2d_gbps = 20
d2h_gbps = 18.5
)");
  const Parsed p = parse({"--config", path});
  ASSERT_EQ(p.error, "");
  const gates::GateSpec spec = gate_spec(p.options);
  EXPECT_EQ(spec.expect_gpus, 4);
  ASSERT_EQ(spec.requirements.size(), 2u);
  EXPECT_EQ(spec.requirements[1].text, "cudnn>=9.1");
  ASSERT_EQ(spec.minimums.size(), 2u); // in the order of their names, as from JSON
  EXPECT_EQ(spec.minimums[0].text, "d2h_gbps=18.5");
  EXPECT_EQ(spec.minimums[1].text, "h2d_gbps=20");
  EXPECT_TRUE(spec.fail_on_warn);
  EXPECT_EQ(spec.ignored_codes, std::vector<std::string>{"gpu.persistence_off"});
}

// Valid TOML that CLI11's subset refused (an inline table, a multi-line array
// with a trailing comma, dotted keys, a literal string) now reads as TOML means it.
TEST(GateOptions, TomlConfigFileUsesTheWholeLanguage) {
  const std::string path = config_file("full.toml", R"(expect_gpus = 8   # the node's GPUs
require = [
  "driver>=550",
  'cudnn>=9.1',  # a literal string
]
min = {h2d_gbps = 20, d2h-gbps = 18.5}
fail-on = """warn"""
)");
  const Parsed p = parse({"--config", path});
  ASSERT_EQ(p.error, "");
  const gates::GateSpec spec = gate_spec(p.options);
  EXPECT_EQ(spec.expect_gpus, 8);
  ASSERT_EQ(spec.requirements.size(), 2u);
  EXPECT_EQ(spec.requirements[1].text, "cudnn>=9.1");
  ASSERT_EQ(spec.minimums.size(), 2u);
  EXPECT_EQ(spec.minimums[0].text, "d2h_gbps=18.5");
  EXPECT_EQ(spec.minimums[1].text, "h2d_gbps=20");
  EXPECT_TRUE(spec.fail_on_warn);

  const Parsed dotted = parse({"--config", config_file("dotted.toml", R"(min.h2d_gbps = 20
min.p2p_0_1_write_gbps = 300.0
)")});
  ASSERT_EQ(dotted.error, "");
  const gates::GateSpec dotted_spec = gate_spec(dotted.options);
  ASSERT_EQ(dotted_spec.minimums.size(), 2u);
  EXPECT_EQ(dotted_spec.minimums[1].metric, "p2p_0_1_write_gbps");
  EXPECT_DOUBLE_EQ(dotted_spec.minimums[1].minimum, 300.0);
}

TEST(GateOptions, JsonConfigFile) {
  const std::string path = config_file("gates.json", R"({
  "expect_gpus": 2,
  "require": ["cuda>=12.4"],
  "min": {"h2d_gbps": 20},
  "fail-on": "warn"
})");
  const Parsed p = parse({"--config", path});
  ASSERT_EQ(p.error, "");
  const gates::GateSpec spec = gate_spec(p.options);
  EXPECT_EQ(spec.expect_gpus, 2);
  ASSERT_EQ(spec.requirements.size(), 1u);
  EXPECT_EQ(spec.requirements[0].text, "cuda>=12.4");
  ASSERT_EQ(spec.minimums.size(), 1u);
  EXPECT_DOUBLE_EQ(spec.minimums[0].minimum, 20.0);
  EXPECT_TRUE(spec.fail_on_warn);
}

TEST(GateOptions, CommandLineOverridesTheFile) {
  const std::string path = config_file(
      "override.json", R"({"expect_gpus": 2, "require": ["driver>=550"], "fail_on": "warn"})");
  const Parsed p = parse(
      {"--config", path, "--expect-gpus", "8", "--require", "driver>=580", "--fail-on", "fail"});
  ASSERT_EQ(p.error, "");
  const gates::GateSpec spec = gate_spec(p.options);
  EXPECT_EQ(spec.expect_gpus, 8);
  ASSERT_EQ(spec.requirements.size(), 1u);
  EXPECT_EQ(spec.requirements[0].text, "driver>=580");
  EXPECT_FALSE(spec.fail_on_warn);
}

TEST(GateOptions, BadConfigFilesAreParseErrors) {
  const struct {
    std::string name;
    std::string text;
    std::string says;
  } cases[] = {
      {"bad.json", "{\"expect_gpus\": 2,", "not valid JSON"},
      {"array.json", "[1, 2]", "must be an object"},
      {"nested.json", R"({"require": {"driver": 550}})", "\"require\" must be"},
      {"expr.json", R"({"require": ["driver>>550"]})", "driver>>550"},
      {"unknown.toml", "expect_gpu = 2\n",
       "unknown option 'expect-gpu' (did you mean 'expect-gpus'?)"},
      {"typo.toml", "requre = [\"driver>=550\"]\n",
       "unknown option 'requre' (did you mean 'require'?)"},
      {"min.toml", "[min]\nh2d_gbps = \"fast\"\n", "'fast' is not a number"},
      // TOML 1.0 (toml++): a bare word is not a string, and the message says where.
      {"bare.toml", "expect-gpus = 2\nfail-on = warn\n", "is not valid TOML: line 2, column"},
      {"twice.toml", "fail-on = \"warn\"\nfail-on = \"fail\"\n", "is not valid TOML: line 2"},
      {"date.toml", "fail-on = 2026-11-26\n", "\"fail-on\" must be a string, finite number"},
      {"inf.toml", "[min]\nh2d_gbps = inf\n", "\"min.h2d_gbps\" must be a string, finite"},
      {"section.toml", "[gates]\nexpect-gpus = 2\n", "unknown option 'gates'"},
      {"deep.toml", "min = {h2d_gbps = {x = 1}}\n", "\"min.h2d_gbps\" must be"},
      // fuzz_config: toml++ 3.3 asserted (abort; undefined behaviour without NDEBUG) on "[#".
      {"hash.toml", "expect-gpus = 2\n[# comment\nonly = 'gpu.p2p'\n", "is not valid TOML"},
      // fuzz_config (2026-11-28): toml++ 3.3's whitespace classifier reaches
      // __builtin_unreachable on U+03CF after a bare key, after a line-ending backslash and after
      // a malformed number: toml++ now reads ASCII only.
      {"past_ascii.toml", "expectpu.p\xcf\x8f'\n",
       "line 1: a character past ASCII outside a string or a comment"},
      {"literal.toml", "expect-gpus = 2\nfail-on = 'w\xcf\x8f'\n",
       "line 2: a character past ASCII in a 'literal' string"},
      {"not_utf8.toml", "fail-on = \"w\xff\"\n", "is not a text file"},
      {"malformed.toml", "a = 600.[\"e\xd0\x92p_I/cEn\xd2\x92'ty5\n#$c\n", "is not valid TOML"},
      {"escaped.toml", "fail-on = \"w\xcf\x8f\"\n", "w\xcf\x8f"},
  };
  for (const auto& c : cases) {
    const Parsed p = parse({"--config", config_file(c.name, c.text)});
    EXPECT_NE(p.error.find(c.says), std::string::npos) << c.name << " -> '" << p.error << "'";
  }
  EXPECT_NE(parse({"--config", "/nonexistent/gpucheck.toml"}).error.find("gpucheck.toml"),
            std::string::npos);
}

// Its twin: text past ASCII in one-line strings and comments is TOML and read as before.
TEST(GateOptions, TextPastAsciiInStringsAndCommentsIsRead) {
  const Parsed p = parse({"--config", config_file("utf8.toml", "# r\xc3\xa9sum\xc3\xa9 \xcf\x8f\n"
                                                               "fail-on = 'warn' # \xc3\xbc\n"
                                                               "expect-gpus = 2\n")});
  EXPECT_EQ(p.error, "");
}

} // namespace
} // namespace gpucheck::cli
