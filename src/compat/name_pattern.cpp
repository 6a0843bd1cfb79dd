#include "compat/name_pattern.hpp"

#include <fmt/format.h>

#include <cctype>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace gpucheck::compat {

namespace {

constexpr int k_unbounded = -1;
constexpr int k_max_repeat = 32;

bool is_word(unsigned char c) {
  return std::isalnum(c) != 0 || c == '_';
}

/// A parsed pattern: nodes in one vector, children by index.
struct Node {
  enum class Kind { set, empty, concat, alternation, repeat, assertion };
  Kind kind = Kind::empty;
  uint32_t set = 0;
  std::vector<size_t> children;
  int min = 0;
  int max = 0;
  NamePattern::Op assertion = NamePattern::Op::assert_begin;
};

} // namespace

/// Parses a pattern into nodes (bounded nesting) and emits the NFA program.
class PatternCompiler {
public:
  PatternCompiler(std::string_view pattern, bool ignore_case)
      : m_text(pattern), m_ignore_case(ignore_case) {}

  Expected<NamePattern> compile() {
    if (m_text.size() > NamePattern::k_max_pattern_chars) {
      return Error{
          fmt::format("pattern is longer than {} characters", NamePattern::k_max_pattern_chars)};
    }
    const std::optional<size_t> root = alternation(0);
    if (!root) {
      return Error{m_error};
    }
    if (m_at != m_text.size()) {
      return Error{fmt::format("unexpected '{}' at offset {}", m_text[m_at], m_at)};
    }
    if (!emit(*root)) {
      return Error{m_error};
    }
    push({NamePattern::Op::match});
    if (!m_error.empty()) {
      return Error{m_error};
    }
    return std::move(m_pattern);
  }

private:
  using Set = std::bitset<256>;

  bool fail(std::string message) {
    if (m_error.empty()) {
      m_error = std::move(message);
    }
    return false;
  }

  [[nodiscard]] bool at_end() const { return m_at >= m_text.size(); }
  [[nodiscard]] char peek() const { return m_text[m_at]; }

  size_t add(Node node) {
    m_nodes.push_back(std::move(node));
    return m_nodes.size() - 1;
  }

  uint32_t add_set(Set set) {
    if (m_ignore_case) {
      for (int c = 'a'; c <= 'z'; ++c) {
        const auto upper = static_cast<size_t>(std::toupper(c));
        const auto lower = static_cast<size_t>(c);
        if (set[lower] || set[upper]) {
          set.set(lower);
          set.set(upper);
        }
      }
    }
    m_pattern.m_sets.push_back(set);
    return static_cast<uint32_t>(m_pattern.m_sets.size() - 1);
  }

  static Set class_of(char letter) {
    Set set;
    for (int c = 0; c < 256; ++c) {
      const auto u = static_cast<unsigned char>(c);
      const bool in = (letter == 'd' || letter == 'D')   ? std::isdigit(u) != 0
                      : (letter == 'w' || letter == 'W') ? is_word(u)
                                                         : std::isspace(u) != 0;
      set[static_cast<size_t>(c)] = in;
    }
    return std::isupper(static_cast<unsigned char>(letter)) != 0 ? ~set : set;
  }

  std::optional<size_t> alternation(size_t depth) {
    if (depth > NamePattern::k_max_depth) {
      fail(fmt::format("groups nest deeper than {}", NamePattern::k_max_depth));
      return std::nullopt;
    }
    Node node{Node::Kind::alternation};
    while (true) {
      const std::optional<size_t> branch = concatenation(depth);
      if (!branch) {
        return std::nullopt;
      }
      node.children.push_back(*branch);
      if (at_end() || peek() != '|') {
        break;
      }
      ++m_at;
    }
    return node.children.size() == 1 ? node.children[0] : add(std::move(node));
  }

  std::optional<size_t> concatenation(size_t depth) {
    Node node{Node::Kind::concat};
    while (!at_end() && peek() != '|' && peek() != ')') {
      const std::optional<size_t> item = repetition(depth);
      if (!item) {
        return std::nullopt;
      }
      node.children.push_back(*item);
    }
    return add(std::move(node));
  }

