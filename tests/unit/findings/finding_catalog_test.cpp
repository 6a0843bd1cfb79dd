// The catalogue: unique sorted codes, their spelling, templates that format with exactly their
// arguments, a description of every argument, and documentation for every code.
#include "findings/catalog.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <type_traits>

#include "findings/tables.hpp"

namespace gpucheck {
namespace {

/// Highest positional index used in a template, or -1 when it has no placeholder. Fails the test
/// on an automatic "{}" placeholder: every argument must be indexed so message and remedy can
/// share them.
int highest_index(std::string_view text, std::string_view code) {
  int highest = -1;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '{') {
      if (i + 1 < text.size() && text[i + 1] == '{') {
        ++i;
        continue;
      }
      std::size_t j = i + 1;
      int value = 0;
      bool digits = false;
      while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j])) != 0) {
        value = value * 10 + (text[j] - '0');
        digits = true;
        ++j;
      }
      EXPECT_TRUE(digits) << code << ": placeholder without an index in: " << text;
      highest = std::max(highest, value);
    }
  }
  return highest;
}

/// The positional indices a template uses: {N} and {N:spec}; "{{" and "}}" are literal braces.
std::set<std::size_t> used_indices(std::string_view text) {
  std::set<std::size_t> used;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '{') {
      continue;
    }
    if (i + 1 < text.size() && text[i + 1] == '{') {
      ++i;
      continue;
    }
    std::size_t value = 0;
    std::size_t j = i + 1;
    while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j])) != 0) {
      value = value * 10 + static_cast<std::size_t>(text[j] - '0');
      ++j;
    }
    if (j > i + 1 && j < text.size() && (text[j] == '}' || text[j] == ':')) {
      used.insert(value);
    }
    i = j - 1;
  }
  return used;
}

Finding format_with(const FindingSpec& spec, int count) {
  const std::string a = "A0", b = "A1", c = "A2", d = "A3", e = "A4", f = "A5", g = "A6", h = "A7",
                    i = "A8", j = "A9";
  const FindingCode code{spec.code};
  switch (count) {
  case 0:
    return make_finding(code, std::nullopt);
  case 1:
    return make_finding(code, std::nullopt, a);
  case 2:
    return make_finding(code, std::nullopt, a, b);
  case 3:
    return make_finding(code, std::nullopt, a, b, c);
  case 4:
    return make_finding(code, std::nullopt, a, b, c, d);
  case 5:
    return make_finding(code, std::nullopt, a, b, c, d, e);
  case 6:
    return make_finding(code, std::nullopt, a, b, c, d, e, f);
  case 7:
    return make_finding(code, std::nullopt, a, b, c, d, e, f, g);
  case 8:
    return make_finding(code, std::nullopt, a, b, c, d, e, f, g, h);
  case 9:
    return make_finding(code, std::nullopt, a, b, c, d, e, f, g, h, i);
  case 10:
    return make_finding(code, std::nullopt, a, b, c, d, e, f, g, h, i, j);
  default:
    throw std::logic_error("more than 10 arguments: extend format_with");
  }
}

TEST(FindingCatalog, CodesAreUniqueAndSorted) {
  const std::span<const FindingSpec> all = finding_catalog();
  ASSERT_FALSE(all.empty());
  std::set<std::string_view> seen;
  for (std::size_t i = 0; i < all.size(); ++i) {
    EXPECT_TRUE(seen.insert(all[i].code).second) << "duplicate code " << all[i].code;
    if (i > 0) {
      EXPECT_LT(all[i - 1].code, all[i].code);
    }
  }
  // The system table is kept sorted in its source too, so a reader finds a code quickly.
  const std::span<const FindingSpec> system = findings_system();
  EXPECT_TRUE(
      std::is_sorted(system.begin(), system.end(),
                     [](const FindingSpec& a, const FindingSpec& b) { return a.code < b.code; }));
}

