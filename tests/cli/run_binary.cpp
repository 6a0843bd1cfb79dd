#include "cli/run_binary.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

extern char** environ;

namespace gpucheck::cli_test {

namespace {

std::string temp_file() {
  std::string pattern = ::testing::TempDir() + "gpucheck_cli_XXXXXX";
  const int fd = ::mkstemp(pattern.data());
  if (fd >= 0) {
    ::close(fd);
  }
  return pattern;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

bool is_controlled(const std::string& entry) {
  for (const char* name : {"NO_COLOR=", "CLICOLOR_FORCE=", "TERM=", "SOURCE_DATE_EPOCH="}) {
    if (entry.rfind(name, 0) == 0) {
      return true;
    }
  }
  return false;
}

} // namespace

std::string binary_path() {
  return GPUCHECK_BINARY;
}

pid_t spawn_gpucheck(const RunSpec& spec, const std::string& out_path,
                     const std::string& err_path) {
  std::vector<std::string> env_strings;
  for (char** entry = environ; spec.inherit_env && *entry != nullptr; ++entry) {
    if (!is_controlled(*entry)) {
      env_strings.emplace_back(*entry);
    }
  }
  for (const auto& [name, value] : spec.env) {
    env_strings.push_back(name + "=" + value);
  }
  std::vector<char*> envp;
  for (std::string& entry : env_strings) {
    envp.push_back(entry.data());
  }
  envp.push_back(nullptr);

  std::vector<std::string> arg_strings{binary_path()};
  arg_strings.insert(arg_strings.end(), spec.args.begin(), spec.args.end());
  std::vector<char*> argv;
  for (std::string& arg : arg_strings) {
    argv.push_back(arg.data());
  }
  argv.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out_path.c_str(),
                                   O_WRONLY | O_TRUNC | O_CREAT, 0600);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_path.c_str(),
                                   O_WRONLY | O_TRUNC | O_CREAT, 0600);
  if (spec.cwd) {
    posix_spawn_file_actions_addchdir_np(&actions, spec.cwd->c_str());
  }
  pid_t pid = 0;
  const int rc = ::posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    ADD_FAILURE() << "cannot start " << argv[0] << ": error " << rc;
    return -1;
  }
  return pid;
}

RunResult run_gpucheck(const RunSpec& spec) {
  RunResult result;
  const std::string out_path = spec.stdout_path.value_or(temp_file());
  const std::string err_path = temp_file();

  const pid_t pid = spawn_gpucheck(spec, out_path, err_path);
  if (pid < 0) {
    return result;
  }
  int status = 0;
  if (spec.signal_after) {
    std::this_thread::sleep_for(std::chrono::milliseconds(spec.signal_after->second));
    ::kill(pid, spec.signal_after->first);
  }
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  if (!spec.stdout_path) {
    result.out = slurp(out_path);
    ::unlink(out_path.c_str());
  }
  result.err = slurp(err_path);
  ::unlink(err_path.c_str());
  return result;
}

RunResult run_gpucheck(const std::vector<std::string>& args) {
  return run_gpucheck(RunSpec{args, {{"SOURCE_DATE_EPOCH", "1700000000"}}, std::nullopt});
}

} // namespace gpucheck::cli_test
