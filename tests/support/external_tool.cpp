#include "support/external_tool.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

extern char** environ; // NOLINT: POSIX declares it nowhere in a header

namespace gpucheck::testing {

namespace {

/// A fresh temporary file's path (removed by the caller).
std::string temporary_file(const std::string& content) {
  std::string pattern = (std::filesystem::temp_directory_path() / "gpucheck-tool-XXXXXX").string();
  const int fd = ::mkstemp(pattern.data());
  if (fd < 0) {
    return "";
  }
  ::close(fd);
  std::ofstream(pattern, std::ios::binary) << content;
  return pattern;
}

} // namespace

bool tool_on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path != nullptr ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (!dir.empty() && ::access((dir + "/" + name).c_str(), X_OK) == 0) {
      return true;
    }
  }
  return false;
}

ToolResult run_tool(const std::vector<std::string>& argv, const std::string& input) {
  ToolResult result;
  const std::string in_path = temporary_file(input);
  const std::string out_path = temporary_file("");
  if (in_path.empty() || out_path.empty() || argv.empty()) {
    return result;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, in_path.c_str(), O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out_path.c_str(), O_WRONLY | O_TRUNC,
                                   0);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  std::vector<char*> args;
  for (const std::string& arg : argv) {
    args.push_back(const_cast<char*>(arg.c_str())); // NOLINT: posix_spawn's signature
  }
  args.push_back(nullptr);
  pid_t pid = 0;
  if (::posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ) == 0) {
    int status = 0;
    if (::waitpid(pid, &status, 0) == pid && WIFEXITED(status)) {
      result.exit_code = WEXITSTATUS(status);
    }
  }
  posix_spawn_file_actions_destroy(&actions);
  std::ifstream out(out_path, std::ios::binary);
  std::stringstream buffer;
  buffer << out.rdbuf();
  result.output = buffer.str();
  std::filesystem::remove(in_path);
  std::filesystem::remove(out_path);
  return result;
}

} // namespace gpucheck::testing