TEST(FindingCatalog, CodesAreAreaDotProblemInSnakeCase) {
  const std::regex form("^[a-z][a-z0-9]*\\.[a-z][a-z0-9]*(_[a-z0-9]+)*$");
  for (const FindingSpec& spec : finding_catalog()) {
    EXPECT_TRUE(std::regex_match(std::string(spec.code), form)) << spec.code;
    EXPECT_FALSE(spec.title.empty()) << spec.code;
    EXPECT_FALSE(spec.explanation.empty()) << spec.code;
    EXPECT_FALSE(spec.message.empty()) << spec.code;
    EXPECT_FALSE(spec.remedy.empty()) << spec.code;
  }
}

TEST(FindingCatalog, EveryTemplateFormatsWithExactlyItsArguments) {
  for (const FindingSpec& spec : finding_catalog()) {
    SCOPED_TRACE(std::string(spec.code));
    const int count =
        std::max(highest_index(spec.message, spec.code), highest_index(spec.remedy, spec.code)) + 1;
    const Finding finding = format_with(spec, count);
    EXPECT_EQ(finding.code, spec.code);
    EXPECT_EQ(finding.severity, spec.severity);
    for (int i = 0; i < count; ++i) {
      const std::string arg = fmt::format("A{}", i);
      EXPECT_TRUE(finding.message.find(arg) != std::string::npos ||
                  finding.remedy.find(arg) != std::string::npos)
          << "argument " << i << " is used by neither template";
    }
    if (count > 0) {
      EXPECT_THROW(format_with(spec, count - 1), std::logic_error);
    }
  }
}

TEST(FindingCatalog, UsedIndicesReadsPlainAndFormattedPlaceholders) {
  EXPECT_EQ(used_indices("no placeholder"), std::set<std::size_t>{});
  EXPECT_EQ(used_indices("{0} and {2:.1f}, {{1}} is literal, {10}"),
            (std::set<std::size_t>{0, 2, 10}));
  EXPECT_EQ(used_indices("{{{3}}}"), std::set<std::size_t>{3});
}

// `gpucheck explain CODE` says what each {N} stands for: every index a template uses has a
// description, and no description names an index that neither template uses.
TEST(FindingCatalog, EveryPlaceholderIsDescribed) {
  for (const FindingSpec& spec : finding_catalog()) {
    SCOPED_TRACE(std::string(spec.code));
    std::set<std::size_t> used = used_indices(spec.message);
    used.merge(used_indices(spec.remedy));
    for (std::size_t index : used) {
      ASSERT_LT(index, spec.placeholders.size()) << "more arguments than k_max_placeholders";
      EXPECT_FALSE(spec.placeholders[index].empty())
          << "{" << index << "} has no description in the spec's placeholders";
    }
    for (std::size_t index = 0; index < spec.placeholders.size(); ++index) {
      if (!spec.placeholders[index].empty()) {
        EXPECT_TRUE(used.contains(index))
            << "placeholders describes {" << index << "} (" << spec.placeholders[index]
            << "), which neither template uses";
      }
    }
  }
}

TEST(FindingCatalog, UnknownCodeThrows) {
  EXPECT_THROW(make_finding(FindingCode{"no.such_code"}, std::nullopt), std::logic_error);
  EXPECT_EQ(find_finding_spec("no.such_code"), nullptr);
  ASSERT_NE(find_finding_spec("driver.missing"), nullptr);
}

