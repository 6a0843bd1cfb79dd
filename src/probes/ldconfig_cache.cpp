#include "probes/ldconfig_cache.hpp"

#include <chrono>
#include <optional>
#include <sstream>

#include "probes/run_capture.hpp"

namespace gpucheck::probes {

std::vector<LdconfigEntry> parse_ldconfig_cache(std::string_view text) {
  std::vector<LdconfigEntry> entries;
  std::istringstream lines{std::string(text)};
  std::string line;
  while (std::getline(lines, line)) {
    const size_t arrow = line.find(" => ");
    const size_t open = line.find(" (");
    if (arrow == std::string::npos || open == std::string::npos || open > arrow) {
      continue;
    }
    const size_t close = line.rfind(')', arrow);
    if (close == std::string::npos || close < open) {
      continue;
    }
    LdconfigEntry entry;
    const size_t name_start = line.find_first_not_of(" \t");
    entry.name = line.substr(name_start, open - name_start);
    entry.flags = line.substr(open + 2, close - open - 2);
    entry.path = line.substr(arrow + 4);
    while (!entry.path.empty() && (entry.path.back() == '\r' || entry.path.back() == ' ')) {
      entry.path.pop_back();
    }
    if (entry.name.empty() || !entry.path.starts_with('/')) {
      continue;
    }
    entries.push_back(std::move(entry));
  }
  return entries;
}

bool is_64bit_entry(const LdconfigEntry& entry) {
  for (const char* tag : {"x86-64", "AArch64", "64bit"}) {
    if (entry.flags.find(tag) != std::string::npos) {
      return true;
    }
  }
  return false;
}

std::vector<LdconfigEntry> read_loader_cache(const Sysroot& root) {
  using namespace std::chrono_literals;
  std::optional<std::string> text;
  if (root.root() == "/") {
    for (const char* ldconfig : {"/sbin/ldconfig", "/usr/sbin/ldconfig", "/usr/bin/ldconfig"}) {
      if (root.exists(ldconfig)) {
        // All of it: `ldconfig -p` lists in reverse order, so the libcuda, libcudnn and libcublas
        // lines come last, and 64 KiB (about 800 libraries) cut them off on a full install.
        text = run_capture({ldconfig, "-p"}, 2000ms, k_loader_cache_max_bytes);
        break;
      }
    }
  } else {
    text = root.read("/etc/ld.so.cache.txt");
  }
  std::vector<LdconfigEntry> entries;
  if (text) {
    for (LdconfigEntry& entry : parse_ldconfig_cache(*text)) {
      if (is_64bit_entry(entry)) {
        entries.push_back(std::move(entry));
      }
    }
  }
  return entries;
}

} // namespace gpucheck::probes
