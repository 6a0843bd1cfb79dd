#include "probes/toolkit_version.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <optional>

#include "probes/paths.hpp"

namespace gpucheck::probes {

namespace {

bool is_version_text(std::string_view text) {
  if (text.empty() || std::isdigit(static_cast<unsigned char>(text.front())) == 0) {
    return false;
  }
  for (char c : text) {
    if (c != '.' && std::isalnum(static_cast<unsigned char>(c)) == 0) {
      return false;
    }
  }
  return true;
}

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

/// How many blanks (space, tab, newline) `text` starts with.
size_t skip_spaces(std::string_view text) {
  size_t n = 0;
  while (n < text.size() && std::isspace(static_cast<unsigned char>(text[n])) != 0) {
    ++n;
  }
  return n;
}

/// The version `text` starts with: at least `min_parts` dot-separated numbers ("12.4.131"), at
/// most `max_parts` of them (0: any), or nullopt.
std::optional<std::string> dotted_version(std::string_view text, size_t min_parts,
                                          size_t max_parts = 0) {
  size_t end = 0;
  size_t parts = 0;
  while (end < text.size() && is_digit(text[end])) {
    size_t next = end;
    while (next < text.size() && is_digit(text[next])) {
      ++next;
    }
    ++parts;
    end = next;
    if ((max_parts != 0 && parts == max_parts) || end + 1 >= text.size() || text[end] != '.' ||
        !is_digit(text[end + 1])) {
      break;
    }
    ++end; // the dot
  }
  if (parts < min_parts) {
    return std::nullopt;
  }
  return std::string(text.substr(0, end));
}

} // namespace

std::optional<std::string> parse_version_json(std::string_view text, std::string_view component) {
  const nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    return std::nullopt;
  }
  const auto entry = doc.find(std::string(component));
  if (entry == doc.end() || !entry->is_object()) {
    return std::nullopt;
  }
  const auto version = entry->find("version");
  if (version == entry->end() || !version->is_string()) {
    return std::nullopt;
  }
  std::string value = version->get<std::string>();
  return is_version_text(value) ? std::optional(value) : std::nullopt;
}

std::optional<std::string> parse_version_txt(std::string_view text) {
  // "CUDA Version 12.4.1": a linear scan, no regex (a 230 KB version.txt overflowed std::regex).
  constexpr std::string_view k_label = "CUDA Version";
  for (size_t at = text.find(k_label); at != std::string_view::npos;
       at = text.find(k_label, at + 1)) {
    std::string_view rest = text.substr(at + k_label.size());
    const size_t spaces = skip_spaces(rest);
    if (spaces == 0) {
      continue;
    }
    if (std::optional<std::string> version = dotted_version(rest.substr(spaces), 2)) {
      return version;
    }
  }
  return std::nullopt;
}

std::optional<std::string> parse_nvcc_version_output(std::string_view text) {
  // "Cuda compilation tools, release 12.4, V12.4.131": the V version, else the release's.
  constexpr std::string_view k_release = "release";
  std::optional<std::string> short_version;
  for (size_t at = text.find(k_release); at != std::string_view::npos;
       at = text.find(k_release, at + 1)) {
    std::string_view rest = text.substr(at + k_release.size());
    const size_t spaces = skip_spaces(rest);
    if (spaces == 0) {
      continue;
    }
    rest.remove_prefix(spaces);
    size_t digits = 0;
    while (digits < rest.size() && (is_digit(rest[digits]) || rest[digits] == '.')) {
      ++digits;
    }
    if (digits == 0) {
      continue;
    }
    if (!short_version) {
      short_version = dotted_version(rest, 2, 2);
    }
    std::string_view after = rest.substr(digits);
    if (after.empty() || after.front() != ',') {
      continue;
    }
    after.remove_prefix(1);
    after.remove_prefix(skip_spaces(after));
    if (!after.empty() && after.front() == 'V') {
      if (std::optional<std::string> version = dotted_version(after.substr(1), 2)) {
        return version;
      }
    }
  }
  return short_version;
}

std::optional<std::string> dist_info_version(std::string_view dir_name, std::string_view base) {
  constexpr std::string_view k_suffix = ".dist-info";
  if (!dir_name.ends_with(k_suffix)) {
    return std::nullopt;
  }
  dir_name.remove_suffix(k_suffix.size());
  const size_t dash = dir_name.find('-');
  if (dash == std::string_view::npos) {
    return std::nullopt;
  }
  const std::string_view name = dir_name.substr(0, dash);
  const std::string_view version = dir_name.substr(dash + 1);
  // "base" itself or "base_cu12" / "base_cu13": the CUDA-major variants of the same wheel.
  bool matches = name == base;
  if (!matches && name.starts_with(base) && name.substr(base.size()).starts_with("_cu")) {
    const std::string_view digits = name.substr(base.size() + 3);
    matches = !digits.empty() && std::all_of(digits.begin(), digits.end(), [](char c) {
      return std::isdigit(static_cast<unsigned char>(c)) != 0;
    });
  }
  if (!matches || !is_version_text(version)) {
    return std::nullopt;
  }
  return std::string(version);
}

std::optional<std::string> find_dist_info_version(const Sysroot& root, const std::string& dir,
                                                  std::string_view base,
                                                  std::string_view file_name) {
  std::vector<std::pair<std::string, std::string>> candidates; // (entry, version)
  for (const std::string& entry : list_resolved(root, dir)) {
    if (std::optional<std::string> version = dist_info_version(entry, base)) {
      candidates.emplace_back(entry, std::move(*version));
    }
  }
  if (candidates.size() == 1) {
    return candidates.front().second;
  }
  if (candidates.empty() || file_name.empty()) {
    return std::nullopt;
  }
  const std::string needle = fmt::format("/{},", file_name);
  for (const auto& [entry, version] : candidates) {
    const std::optional<std::string> record =
        read_resolved(root, join_path(join_path(dir, entry), "RECORD"));
    if (record && record->find(needle) != std::string::npos) {
      return version;
    }
  }
  return std::nullopt;
}

std::optional<std::string> read_toolkit_version(const Sysroot& root,
                                                const std::string& toolkit_dir) {
  if (const std::optional<std::string> json =
          read_resolved(root, join_path(toolkit_dir, "version.json"))) {
    for (const char* component : {"cuda_nvcc", "cuda"}) {
      if (std::optional<std::string> version = parse_version_json(*json, component)) {
        return version;
      }
    }
  }
  if (const std::optional<std::string> txt =
          read_resolved(root, join_path(toolkit_dir, "version.txt"))) {
    if (std::optional<std::string> version = parse_version_txt(*txt)) {
      return version;
    }
  }
  return find_dist_info_version(root, join_path(toolkit_dir, "dist-info"), "nvidia_cuda_nvcc");
}

} // namespace gpucheck::probes