/// Every constant of src/findings/codes.hpp names an entry of the tables, its name is its code
/// ("a.b_c" is k_a_b_c), and every entry has its constant (the tables are written with them).
TEST(FindingCatalog, EveryCodeConstantHasItsEntryAndEveryEntryItsConstant) {
  std::ifstream file(std::filesystem::path(GPUCHECK_SOURCE_DIR) / "src" / "findings" / "codes.hpp");
  ASSERT_TRUE(file) << "src/findings/codes.hpp";
  const std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  const std::regex constant(R"re(inline constexpr FindingCode (k_\w+)\s*\{\s*"([^"]*)"\s*\};)re");
  std::set<std::string> constants;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), constant);
       it != std::sregex_iterator(); ++it) {
    const std::string name = (*it)[1].str();
    const std::string code = (*it)[2].str();
    std::string expected_name = "k_" + code;
    std::replace(expected_name.begin(), expected_name.end(), '.', '_');
    EXPECT_EQ(name, expected_name) << code;
    EXPECT_NE(find_finding_spec(code), nullptr) << name << " (\"" << code << "\") has no entry";
    EXPECT_TRUE(constants.insert(code).second) << code << " twice";
  }
  // A check that spells its own findings (CheckDef::findings: a file of src/checks/, a folder
  // of src/gpu_checks/) names its constants for the problem alone (k_shm_small, k_corrupt).
  const std::regex own(R"re(constexpr FindingCode (k_\w+)\s*\{\s*"([^"]*)"\s*\};)re");
  for (const char* folder : {"checks", "gpu_checks"}) {
    for (const auto& entry : std::filesystem::recursive_directory_iterator(
             std::filesystem::path(GPUCHECK_SOURCE_DIR) / "src" / folder)) {
      const auto ext = entry.path().extension();
      if ((ext != ".hpp" && ext != ".cpp") ||
          entry.path().filename().string().ends_with("_test.cpp")) {
        continue;
      }
      std::ifstream source(entry.path());
      const std::string body((std::istreambuf_iterator<char>(source)),
                             std::istreambuf_iterator<char>());
      for (auto it = std::sregex_iterator(body.begin(), body.end(), own);
           it != std::sregex_iterator(); ++it) {
        const std::string code = (*it)[2].str();
        EXPECT_NE(find_finding_spec(code), nullptr) << entry.path() << ": " << code;
        EXPECT_TRUE(constants.insert(code).second) << code << " twice";
      }
    }
  }
  for (const FindingSpec& spec : finding_catalog()) {
    EXPECT_EQ(constants.count(std::string(spec.code)), 1U) << spec.code << " has no constant";
  }
  EXPECT_EQ(constants.size(), finding_catalog().size());
  // The type is what keeps a misspelt code from compiling: the constants convert to text, and
  // text never converts to a code without FindingCode{...} written out.
  static_assert(!std::is_convertible_v<std::string_view, FindingCode>);
  static_assert(!std::is_convertible_v<const char*, FindingCode>);
  EXPECT_EQ(codes::k_driver_missing, std::string("driver.missing"));
}

