#include "probes/redaction_hints.hpp"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>

namespace gpucheck::probes {

namespace {
constexpr int k_first_login_uid = 1000;
constexpr int k_last_login_uid = 60000;
} // namespace

std::vector<std::string> login_names_from_passwd(std::string_view passwd) {
  std::vector<std::string> names;
  std::istringstream in{std::string(passwd)};
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> fields;
    std::stringstream ss(line);
    std::string field;
    while (std::getline(ss, field, ':')) {
      fields.push_back(field);
    }
    if (fields.size() < 3 || fields[0].empty() || fields[0].starts_with('#')) {
      continue;
    }
    char* end = nullptr;
    const long uid = std::strtol(fields[2].c_str(), &end, 10);
    if (end != fields[2].c_str() && *end == '\0' && uid >= k_first_login_uid &&
        uid <= k_last_login_uid) {
      names.push_back(fields[0]);
    }
  }
  return names;
}

RedactionHints collect_redaction_hints(const Sysroot& sysroot, const Environment& environment) {
  RedactionHints hints;
  for (const char* variable : {"USER", "LOGNAME", "SUDO_USER"}) {
    if (std::optional<std::string> user = environment.get(variable); user && !user->empty()) {
      hints.user_names.push_back(*user);
    }
  }
  if (std::optional<std::string> home = environment.get("HOME"); home && !home->empty()) {
    const std::filesystem::path path(*home);
    const std::string parent = path.parent_path().string();
    if (parent == "/home" || parent == "/Users") {
      hints.user_names.push_back(path.filename().string());
    }
  }
  // Through the sysroot: a tree's /etc/passwd linking to an absolute path is the tree's file.
  if (const std::optional<std::string> passwd = sysroot.read("/etc/passwd")) {
    for (std::string& name : login_names_from_passwd(*passwd)) {
      hints.user_names.push_back(std::move(name));
    }
  }
  if (sysroot.root() == "/") {
    char host[256] = {};
    if (::gethostname(host, sizeof host - 1) == 0 && host[0] != '\0') {
      hints.host_names.emplace_back(host);
    }
  }
  return hints;
}

} // namespace gpucheck::probes
