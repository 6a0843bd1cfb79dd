#pragma once
/// Small helpers several tests share: a text's lines, and whether a process has ended.

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace gpucheck::testing {

/// The lines of `text`, without their newlines.
inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    lines.push_back(line);
  }
  return lines;
}

/// Whether process `pid` is gone (or a zombie nobody reaped yet: it no longer runs).
inline bool process_ended(const std::string& pid) {
  std::ifstream stat("/proc/" + pid + "/stat");
  std::string text;
  std::getline(stat, text);
  const size_t paren = text.rfind(')');
  return !stat || paren == std::string::npos || text.substr(paren + 2, 1) == "Z";
}

inline bool process_ended(int pid) {
  return process_ended(std::to_string(pid));
}

} // namespace gpucheck::testing