/// docs/findings.md's text; empty when it cannot be read.
std::string findings_doc() {
  std::ifstream file(std::filesystem::path(GPUCHECK_SOURCE_DIR) / "docs" / "findings.md");
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

TEST(FindingCatalog, EveryCodeIsDocumented) {
  const std::string doc = findings_doc();
  ASSERT_FALSE(doc.empty()) << "docs/findings.md is missing";
  for (const FindingSpec& spec : finding_catalog()) {
    EXPECT_NE(doc.find(fmt::format("`{}`", spec.code)), std::string::npos)
        << spec.code << " is not listed in docs/findings.md";
  }
}

/// The Arguments cell of docs/findings.md for a spec: "{0} what; {1} what", or "(none)".
std::string arguments_cell(const FindingSpec& spec) {
  std::string text;
  for (std::size_t i = 0; i < spec.placeholders.size(); ++i) {
    if (!spec.placeholders[i].empty()) {
      text += fmt::format("{}{{{}}} {}", text.empty() ? "" : "; ", i, spec.placeholders[i]);
    }
  }
  return text.empty() ? "(none)" : text;
}

// The doc's Arguments column is the catalogue's placeholders, word for word.
TEST(FindingCatalog, DocumentedArgumentsMatchTheCatalogue) {
  const std::string doc = findings_doc();
  ASSERT_FALSE(doc.empty()) << "docs/findings.md is missing";
  for (const FindingSpec& spec : finding_catalog()) {
    const std::size_t row = doc.find(fmt::format("\n| `{}` |", spec.code));
    if (row == std::string::npos) {
      ADD_FAILURE() << spec.code << " has no table row in docs/findings.md";
      continue;
    }
    const std::string line = doc.substr(row + 1, doc.find('\n', row + 1) - row - 1);
    EXPECT_NE(line.find(fmt::format("| {} |", arguments_cell(spec))), std::string::npos)
        << spec.code << ": its Arguments in docs/findings.md should read: " << arguments_cell(spec);
  }
}

/// The cell after the Severity cell of a docs/findings.md row: the Drain column.
std::string drain_cell(const std::string& row) {
  // "| `code` | severity | drain | ..."
  std::size_t start = 0;
  for (int bar = 0; bar < 2; ++bar) {
    start = row.find(" | ", start);
    if (start == std::string::npos) {
      return "";
    }
    start += 3;
  }
  return row.substr(start, row.find(" |", start) - start);
}

// The doc's Drain column is the catalogue's FindingSpec::drain (what deploy/slurm drains on).
TEST(FindingCatalog, DocumentedDrainMatchesTheCatalogue) {
  const std::string doc = findings_doc();
  ASSERT_FALSE(doc.empty()) << "docs/findings.md is missing";
  for (const FindingSpec& spec : finding_catalog()) {
    const std::size_t row = doc.find(fmt::format("\n| `{}` |", spec.code));
    if (row == std::string::npos) {
      continue; // DocumentedArgumentsMatchTheCatalogue says so
    }
    const std::string line = doc.substr(row + 1, doc.find('\n', row + 1) - row - 1);
    EXPECT_EQ(drain_cell(line), to_string(spec.drain))
        << spec.code << ": its Drain cell in docs/findings.md should read "
        << to_string(spec.drain);
  }
}

// Never cry wolf: what a tenant, a container, WSL2 or a version choice causes never drains a
// node, nor does anything gpucheck only notes (info) or could not find out (error).
TEST(FindingCatalog, OnlyBrokenNodeFindingsDrain) {
  for (const FindingSpec& spec : finding_catalog()) {
    if (spec.drain == Drain::no) {
      continue;
    }
    EXPECT_TRUE(spec.severity == Severity::warn || spec.severity == Severity::fail) << spec.code;
    for (std::string_view area : {"compat.", "fw.", "lib.", "cudnn.", "probe.", "topology."}) {
      EXPECT_FALSE(spec.code.starts_with(area)) << spec.code << " is about versions or libraries";
    }
    EXPECT_FALSE(spec.code.starts_with("env.wsl")) << spec.code;
  }
  for (std::string_view code : {"gpu.contention",
                                "gpu.busy_not_tested",
                                "gpu.memory_held_by_others",
                                "gpu.memory_in_use",
                                "gpu.other_run",
                                "gpu.compute_exclusive",
                                "cuda.devices_unavailable",
                                "nvml.no_permission",
                                "nvml.unknown_error",
                                "env.device_node_no_access",
                                "env.nvidia_visible_devices_none",
                                "env.driver_capabilities_no_compute",
                                "env.visible_devices_hides_all",
                                "cuda.stub_library",
                                "gpu.bandwidth_low",
                                "gpu.burn_slow",
                                "gpu.persistence_off",
                                "driver.missing",
                                "gate.warnings_present",
                                "gate.requirement_not_met"}) {
    const FindingSpec* spec = find_finding_spec(code);
    ASSERT_NE(spec, nullptr) << code;
    EXPECT_EQ(spec->drain, Drain::no) << code << " is not a broken node";
  }
  for (std::string_view code : {"gpu.ecc_uncorrected", "gpu.compute_mismatch", "gpu.memtest_errors",
                                "log.xid_fatal", "driver.module_not_loaded", "gpu.lost"}) {
    const FindingSpec* spec = find_finding_spec(code);
    ASSERT_NE(spec, nullptr) << code;
    EXPECT_EQ(spec->drain, Drain::yes) << code << " is a broken node";
  }
}

} // namespace
} // namespace gpucheck