  std::optional<int> number() {
    int value = 0;
    bool any = false;
    while (!at_end() && std::isdigit(static_cast<unsigned char>(peek())) != 0) {
      value = value * 10 + (peek() - '0');
      any = true;
      ++m_at;
      if (value > k_max_repeat) {
        fail(fmt::format("a repeat count above {}", k_max_repeat));
        return std::nullopt;
      }
    }
    if (!any) {
      fail(fmt::format("expected a number at offset {}", m_at));
      return std::nullopt;
    }
    return value;
  }

  std::optional<size_t> repetition(size_t depth) {
    std::optional<size_t> item = atom(depth);
    while (item && !at_end()) {
      int min = 0;
      int max = k_unbounded;
      const char c = peek();
      if (c == '*') {
        ++m_at;
      } else if (c == '+') {
        min = 1;
        ++m_at;
      } else if (c == '?') {
        max = 1;
        ++m_at;
      } else if (c == '{') {
        ++m_at;
        const std::optional<int> low = number();
        if (!low) {
          return std::nullopt;
        }
        min = *low;
        max = *low;
        if (!at_end() && peek() == ',') {
          ++m_at;
          max = k_unbounded;
          if (!at_end() && peek() != '}') {
            const std::optional<int> high = number();
            if (!high) {
              return std::nullopt;
            }
            max = *high;
          }
        }
        if (at_end() || peek() != '}' || (max != k_unbounded && max < min)) {
          fail(fmt::format("a bad {{m,n}} repeat before offset {}", m_at));
          return std::nullopt;
        }
        ++m_at;
      } else {
        break;
      }
      if (!at_end() && peek() == '?') {
        ++m_at; // lazy: the same yes/no answer
      }
      Node node{Node::Kind::repeat};
      node.children = {*item};
      node.min = min;
      node.max = max;
      item = add(std::move(node));
    }
    return item;
  }

  std::optional<size_t> atom(size_t depth) {
    const char c = peek();
    ++m_at;
    switch (c) {
    case '(': {
      if (!at_end() && peek() == '?') {
        if (m_at + 1 < m_text.size() && m_text[m_at + 1] == ':') {
          m_at += 2;
        } else {
          fail("look-arounds are not supported");
          return std::nullopt;
        }
      }
      const std::optional<size_t> inner = alternation(depth + 1);
      if (!inner) {
        return std::nullopt;
      }
      if (at_end() || peek() != ')') {
        fail("a '(' without its ')'");
        return std::nullopt;
      }
      ++m_at;
      return inner;
    }
    case '[':
      return bracket();
    case '.': {
      Set set;
      set.set();
      set.reset('\n');
      set.reset('\r');
      return add(Node{Node::Kind::set, add_set(set)});
    }
    case '^':
      return assertion(NamePattern::Op::assert_begin);
    case '$':
      return assertion(NamePattern::Op::assert_end);
    case '\\':
      return escape();
    case '*':
    case '+':
    case '?':
    case '{':
      fail(fmt::format("nothing to repeat before '{}' at offset {}", c, m_at - 1));
      return std::nullopt;
    default: {
      Set set;
      set.set(static_cast<unsigned char>(c));
      return add(Node{Node::Kind::set, add_set(set)});
    }
    }
  }

  size_t assertion(NamePattern::Op op) {
    Node node{Node::Kind::assertion};
    node.assertion = op;
    return add(std::move(node));
  }

  std::optional<size_t> escape() {
    if (at_end()) {
      fail("a '\\' at the end");
      return std::nullopt;
    }
    const char c = peek();
    ++m_at;
    if (c == 'b') {
      return assertion(NamePattern::Op::word_boundary);
    }
    if (c == 'B') {
      return assertion(NamePattern::Op::not_word_boundary);
    }
    const std::optional<Set> set = escaped_set(c);
    if (!set) {
      return std::nullopt;
    }
    return add(Node{Node::Kind::set, add_set(*set)});
  }

