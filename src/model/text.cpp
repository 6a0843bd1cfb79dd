#include "gpucheck/model/text.hpp"

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
