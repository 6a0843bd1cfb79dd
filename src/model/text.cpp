#include "gpucheck/model/text.hpp"

#include <cstdint>

namespace gpucheck {

namespace {
constexpr bool is_ascii_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}
} // namespace

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') {
      c = static_cast<char>(c - 'A' + 'a');
    }
  }
  return out;
}

std::string visible_text(std::string_view text) {
  static constexpr char k_hex[] = "0123456789abcdef";
  const auto byte_escape = [](std::string& out, unsigned char c) {
    out += "\\x";
    out += k_hex[c >> 4];
    out += k_hex[c & 0xf];
  };
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) {
        byte_escape(out, c);
      } else {
        out += static_cast<char>(c);
      }
      ++i;
      continue;
    }
    // A UTF-8 sequence: its length from the lead byte, then continuation bytes, no overlong
    // form, no surrogate, nothing past U+10FFFF.
    // 0xf5-0xff lead nothing (fuzz_render: 0xfe read as a three-byte lead passed raw bytes).
    const size_t length = c >= 0xf0 && c <= 0xf4  ? 4
                          : c >= 0xe0 && c < 0xf0 ? 3
                          : c >= 0xc2 && c < 0xe0 ? 2
                                                  : 0;
    uint32_t point = length == 2 ? c & 0x1fU : length == 3 ? c & 0x0fU : c & 0x07U;
    bool valid = length != 0 && i + length <= text.size();
    for (size_t k = 1; valid && k < length; ++k) {
      const auto next = static_cast<unsigned char>(text[i + k]);
      valid = (next & 0xc0U) == 0x80U;
      point = (point << 6U) | (next & 0x3fU);
    }
    valid = valid && !(length == 3 && (point < 0x800 || (point >= 0xd800 && point <= 0xdfff))) &&
            !(length == 4 && (point < 0x10000 || point > 0x10ffff));
    if (!valid) {
      byte_escape(out, c);
      ++i;
      continue;
    }
    if (point >= 0x80 && point <= 0x9f) {
      out += "\\u00";
      out += k_hex[point >> 4];
      out += k_hex[point & 0xf];
    } else {
      out.append(text.substr(i, length));
    }
    i += length;
  }
  return out;
}

bool is_secret_variable_name(std::string_view name) {
  const std::string folded = lower(name);
  for (const std::string_view part :
       {"token", "secret", "password", "passwd", "key", "credential"}) {
    if (folded.find(part) != std::string::npos) {
      return true;
    }
  }
  return false;
}

void hide_secret_variables(std::map<std::string, std::string>& variables) {
  for (auto& [name, value] : variables) {
    if (is_secret_variable_name(name)) {
      value = std::string(k_hidden_secret);
    }
  }
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && is_ascii_space(text.front())) {
    text.remove_prefix(1);
  }
  while (!text.empty() && is_ascii_space(text.back())) {
    text.remove_suffix(1);
  }
  return text;
}

} // namespace gpucheck
