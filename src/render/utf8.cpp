#include "render/utf8.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace gpucheck::render {

namespace {

/// Length of the well-formed UTF-8 sequence at text[at], or 0 when the byte there starts none
/// (the ranges of Unicode's table 3-7).
size_t sequence_length(std::string_view text, size_t at) {
  const auto byte = [&](size_t i) -> unsigned {
    return at + i < text.size() ? static_cast<unsigned char>(text[at + i]) : 0x100U;
  };
  const auto in = [](unsigned b, unsigned low, unsigned high) { return b >= low && b <= high; };
  const unsigned b0 = byte(0);
  if (b0 < 0x80) {
    return 1;
  }
  if (in(b0, 0xC2, 0xDF)) {
    return in(byte(1), 0x80, 0xBF) ? 2 : 0;
  }
  if (in(b0, 0xE0, 0xEF)) {
    const unsigned low = b0 == 0xE0 ? 0xA0 : 0x80;
    const unsigned high = b0 == 0xED ? 0x9F : 0xBF; // no surrogates
    return in(byte(1), low, high) && in(byte(2), 0x80, 0xBF) ? 3 : 0;
  }
  if (in(b0, 0xF0, 0xF4)) {
    const unsigned low = b0 == 0xF0 ? 0x90 : 0x80;
    const unsigned high = b0 == 0xF4 ? 0x8F : 0xBF; // nothing above U+10FFFF
    return in(byte(1), low, high) && in(byte(2), 0x80, 0xBF) && in(byte(3), 0x80, 0xBF) ? 4 : 0;
  }
  return 0;
}

} // namespace

bool is_valid_utf8(std::string_view text) {
  for (size_t at = 0; at < text.size();) {
    const size_t length = sequence_length(text, at);
    if (length == 0) {
      return false;
    }
    at += length;
  }
  return true;
}

std::string visible_utf8(std::string_view text) {
  if (is_valid_utf8(text)) {
    return std::string(text);
  }
  std::string out;
  out.reserve(text.size() + 16);
  for (size_t at = 0; at < text.size();) {
    const size_t length = sequence_length(text, at);
    if (length == 0) {
      out += fmt::format("\\x{:02x}", static_cast<unsigned char>(text[at]));
      ++at;
      continue;
    }
    out.append(text.substr(at, length));
    at += length;
  }
  return out;
}

void make_valid_utf8(nlohmann::json& value) {
  // An explicit stack: a deep document must not overflow the call stack here either.
  std::vector<nlohmann::json*> pending{&value};
  while (!pending.empty()) {
    nlohmann::json* node = pending.back();
    pending.pop_back();
    if (node->is_string()) {
      const std::string& text = node->get_ref<const std::string&>();
      if (!is_valid_utf8(text)) {
        *node = visible_utf8(text);
      }
    } else if (node->is_array()) {
      for (nlohmann::json& element : *node) {
        pending.push_back(&element);
      }
    } else if (node->is_object()) {
      bool bad_key = false;
      for (auto it = node->begin(); it != node->end(); ++it) {
        bad_key = bad_key || !is_valid_utf8(it.key());
      }
      if (bad_key) {
        nlohmann::json fixed = nlohmann::json::object();
        for (auto it = node->begin(); it != node->end(); ++it) {
          fixed.emplace(visible_utf8(it.key()), std::move(it.value()));
        }
        *node = std::move(fixed);
      }
      for (auto it = node->begin(); it != node->end(); ++it) {
        pending.push_back(&it.value());
      }
    }
  }
}

} // namespace gpucheck::render
