#include "probes/toolkit_version.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <regex>

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
  static const std::regex k_pattern(R"(CUDA Version\s+([0-9]+(\.[0-9]+)+))");
  std::match_results<std::string_view::const_iterator> match;
  if (!std::regex_search(text.begin(), text.end(), match, k_pattern)) {
    return std::nullopt;
  }
  return match[1].str();
}

std::optional<std::string> parse_nvcc_version_output(std::string_view text) {
  static const std::regex k_full(R"(release\s+[0-9.]+,\s*V([0-9]+(\.[0-9]+)+))");
  static const std::regex k_release(R"(release\s+([0-9]+\.[0-9]+))");
  std::match_results<std::string_view::const_iterator> match;
  if (std::regex_search(text.begin(), text.end(), match, k_full) ||
      std::regex_search(text.begin(), text.end(), match, k_release)) {
    return match[1].str();
  }
  return std::nullopt;
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
