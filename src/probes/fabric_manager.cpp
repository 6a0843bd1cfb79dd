#include <cctype>

#include "probes/collect.hpp"

namespace gpucheck::probes {

std::optional<bool> fabric_manager_running(const Sysroot& root) {
  bool any_process = false;
  for (const std::string& entry : root.list("/proc")) {
    if (entry.empty() || std::isdigit(static_cast<unsigned char>(entry[0])) == 0) {
      continue;
    }
    any_process = true;
    // comm is cut at 15 characters: "nv-fabricmanage".
    const auto comm = root.read_line("/proc/" + entry + "/comm");
    if (comm && comm->rfind("nv-fabricmanage", 0) == 0) {
      return true;
    }
  }
  return any_process ? std::optional<bool>(false) : std::nullopt;
}

} // namespace gpucheck::probes
