#pragma once
/// The root_safety notes of a JSON report (probe issues of the probe "root_safety").

#include <nlohmann/json.hpp>

#include <algorithm>
#include <string>
#include <vector>

namespace gpucheck::testing {

inline std::vector<std::string> root_safety_notes(const nlohmann::json& report) {
  std::vector<std::string> notes;
  for (const auto& issue : report["snapshot"]["probe_issues"]) {
    if (issue["probe"] == "root_safety") {
      notes.push_back(issue["message"].get<std::string>());
    }
  }
  return notes;
}

inline bool any_note_has(const std::vector<std::string>& notes, const std::string& text) {
  return std::any_of(notes.begin(), notes.end(),
                     [&text](const std::string& n) { return n.find(text) != std::string::npos; });
}

} // namespace gpucheck::testing
