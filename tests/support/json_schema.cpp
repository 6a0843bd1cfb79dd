#include "support/json_schema.hpp"

#include <fmt/format.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

extern char** environ; // NOLINT: POSIX declares it nowhere in a header

namespace gpucheck::testing {

namespace {

using nlohmann::json;

constexpr std::string_view k_install_hint =
    "run scripts/install-deps.sh (it installs python3 and Debian's python3-jsonschema; CI does)";

/// The one python3 validate_json.py of this process, started on first use and kept until exit.
/// A request is one line of compact JSON, its answer one line back (validate_json.py says which).
class Validator {
public:
  Validator(const Validator&) = delete;
  Validator& operator=(const Validator&) = delete;

  static Validator& instance() {
    static Validator validator;
    return validator;
  }

  /// The answer object, or an Error when the process cannot be started or stopped answering.
  Expected<json> ask(const json& request) {
    const std::lock_guard<std::mutex> lock(m_mutex);
    if (m_broken) {
      return make_error(*m_broken);
    }
    if (m_pid <= 0 && !start()) {
      return make_error(*m_broken);
    }
    std::optional<std::string> line;
    if (send_line(request.dump(-1, ' ', false, json::error_handler_t::replace) + "\n")) {
      line = receive_line();
    }
    if (!line) {
      m_broken = fmt::format("the schema validator ({} {}) stopped answering; {}", interpreter(),
                             script(), k_install_hint);
      return make_error(*m_broken);
    }
    json answer = json::parse(*line, nullptr, false);
    if (!answer.is_object()) {
      return make_error(fmt::format("the schema validator answered {}", *line));
    }
    return answer;
  }

private:
  Validator() = default;

  ~Validator() {
    if (m_fd >= 0) {
      ::close(m_fd); // its stdin ends: it exits
    }
    // A forked child of a test runs this too: only the process that started it waits for it.
    if (m_pid > 0 && ::getpid() == m_owner) {
      int status = 0;
      ::waitpid(m_pid, &status, 0);
    }
  }

  /// The configured Debian python3; GPUCHECK_TEST_PYTHON replaces it (the tests of a missing one).
  static std::string interpreter() {
    const char* chosen = std::getenv("GPUCHECK_TEST_PYTHON");
    return chosen != nullptr && *chosen != '\0' ? chosen : GPUCHECK_PYTHON;
  }

  static std::string script() {
    return std::string(GPUCHECK_SOURCE_DIR) + "/tests/support/validate_json.py";
  }

  bool start() {
    int fds[2] = {-1, -1};
    // A socket rather than pipes: send() with MSG_NOSIGNAL reports a dead peer as EPIPE instead
    // of killing the test with SIGPIPE. Close-on-exec keeps the other programs tests start off it.
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
      m_broken = fmt::format("socketpair failed: errno {}", errno);
      return false;
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], STDIN_FILENO);
    posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
    const std::string python = interpreter();
    const std::string path = script();
    std::vector<char*> argv{const_cast<char*>(python.c_str()), // NOLINT: posix_spawn's signature
                            const_cast<char*>(path.c_str()),   // NOLINT
                            nullptr};
    const int spawned =
        ::posix_spawn(&m_pid, python.c_str(), &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(fds[1]);
    if (spawned != 0) {
      ::close(fds[0]);
      m_pid = 0;
      m_broken = fmt::format("cannot start {} for schema validation (errno {}); {}", python,
                             spawned, k_install_hint);
      return false;
    }
    m_fd = fds[0];
    m_owner = ::getpid();
    return true;
  }

  bool send_line(const std::string& line) {
    for (size_t sent = 0; sent < line.size();) {
      const ssize_t n = ::send(m_fd, line.data() + sent, line.size() - sent, MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) {
        continue;
      }
      if (n <= 0) {
        return false;
      }
      sent += static_cast<size_t>(n);
    }
    return true;
  }

  std::optional<std::string> receive_line() {
    for (;;) {
      const size_t newline = m_buffer.find('\n');
      if (newline != std::string::npos) {
        std::string line = m_buffer.substr(0, newline);
        m_buffer.erase(0, newline + 1);
        return line;
      }
      char chunk[65536];
      const ssize_t n = ::read(m_fd, chunk, sizeof chunk);
      if (n < 0 && errno == EINTR) {
        continue;
      }
      if (n <= 0) {
        return std::nullopt;
      }
      m_buffer.append(chunk, static_cast<size_t>(n));
    }
  }

  std::mutex m_mutex;
  pid_t m_pid = 0;
  pid_t m_owner = 0;
  int m_fd = -1;
  std::string m_buffer;
  std::optional<std::string> m_broken; // why no validation is possible in this process
};

JsonSchema published(const std::string& file) {
  Expected<JsonSchema> loaded =
      JsonSchema::load(std::string(GPUCHECK_SOURCE_DIR) + "/docs/" + file);
  if (!loaded) {
    throw std::runtime_error(loaded.error().message);
  }
  return std::move(loaded).value();
}

std::vector<std::string> violations(const std::string& schema, const json& instance,
                                    std::optional<std::string_view> ref) {
  json request{{"schema", schema}, {"instance", instance}};
  if (ref) {
    request["ref"] = std::string(*ref);
  }
  const Expected<json> answer = Validator::instance().ask(request);
  if (!answer) {
    return {"(not validated): " + answer.error().message};
  }
  if (answer->contains("schema_error")) {
    return {"(schema): " + (*answer)["schema_error"].get<std::string>()};
  }
  return (*answer)["errors"].get<std::vector<std::string>>();
}

} // namespace

Expected<JsonSchema> JsonSchema::load(const std::string& path) {
  const Expected<json> answer = Validator::instance().ask(json{{"schema", path}});
  if (!answer) {
    return make_error(fmt::format("{}: not validated: {}", path, answer.error().message));
  }
  if (answer->contains("schema_error")) {
    return make_error((*answer)["schema_error"].get<std::string>());
  }
  return JsonSchema(path);
}

std::vector<std::string> JsonSchema::validate(const nlohmann::json& instance) const {
  return violations(m_path, instance, std::nullopt);
}

std::vector<std::string> JsonSchema::validate(const nlohmann::json& instance,
                                              std::string_view ref) const {
  return violations(m_path, instance, ref);
}

const JsonSchema& report_schema() {
  static const JsonSchema schema = published("report.schema.json");
  return schema;
}

const JsonSchema& consumer_report_schema() {
  static const JsonSchema schema = published("report.consumer.schema.json");
  return schema;
}

std::string describe(const std::vector<std::string>& violations) {
  std::string out;
  for (const std::string& violation : violations) {
    out += violation;
    out += '\n';
  }
  return out;
}

} // namespace gpucheck::testing
