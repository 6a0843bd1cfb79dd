#pragma once
/// A bounded, linear-time regular expression for text that comes from outside (docs/security.md,
/// "Input limits"): the matrix's GPU name patterns (a --matrix file may carry any pattern) and the
/// schema's string patterns. std::regex backtracks recursively: a 300 KB name overflowed the
/// stack and `(a|aa)*c` took 12 s on 30 characters. This one compiles to an NFA and simulates it
/// (Thompson's construction), so matching costs O(text length x pattern size) and no recursion.
///
/// The syntax is the ECMAScript subset the data uses: literals, `.`, `[...]` classes with ranges
/// and `^` negation, `(...)` and `(?:...)` groups, `|`, `*`, `+`, `?` (a lazy `?` after them is
/// accepted; for a yes/no search it changes nothing), `{m}`, `{m,}`, `{m,n}` (at most 32),
/// `^`, `$`, `\b`, `\B`, `\d`, `\D`, `\w`, `\W`, `\s`, `\S` and `\` before punctuation.
/// Back-references and look-arounds are refused.

#include <bitset>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gpucheck/expected.hpp"

namespace gpucheck::compat {

class NamePattern {
public:
  /// The longest pattern accepted, its deepest nesting of groups, and the largest program.
  static constexpr size_t k_max_pattern_chars = 1024;
  static constexpr size_t k_max_depth = 32;
  static constexpr size_t k_max_instructions = 8192;
  /// Text beyond this many bytes is not looked at (a GPU name is under 100).
  static constexpr size_t k_max_text_bytes = 4096;

  /// Compile `pattern`; an error names what is not supported or too large. `ignore_case`: ASCII
  /// letters match either case.
  static Expected<NamePattern> compile(std::string_view pattern, bool ignore_case);

  /// Whether the pattern matches anywhere in `text` (like std::regex_search), looking at the
  /// first k_max_text_bytes bytes only.
  [[nodiscard]] bool search(std::string_view text) const;

  /// The instruction set of the compiled NFA (public for the compiler in the .cpp).
  enum class Op : uint8_t {
    byte_class,
    split,
    jump,
    assert_begin,
    assert_end,
    word_boundary,
    not_word_boundary,
    match
  };
  struct Instruction {
    Op op = Op::match;
    uint32_t x = 0;   ///< jump target, or split's first branch
    uint32_t y = 0;   ///< split's second branch
    uint32_t set = 0; ///< byte_class: index into m_sets
  };

private:
  std::vector<Instruction> m_program;
  std::vector<std::bitset<256>> m_sets;

  friend class PatternCompiler;
};

} // namespace gpucheck::compat
