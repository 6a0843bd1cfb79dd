#pragma once
/// Small helpers several tests share: a file's bytes, a text's lines, how often a text holds
/// another, and whether a process has ended.

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace gpucheck::testing {

/// The bytes of the file at `path`, or "" if it cannot be read.
inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

/// The lines of `text`, without their newlines.
inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    lines.push_back(line);
  }
  return lines;
}

/// How many times `needle` occurs in `text`, overlapping occurrences included.
inline size_t count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
    ++n;
  }
  return n;
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