  /// \d \w \s (and negations), or a punctuation character taken literally.
  std::optional<Set> escaped_set(char c) {
    if (std::string_view("dDwWsS").find(c) != std::string_view::npos) {
      return class_of(c);
    }
    if (std::ispunct(static_cast<unsigned char>(c)) != 0 || c == ' ') {
      Set set;
      set.set(static_cast<unsigned char>(c));
      return set;
    }
    fail(fmt::format("the escape '\\{}' is not supported", c));
    return std::nullopt;
  }

  std::optional<size_t> bracket() {
    Set set;
    bool negate = false;
    if (!at_end() && peek() == '^') {
      negate = true;
      ++m_at;
    }
    while (!at_end() && peek() != ']') {
      char low = peek();
      ++m_at;
      if (low == '\\') {
        if (at_end()) {
          break;
        }
        const std::optional<Set> escaped = escaped_set(peek());
        ++m_at;
        if (!escaped) {
          return std::nullopt;
        }
        if (escaped->count() != 1) {
          set |= *escaped;
          continue;
        }
        for (size_t i = 0; i < 256; ++i) {
          if ((*escaped)[i]) {
            low = static_cast<char>(i);
          }
        }
      }
      char high = low;
      if (m_at + 1 < m_text.size() && peek() == '-' && m_text[m_at + 1] != ']') {
        high = m_text[m_at + 1];
        m_at += 2;
        if (high == '\\') {
          fail("an escape as the end of a range is not supported");
          return std::nullopt;
        }
      }
      const auto from = static_cast<unsigned char>(low);
      const auto to = static_cast<unsigned char>(high);
      if (to < from) {
        fail(fmt::format("a range '{}-{}' that runs backwards", low, high));
        return std::nullopt;
      }
      for (unsigned i = from; i <= to; ++i) {
        set.set(i);
      }
    }
    if (at_end()) {
      fail("a '[' without its ']'");
      return std::nullopt;
    }
    ++m_at;
    if (negate) {
      set = ~set;
    }
    return add(Node{Node::Kind::set, add_set(set)});
  }

  using Instruction = NamePattern::Instruction;
  using Op = NamePattern::Op;

  uint32_t pc() const { return static_cast<uint32_t>(m_pattern.m_program.size()); }

  bool push(Instruction instruction) {
    if (m_pattern.m_program.size() >= NamePattern::k_max_instructions) {
      return fail(
          fmt::format("the pattern needs more than {} steps", NamePattern::k_max_instructions));
    }
    m_pattern.m_program.push_back(instruction);
    return true;
  }

  bool emit(size_t index) {
    const Node& node = m_nodes[index];
    switch (node.kind) {
    case Node::Kind::set:
      return push({Op::byte_class, 0, 0, node.set});
    case Node::Kind::empty:
      return true;
    case Node::Kind::assertion:
      return push({node.assertion});
    case Node::Kind::concat:
      for (size_t child : node.children) {
        if (!emit(child)) {
          return false;
        }
      }
      return true;
    case Node::Kind::alternation:
      return emit_alternation(node);
    case Node::Kind::repeat:
      return emit_repeat(node);
    }
    return false;
  }

  bool emit_alternation(const Node& node) {
    std::vector<uint32_t> jumps;
    for (size_t i = 0; i + 1 < node.children.size(); ++i) {
      const uint32_t split = pc();
      if (!push({Op::split})) {
        return false;
      }
      m_pattern.m_program[split].x = pc();
      if (!emit(node.children[i])) {
        return false;
      }
      jumps.push_back(pc());
      if (!push({Op::jump})) {
        return false;
      }
      m_pattern.m_program[split].y = pc();
    }
    if (!emit(node.children.back())) {
      return false;
    }
    for (uint32_t jump : jumps) {
      m_pattern.m_program[jump].x = pc();
    }
    return true;
  }

  bool emit_repeat(const Node& node) {
    const size_t child = node.children[0];
    for (int i = 0; i < node.min; ++i) {
      if (!emit(child)) {
        return false;
      }
    }
    if (node.max == k_unbounded) {
      // L1: split L2, L3; L2: child; jump L1; L3:
      const uint32_t split = pc();
      if (!push({Op::split})) {
        return false;
      }
      m_pattern.m_program[split].x = pc();
      if (!emit(child) || !push({Op::jump, split})) {
        return false;
      }
      m_pattern.m_program[split].y = pc();
      return true;
    }
    for (int i = node.min; i < node.max; ++i) {
      const uint32_t split = pc();
      if (!push({Op::split})) {
        return false;
      }
      m_pattern.m_program[split].x = pc();
      if (!emit(child)) {
        return false;
      }
      m_pattern.m_program[split].y = pc();
    }
    return true;
  }

  std::string_view m_text;
  bool m_ignore_case;
  size_t m_at = 0;
  std::string m_error;
  std::vector<Node> m_nodes;
  NamePattern m_pattern;
};

Expected<NamePattern> NamePattern::compile(std::string_view pattern, bool ignore_case) {
  return PatternCompiler(pattern, ignore_case).compile();
}

namespace {
/// The Pike VM's closure over one compiled program and text: add() follows the steps reachable
/// from one step at a text position without reading a byte; byte_class steps join the list, a
/// match step sets `matched`. `mark` stamps the steps already added at a position, so a closure
/// visits each step once (also through empty loops).
class Closure {
public:
  Closure(std::span<const NamePattern::Instruction> program, std::string_view text)
      : m_program(program), m_text(text), m_mark(program.size(), 0) {}

  bool matched = false;

  void add(std::vector<uint32_t>& list, uint32_t start, size_t pos) {
    const size_t stamp = pos + 1;
    const bool boundary = (pos > 0 && word_at(pos - 1)) != word_at(pos);
    m_stack.push_back(start);
    while (!m_stack.empty()) {
      const uint32_t at = m_stack.back();
      m_stack.pop_back();
      if (m_mark[at] == stamp) {
        continue;
      }
      m_mark[at] = stamp;
      follow(list, at, pos, boundary);
    }
  }

private:
  using Op = NamePattern::Op;

  bool word_at(size_t pos) const {
    return pos < m_text.size() && is_word(static_cast<unsigned char>(m_text[pos]));
  }

  /// One step of the closure: what it adds, or which steps it leads to at `pos`.
  void follow(std::vector<uint32_t>& list, uint32_t at, size_t pos, bool boundary) {
    const NamePattern::Instruction& step = m_program[at];
    switch (step.op) {
    case Op::byte_class:
      list.push_back(at);
      break;
    case Op::match:
      matched = true;
      break;
    case Op::jump:
      m_stack.push_back(step.x);
      break;
    case Op::split:
      m_stack.push_back(step.y);
      m_stack.push_back(step.x);
      break;
    case Op::assert_begin:
    case Op::assert_end:
    case Op::word_boundary:
    case Op::not_word_boundary:
      if (holds(step.op, pos, boundary)) {
        m_stack.push_back(at + 1);
      }
      break;
    }
  }

  /// Whether an assertion holds at `pos`.
  bool holds(Op op, size_t pos, bool boundary) const {
    switch (op) {
    case Op::assert_begin:
      return pos == 0;
    case Op::assert_end:
      return pos == m_text.size();
    case Op::word_boundary:
      return boundary;
    case Op::not_word_boundary:
      return !boundary;
    default:
      return false;
    }
  }

  std::span<const NamePattern::Instruction> m_program;
  std::string_view m_text;
  std::vector<size_t> m_mark;
  std::vector<uint32_t> m_stack;
};
} // namespace

bool NamePattern::search(std::string_view full_text) const {
  const std::string_view text = full_text.substr(0, std::min(full_text.size(), k_max_text_bytes));
  // Each list holds the byte_class steps alive before text[pos].
  std::vector<uint32_t> current;
  std::vector<uint32_t> next;
  Closure closure(m_program, text);
  for (size_t pos = 0;; ++pos) {
    closure.add(current, 0, pos); // a match may start here (search, not full match)
    if (closure.matched) {
      return true;
    }
    if (pos == text.size()) {
      return false;
    }
    next.clear();
    const auto byte = static_cast<unsigned char>(text[pos]);
    for (uint32_t at : current) {
      if (m_sets[m_program[at].set][byte]) {
        closure.add(next, at + 1, pos + 1);
      }
    }
    if (closure.matched) {
      return true;
    }
    current.swap(next);
  }
}

} // namespace gpucheck::compat
