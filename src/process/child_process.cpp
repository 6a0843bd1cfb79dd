#include "process/child_process.hpp"
#include "process/keeper.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "process/trace.hpp"

extern char** environ; // NOLINT(readability-redundant-declaration)

namespace gpucheck::process {

namespace {

constexpr int k_result_fd = 3;
constexpr int k_control_fd = 4; // children with a control channel
constexpr size_t k_stderr_keep_bytes = 8192;

std::string& self_exe_storage() {
  static std::string path = "/proc/self/exe";
  return path;
}

using Clock = std::chrono::steady_clock;

/// The most a child may send as its result; more is a child gone wrong.
constexpr size_t k_max_result_bytes = size_t{64} << 20;
/// How long a child may take to be gone after SIGKILL before it is left behind (stuck in the
/// kernel).
constexpr auto k_stuck_after = std::chrono::seconds(5);

/// interrupt_children()'s signal, and the groups it wakes.
std::atomic<int> g_interrupt_signal{0};
std::mutex& groups_lock() {
  static std::mutex lock;
  return lock;
}
std::set<ChildGroup*>& live_groups() {
  static std::set<ChildGroup*> groups;
  return groups;
}

/// In a forked child before exec: the signals gpucheck ignores (SIGPIPE, SIGXFSZ: a failed write
/// is reported instead) get their default action back, as any program expects.
void restore_default_signals() {
  struct sigaction action {};
  action.sa_handler = SIG_DFL;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGPIPE, &action, nullptr);
  ::sigaction(SIGXFSZ, &action, nullptr);
}

/// The signal an interrupt sends on to children: SIGQUIT's default action dumps core, so they
/// get SIGTERM for it; the rest go on as they came.
int forwarded_signal(int signo) {
  return signo == SIGQUIT ? SIGTERM : signo;
}

std::string interrupted_detail(int signo, bool started) {
  return started ? fmt::format("cut short: gpucheck received {} and stopped it", signal_name(signo))
                 : fmt::format("not started: gpucheck had received {}", signal_name(signo));
}

} // namespace

void interrupt_children(int signo) {
  g_interrupt_signal.store(signo);
  const std::lock_guard<std::mutex> guard(groups_lock());
  for (ChildGroup* group : live_groups()) {
    group->wake();
  }
}

int children_interrupted() {
  return g_interrupt_signal.load();
}

void reset_children_interrupt() {
  g_interrupt_signal.store(0);
}

struct Running {
  pid_t pid = -1;
  int result_fd = -1;
  int stderr_fd = -1;
  int control_fd = -1; ///< the parent's end of the child's control channel
  std::string result;
  std::string stderr_text;
  Clock::time_point spawned; ///< fork time: the child's own clock starts about here
  Clock::time_point start;   ///< spawn, or mark_start(): elapsed counts from here
  std::optional<Clock::time_point> ended;
  std::optional<Clock::time_point> deadline; ///< none: no deadline runs
  std::optional<Clock::time_point> term_sent;
  std::optional<Clock::time_point> killed; ///< when SIGKILL was first sent
  /// Not gone k_stuck_after after SIGKILL (in uninterruptible sleep, in the kernel: usually a
  /// driver call): concluded without its exit and never waited for again.
  bool stuck = false;
  bool timed_out = false;
  bool cancelled = false;
  std::string cancel_reason;
  bool reaped = false;
  bool flooded = false; ///< its result passed k_max_result_bytes: stopped and killed
  bool finish_reported = false;
  std::optional<ChildOutcome> outcome; ///< concluded when it finished
  int wait_status = 0;
  std::optional<ChildFailure> spawn_failure;
};

namespace {

/// SIGKILL to the child's process group, remembering when it was first sent.
void kill_group(Running& run) {
  ::kill(-run.pid, SIGKILL);
  if (!run.killed) {
    run.killed = Clock::now();
  }
}

void close_fd(int& fd) {
  if (fd >= 0) {
    ::close(fd);
    fd = -1;
  }
}

std::vector<std::string> build_env(const ChildRequest& request) {
  std::map<std::string, std::string> vars;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string entry = *e;
    const auto eq = entry.find('=');
    if (eq != std::string::npos) {
      vars[entry.substr(0, eq)] = entry.substr(eq + 1);
    }
  }
  for (const auto& [name, value] : request.env) {
    if (value) {
      vars[name] = *value;
    } else {
      vars.erase(name);
    }
  }
  vars["GPUCHECK_RESULT_FD"] = std::to_string(k_result_fd);
  if (request.control_channel) {
    vars["GPUCHECK_CONTROL_FD"] = std::to_string(k_control_fd);
  } else {
    vars.erase("GPUCHECK_CONTROL_FD");
  }
  vars["GPUCHECK_PARENT_PID"] = std::to_string(::getpid());
  std::vector<std::string> out;
  out.reserve(vars.size());
  for (const auto& [name, value] : vars) {
    out.push_back(name + "=" + value);
  }
  return out;
}

/// The child's command line (gpucheck --child MODE ARGS...); `exe` is what to exec.
std::vector<std::string> child_command(const ChildRequest& request, std::string& exe) {
  std::vector<std::string> args{"gpucheck", "--child", request.mode};
  args.insert(args.end(), request.args.begin(), request.args.end());
  // Test seam (tests/integration): run the child through the dynamic loader with
  // --inhibit-cache, so libraries that the build machine has in /etc/ld.so.cache (a real cuDNN)
  // can be made absent. Never set in production.
  if (const char* inhibit = std::getenv("GPUCHECK_TEST_INHIBIT_LD_CACHE");
      inhibit != nullptr && *inhibit == '1') {
    for (const char* loader : {"/lib64/ld-linux-x86-64.so.2", "/lib/ld-linux-aarch64.so.1"}) {
      char real[PATH_MAX];
      if (::access(loader, X_OK) == 0 && ::realpath(exe.c_str(), real) != nullptr) {
        args[0] = real;
        args.insert(args.begin(), {loader, "--inhibit-cache"});
        exe = loader;
        break;
      }
    }
  }
  return args;
}

/// execve's view of `strings`, ending in nullptr (they must outlive it).
std::vector<char*> c_strings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (std::string& s : strings) {
    out.push_back(s.data());
  }
  out.push_back(nullptr);
  return out;
}

void close_all(std::initializer_list<int*> fds) {
  for (int* fd : fds) {
    close_fd(*fd);
  }
}

Running spawn(const ChildRequest& request) {
  Running run;
  run.start = run.spawned = Clock::now();
  if (!request.deadline_by_owner) {
    run.deadline = run.start + request.timeout;
  }

  // Everything the child needs is built before fork: between fork and exec only
  // async-signal-safe calls are made.
  std::string exe = self_executable();
  std::vector<std::string> args = child_command(request, exe);
  std::vector<char*> argv = c_strings(args);
  std::vector<std::string> env = build_env(request);
  std::vector<char*> envp = c_strings(env);

  int result_pipe[2] = {-1, -1};
  int stderr_pipe[2] = {-1, -1};
  if (::pipe2(result_pipe, O_CLOEXEC) != 0 || ::pipe2(stderr_pipe, O_CLOEXEC) != 0) {
    run.spawn_failure = ChildFailure{.kind = ChildFailureKind::spawn,
                                     .detail = fmt::format("pipe: {}", std::strerror(errno))};
    close_fd(result_pipe[0]);
    close_fd(result_pipe[1]);
    return run;
  }
  // A socket rather than a pipe: writing to a child that already died must not raise SIGPIPE.
  int control[2] = {-1, -1};
  if (request.control_channel &&
      ::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, control) != 0) {
    run.spawn_failure = ChildFailure{.kind = ChildFailureKind::spawn,
                                     .detail = fmt::format("socketpair: {}", std::strerror(errno))};
    close_all({&result_pipe[0], &result_pipe[1], &stderr_pipe[0], &stderr_pipe[1]});
    return run;
  }
  const int dev_null = ::open("/dev/null", O_RDONLY | O_CLOEXEC);

  const pid_t pid = ::fork();
  if (pid < 0) {
    run.spawn_failure = ChildFailure{.kind = ChildFailureKind::spawn,
                                     .detail = fmt::format("fork: {}", std::strerror(errno))};
    close_all({&result_pipe[0], &result_pipe[1], &stderr_pipe[0], &stderr_pipe[1], &control[0],
               &control[1]});
    return run;
  }
  if (pid == 0) {
    // Child: own process group, so a timeout kills everything it started.
    ::setpgid(0, 0);
    restore_default_signals();
    if (dev_null >= 0) {
      ::dup2(dev_null, STDIN_FILENO);
    }
    ::dup2(stderr_pipe[1], STDOUT_FILENO);
    ::dup2(stderr_pipe[1], STDERR_FILENO);
    ::dup2(result_pipe[1], k_result_fd); // dup2 clears FD_CLOEXEC on the new descriptor
    if (control[0] >= 0) {
      ::dup2(control[0], k_control_fd);
    }
    ::execve(exe.c_str(), argv.data(), envp.data());
    static constexpr char k_msg[] = "gpucheck: exec of child failed\n";
    [[maybe_unused]] auto ignored = ::write(STDERR_FILENO, k_msg, sizeof k_msg - 1);
    ::_exit(127);
  }
  if (dev_null >= 0) {
    ::close(dev_null);
  }
  ::setpgid(pid, pid); // also from the parent, to close the race with an early kill
  keeper_watch(pid);
  close_fd(result_pipe[1]);
  close_fd(stderr_pipe[1]);
  close_fd(control[0]);
  run.control_fd = control[1];
  run.pid = pid;
  run.result_fd = result_pipe[0];
  run.stderr_fd = stderr_pipe[0];
  ::fcntl(run.result_fd, F_SETFL, O_NONBLOCK);
  ::fcntl(run.stderr_fd, F_SETFL, O_NONBLOCK);
  return run;
}

/// Read what `fd` has now into `into` (keeping only the last `keep_tail` bytes when that is not
/// 0), returning once it would block, at EOF, or when `into` holds more than `max_bytes`.
void drain(int& fd, std::string& into, size_t keep_tail,
           size_t max_bytes = std::numeric_limits<size_t>::max()) {
  std::array<char, 16384> buffer{};
  while (fd >= 0 && into.size() <= max_bytes) {
    const ssize_t n = ::read(fd, buffer.data(), buffer.size());
    if (n > 0) {
      into.append(buffer.data(), static_cast<size_t>(n));
      if (keep_tail > 0 && into.size() > 2 * keep_tail) {
        into.erase(0, into.size() - keep_tail);
      }
    } else if (n == 0) {
      close_fd(fd);
    } else if (errno == EINTR) {
      continue;
    } else {
      if (errno != EAGAIN && errno != EWOULDBLOCK) {
        close_fd(fd);
      }
      return;
    }
  }
}

void try_reap(Running& run) {
  if (run.reaped || run.pid < 0) {
    return;
  }
  int status = 0;
  const pid_t r = reap_leader(run.pid, &status);
  if (r == run.pid) {
    run.reaped = true;
    run.wait_status = status;
    run.ended = Clock::now();
  }
}

/// Whether the child's result pipe is closed and holds a valid result. A result_lines child's
/// is complete at its last line, the child mode's own result: an object that is no work's line
/// (a child that died after a work's line closed the pipe too, and is not done).
bool result_complete(const Running& run, const ChildRequest& request) {
  if (run.result_fd >= 0 || run.result.empty()) {
    return false;
  }
  if (!request.result_lines) {
    return nlohmann::json::accept(run.result.begin(), run.result.end());
  }
  if (run.result.back() != '\n') {
    return false;
  }
  const size_t start = run.result.find_last_of('\n', run.result.size() - 2);
  const nlohmann::json last = nlohmann::json::parse(
      run.result.begin() + static_cast<std::ptrdiff_t>(start == std::string::npos ? 0 : start + 1),
      run.result.end(), nullptr, false);
  return last.is_object() && !last.contains("work");
}

bool finished(Running& run, const ChildRequest& request) {
  if (run.spawn_failure || (run.reaped && run.result_fd < 0 && run.stderr_fd < 0)) {
    return true;
  }
  if (run.killed && Clock::now() >= *run.killed + k_stuck_after) {
    // Nothing waits forever: not for a process the kernel holds, nor for pipes that a process
    // it started outside its process group keeps open.
    run.stuck = true;
    return true;
  }
  return request.conclude_at_result && !run.cancelled && !run.timed_out && !run.reaped &&
         result_complete(run, request);
}

std::string tail_lines(const std::string& text, size_t max_lines) {
  std::string trimmed = text;
  while (!trimmed.empty() && (trimmed.back() == '\n' || trimmed.back() == '\r')) {
    trimmed.pop_back();
  }
  size_t pos = trimmed.size();
  size_t lines = 0;
  while (pos > 0) {
    const size_t nl = trimmed.rfind('\n', pos - 1);
    ++lines;
    if (nl == std::string::npos || lines >= max_lines) {
      pos = nl == std::string::npos ? 0 : nl + 1;
      break;
    }
    pos = nl;
  }
  return trimmed.substr(pos);
}

/// GPUCHECK_TRACE: when the child ran, and its own stage timeline on the parent's clock.
void trace_child(const Running& run, const ChildRequest& request, const ChildOutcome& outcome) {
  if (!tracing()) {
    return;
  }
  std::string name = request.mode;
  for (const std::string& arg : request.args) {
    name += " " + arg;
  }
  trace(fmt::format("child {}: spawned +{:.1f}, started +{:.1f}, ended +{:.1f}: {}", name,
                    trace_ms(run.spawned), trace_ms(run.start),
                    trace_ms(run.ended.value_or(Clock::now())),
                    outcome.failure ? outcome.failure->detail : "ok"));
  // A result_lines child's timeline is in its last line.
  const std::shared_ptr<const nlohmann::json>& result =
      outcome.payload ? outcome.payload : outcome.partial;
  const nlohmann::json* source = result.get();
  if (source != nullptr && source->is_array() && !source->empty()) {
    source = &source->back();
  }
  if (source != nullptr && source->is_object() && source->contains("timeline_ms")) {
    std::string stages;
    const double base = trace_ms(run.spawned);
    for (const nlohmann::json& entry : (*source)["timeline_ms"]) {
      if (entry.is_array() && entry.size() >= 2 && entry[1].is_number()) {
        stages +=
            fmt::format(" {}@+{:.0f}", entry[0].get<std::string>(), base + entry[1].get<double>());
      }
    }
    trace(fmt::format("child {} stages:{}", name, stages));
  }
}

ChildOutcome conclude_untraced(Running& run, const ChildRequest& request);

ChildOutcome conclude(Running& run, const ChildRequest& request) {
  close_fd(run.control_fd);
  ChildOutcome outcome = conclude_untraced(run, request);
  trace_child(run, request, outcome);
  return outcome;
}

/// Every complete line of a child's result that parses: what a child that failed later had
/// already reported.
nlohmann::json complete_lines(const std::string& result) {
  nlohmann::json lines = nlohmann::json::array();
  size_t from = 0;
  for (size_t nl = result.find('\n'); nl != std::string::npos; nl = result.find('\n', from)) {
    nlohmann::json line = nlohmann::json::parse(result.begin() + static_cast<long>(from),
                                                result.begin() + static_cast<long>(nl), nullptr,
                                                /*allow_exceptions=*/false);
    if (!line.is_discarded()) {
      lines.push_back(std::move(line));
    }
    from = nl + 1;
  }
  return lines;
}

/// What a child that SIGKILL did not end left behind, as the end of its failure's detail.
std::string stuck_text(const Running& run) {
  const auto stuck_s = std::chrono::duration_cast<std::chrono::seconds>(k_stuck_after).count();
  if (run.stuck && !run.reaped) {
    return fmt::format("; it did not exit within {} s of SIGKILL: it is stuck in the kernel "
                       "(uninterruptible sleep), usually inside the driver",
                       stuck_s);
  }
  if (run.stuck) {
    return fmt::format("; {} s after SIGKILL a process it started outside its process group "
                       "still held its output open, and was left behind",
                       stuck_s);
  }
  return "";
}

ChildOutcome conclude_untraced(Running& run, const ChildRequest& request) {
  ChildOutcome outcome;
  outcome.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(
      run.ended.value_or(Clock::now()) - run.start);
  outcome.stderr_tail = tail_lines(run.stderr_text, 20);
  if (run.spawn_failure) {
    outcome.failure = run.spawn_failure;
    return outcome;
  }
  ChildFailure failure;
  failure.stderr_tail = outcome.stderr_tail;
  if (run.flooded) {
    failure.kind = ChildFailureKind::bad_output;
    failure.detail =
        fmt::format("sent more than {} MiB of results; it was stopped", k_max_result_bytes >> 20);
    outcome.failure = failure;
    return outcome;
  }
  if (request.result_lines) {
    outcome.partial = std::make_shared<const nlohmann::json>(complete_lines(run.result));
  }
  const int status = run.reaped ? run.wait_status : 0; // not reaped: concluded at its result
  const std::string stuck = stuck_text(run);
  if (run.cancelled) {
    failure.kind = ChildFailureKind::cancelled;
    failure.detail =
        (run.cancel_reason.empty() ? "stopped before it finished: its work was no longer needed"
                                   : run.cancel_reason) +
        stuck;
    outcome.failure = failure;
    return outcome;
  }
  if (run.timed_out) {
    failure.kind = ChildFailureKind::timeout;
    failure.timeout_s = std::chrono::duration<double>(request.timeout).count();
    failure.detail =
        fmt::format("did not finish within {:.1f} s and was killed{}", failure.timeout_s, stuck);
    outcome.failure = failure;
    return outcome;
  }
  if (WIFSIGNALED(status)) {
    failure.kind = ChildFailureKind::signal;
    failure.signal = WTERMSIG(status);
    failure.signal_name = signal_name(failure.signal);
    failure.detail = fmt::format("crashed with {}", failure.signal_name);
    outcome.failure = failure;
    return outcome;
  }
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (code != 0) {
    failure.kind = ChildFailureKind::exit;
    failure.exit_code = code;
    failure.detail = fmt::format("exited with code {} before reporting", code);
    outcome.failure = failure;
    return outcome;
  }
  nlohmann::json payload =
      request.result_lines ? (outcome.partial ? *outcome.partial : nlohmann::json::array())
                           : nlohmann::json::parse(run.result, nullptr, /*allow_exceptions=*/false);
  if (request.result_lines) {
    // The lines are the payload; one that did not parse, or a last line without its newline,
    // is garbage.
    const size_t complete =
        static_cast<size_t>(std::count(run.result.begin(), run.result.end(), '\n'));
    if (payload.size() != complete || (!run.result.empty() && run.result.back() != '\n')) {
      payload = nlohmann::json(nlohmann::json::value_t::discarded);
    }
  }
  if (payload.is_discarded() || run.result.empty()) {
    failure.kind = ChildFailureKind::bad_output;
    failure.detail = run.result.empty() ? "exited without reporting a result"
                                        : "reported a result that is not valid JSON";
    outcome.failure = failure;
    return outcome;
  }
  outcome.payload = std::make_shared<const nlohmann::json>(std::move(payload));
  outcome.partial.reset();
  return outcome;
}

} // namespace

const std::string& self_executable() {
  return self_exe_storage();
}
void set_self_executable(std::string path) {
  self_exe_storage() = std::move(path);
}

std::string signal_name(int signal) {
  static const std::map<int, std::string_view> k_names{
      {SIGABRT, "SIGABRT"}, {SIGSEGV, "SIGSEGV"}, {SIGBUS, "SIGBUS"},   {SIGFPE, "SIGFPE"},
      {SIGILL, "SIGILL"},   {SIGKILL, "SIGKILL"}, {SIGTERM, "SIGTERM"}, {SIGPIPE, "SIGPIPE"},
      {SIGINT, "SIGINT"},   {SIGTRAP, "SIGTRAP"}, {SIGSYS, "SIGSYS"},   {SIGHUP, "SIGHUP"},
      {SIGQUIT, "SIGQUIT"}, {SIGXFSZ, "SIGXFSZ"}};
  const auto it = k_names.find(signal);
  return it != k_names.end() ? std::string(it->second) : fmt::format("signal {}", signal);
}

ChildGroup::ChildGroup() {
  if (::pipe2(m_wake, O_CLOEXEC | O_NONBLOCK) != 0) {
    m_wake[0] = m_wake[1] = -1;
  }
  const std::lock_guard<std::mutex> guard(groups_lock());
  live_groups().insert(this);
}

ChildGroup::~ChildGroup() {
  {
    const std::lock_guard<std::mutex> guard(groups_lock());
    live_groups().erase(this);
  }
  // A group dropped without wait_all() must not leave children behind.
  for (size_t i = 0; i < m_runs.size(); ++i) {
    const std::unique_ptr<Running>& run = m_runs[i];
    if (run->pid > 0 && !run->reaped) {
      ::kill(-run->pid, SIGKILL);
      if (!run->stuck && (!run->finish_reported || !m_requests[i].conclude_at_result)) {
        // Bounded: a process the kernel holds (stuck in a driver call) is left behind.
        const auto until = Clock::now() + k_stuck_after;
        while (reap_leader(run->pid, nullptr) == 0 && Clock::now() < until) {
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
      } // else its result is in and it is exiting: not waited for (it dies with gpucheck)
    }
    close_fd(run->result_fd);
    close_fd(run->stderr_fd);
    close_fd(run->control_fd);
  }
  close_fd(m_wake[0]);
  close_fd(m_wake[1]);
}

void ChildGroup::wake() {
  if (m_wake[1] >= 0) {
    const char wake = 'w';
    [[maybe_unused]] const ssize_t n = ::write(m_wake[1], &wake, 1);
  }
}

void ChildGroup::cancel() {
  m_cancelled.store(true);
  wake();
}

void ChildGroup::cancel_one(size_t child, std::string reason) {
  Running& run = *m_runs.at(child);
  if (run.cancelled || run.reaped || run.pid <= 0) {
    return;
  }
  run.cancelled = true;
  run.cancel_reason = std::move(reason);
  close_fd(run.control_fd);
  kill_group(run);
}

size_t ChildGroup::start(ChildRequest request) {
  if (const int signo = g_interrupt_signal.load(); signo != 0 && m_follow_interrupts) {
    // The run was interrupted: nothing new starts.
    auto run = std::make_unique<Running>();
    run->start = run->spawned = Clock::now();
    run->spawn_failure = ChildFailure{.kind = ChildFailureKind::cancelled,
                                      .detail = interrupted_detail(signo, false)};
    m_runs.push_back(std::move(run));
    m_requests.push_back(std::move(request));
    return m_runs.size() - 1;
  }
  m_runs.push_back(std::make_unique<Running>(spawn(request)));
  m_requests.push_back(std::move(request));
  return m_runs.size() - 1;
}

void ChildGroup::send(size_t child, std::string_view bytes) {
  const Running& run = *m_runs.at(child);
  if (run.control_fd >= 0 && !bytes.empty()) {
    [[maybe_unused]] const ssize_t n =
        ::send(run.control_fd, bytes.data(), bytes.size(), MSG_NOSIGNAL);
  }
}

std::optional<ChildOutcome> ChildGroup::outcome(size_t child) const {
  return m_runs.at(child)->outcome;
}

void ChildGroup::set_deadline(size_t child, std::optional<Clock::time_point> deadline) {
  m_runs.at(child)->deadline = deadline;
}

void ChildGroup::conclude_at_result(size_t child) {
  m_requests.at(child).conclude_at_result = true;
}

void ChildGroup::mark_start(size_t child) {
  m_runs.at(child)->start = Clock::now();
}

int ChildGroup::pid(size_t child) const {
  return m_runs.at(child)->pid;
}

struct ChildGroup::PollSet {
  enum class Source { result, stderr_text, control, wake };
  std::vector<pollfd> fds;
  std::vector<std::pair<size_t, Source>> owners; ///< run index, which of its descriptors
  Clock::time_point wait_until = Clock::time_point::max();
  void add(int fd, size_t run, Source source) {
    fds.push_back({fd, POLLIN, 0});
    owners.emplace_back(run, source);
  }
};

bool ChildGroup::tend(size_t i, ChildListener* listener, bool cancelled, int interrupted,
                      PollSet& set) {
  Running& run = *m_runs[i];
  const ChildRequest& request = m_requests[i];
  if (!run.finish_reported) {
    try_reap(run);
  }
  if (finished(run, request) || run.finish_reported) {
    if (!run.finish_reported) {
      run.finish_reported = true;
      close_fd(run.control_fd);
      run.outcome = conclude(run, request);
      if (listener != nullptr) {
        listener->on_finished(i);
      }
    }
    return true;
  }
  const auto now = Clock::now();
  if (cancelled && !run.cancelled) {
    cancel_one(i, {});
  }
  if (interrupted != 0 && !run.cancelled && !result_complete(run, request)) {
    // The signal is forwarded to the child's process group (it and what it started), then
    // SIGKILL follows after its grace: it ends now, not at its deadline.
    run.cancelled = true;
    run.cancel_reason = interrupted_detail(interrupted, true);
    close_fd(run.control_fd);
    ::kill(-run.pid, forwarded_signal(interrupted));
    if (!run.term_sent) {
      run.term_sent = now;
    }
  }
  if (!run.term_sent && run.deadline && now >= *run.deadline) {
    run.timed_out = true;
    ::kill(-run.pid, SIGTERM);
    run.term_sent = now;
  } else if (run.term_sent && now >= *run.term_sent + request.kill_grace) {
    kill_group(run);
  }
  if (run.killed) {
    set.wait_until = std::min(set.wait_until, *run.killed + k_stuck_after);
  }
  if (run.term_sent) {
    set.wait_until = std::min(set.wait_until, *run.term_sent + request.kill_grace);
  } else if (run.deadline) {
    set.wait_until = std::min(set.wait_until, *run.deadline);
  }
  if (run.result_fd >= 0) {
    set.add(run.result_fd, i, PollSet::Source::result);
  }
  if (run.stderr_fd >= 0) {
    set.add(run.stderr_fd, i, PollSet::Source::stderr_text);
  }
  if (run.control_fd >= 0) {
    set.add(run.control_fd, i, PollSet::Source::control);
  }
  if (run.result_fd < 0 && run.stderr_fd < 0) {
    // Pipes closed but not yet reaped: poll again soon.
    set.wait_until = std::min(set.wait_until, now + std::chrono::milliseconds(1));
  }
  return false;
}

void ChildGroup::serve(const PollSet& set, ChildListener* listener) {
  for (size_t k = 0; k < set.fds.size(); ++k) {
    if (set.fds[k].revents == 0) {
      continue;
    }
    const auto [index, source] = set.owners[k];
    if (source == PollSet::Source::wake) {
      char sink[64];
      while (::read(m_wake[0], sink, sizeof sink) > 0) {
      }
      continue;
    }
    Running& run = *m_runs[index];
    if (source == PollSet::Source::result) {
      drain(run.result_fd, run.result, 0, k_max_result_bytes);
      if (run.result.size() > k_max_result_bytes && !run.flooded) {
        // A child that floods its result pipe (529 MB in 2 s) is stopped, not buffered.
        run.flooded = true;
        close_fd(run.result_fd);
        run.result.clear();
        run.result.shrink_to_fit();
        kill_group(run);
      }
    } else if (source == PollSet::Source::stderr_text) {
      drain(run.stderr_fd, run.stderr_text, k_stderr_keep_bytes);
    } else {
      char buffer[64];
      const ssize_t n = ::recv(run.control_fd, buffer, sizeof buffer, MSG_DONTWAIT);
      if (n > 0) {
        if (listener != nullptr) {
          listener->on_message(index, std::string_view(buffer, static_cast<size_t>(n)));
        }
      } else if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
        close_fd(run.control_fd);
      }
    }
  }
}

std::vector<ChildOutcome> ChildGroup::wait_all(ChildListener* listener) {
  for (;;) {
    PollSet set;
    bool all_done = true;
    const bool cancelled = m_cancelled.load();
    const int interrupted = m_follow_interrupts ? g_interrupt_signal.load() : 0;
    for (size_t i = 0; i < m_runs.size(); ++i) {
      all_done = tend(i, listener, cancelled, interrupted, set) && all_done;
    }
    const size_t started = m_runs.size();
    if (listener != nullptr) {
      listener->on_wake(); // after the reaping above: the owner sees exits without delay
    }
    if (all_done && m_runs.size() == started) {
      break;
    }
    if (m_wake[0] >= 0) {
      set.add(m_wake[0], m_runs.size(), PollSet::Source::wake);
    }
    const auto now = Clock::now();
    int timeout_ms = 0;
    if (set.wait_until > now) {
      timeout_ms = static_cast<int>(std::min<int64_t>(
          std::chrono::duration_cast<std::chrono::milliseconds>(set.wait_until - now).count() + 1,
          1000));
    }
    const int ready = ::poll(set.fds.data(), set.fds.size(), timeout_ms);
    if (ready < 0 && errno != EINTR) {
      break;
    }
    serve(set, listener);
  }
  std::vector<ChildOutcome> outcomes;
  outcomes.reserve(m_runs.size());
  for (size_t i = 0; i < m_runs.size(); ++i) {
    Running& run = *m_runs[i];
    outcomes.push_back(run.outcome ? *run.outcome : conclude(run, m_requests[i]));
  }
  return outcomes;
}

namespace {
/// The control channel's descriptor in this child, or -1.
int control_descriptor() {
  const char* fd_text = std::getenv("GPUCHECK_CONTROL_FD");
  return fd_text == nullptr || *fd_text == '\0' ? -1 : std::atoi(fd_text);
}
} // namespace

void write_result_line(const nlohmann::json& value) {
  const char* fd_text = std::getenv("GPUCHECK_RESULT_FD");
  const int fd = fd_text == nullptr || *fd_text == '\0' ? 3 : std::atoi(fd_text);
  const std::string line = value.dump() + "\n";
  // A lane's thread writes lines too (cuDNN's in the shared child): one line at a time.
  static std::mutex lock;
  const std::lock_guard<std::mutex> guard(lock);
  size_t off = 0;
  while (off < line.size()) {
    const ssize_t n = ::write(fd, line.data() + off, line.size() - off);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      return;
    }
    off += static_cast<size_t>(n);
  }
}

bool control_channel_open() {
  return control_descriptor() >= 0;
}

bool control_send(char byte) {
  const int fd = control_descriptor();
  if (fd < 0) {
    return false;
  }
  [[maybe_unused]] const ssize_t n = ::send(fd, &byte, 1, MSG_NOSIGNAL);
  return true;
}

bool control_await(char wanted) {
  const int fd = control_descriptor();
  if (fd < 0) {
    return false;
  }
  char message = 0;
  for (;;) {
    const ssize_t n = ::read(fd, &message, 1);
    if (n == 1 && message == wanted) {
      return true;
    }
    if (n == 1 || (n < 0 && errno == EINTR)) {
      continue;
    }
    // The parent closed the channel (it no longer needs the work) or died.
    std::_Exit(0);
  }
}

bool control_poll(char wanted) {
  const int fd = control_descriptor();
  if (fd < 0) {
    return false;
  }
  char buffer[64];
  for (;;) {
    const ssize_t n = ::recv(fd, buffer, sizeof buffer, MSG_DONTWAIT);
    if (n > 0) {
      if (std::find(buffer, buffer + n, wanted) != buffer + n) {
        return true;
      }
      continue;
    }
    if (n < 0 && errno == EINTR) {
      continue;
    }
    return n == 0; // closed: the parent is gone or no longer wants the work
  }
}

std::string control_read_line() {
  const int fd = control_descriptor();
  std::string line;
  if (fd < 0) {
    return line;
  }
  char c = 0;
  while (line.size() < 64) {
    const ssize_t n = ::read(fd, &c, 1);
    if (n == 1 && c == '\n') {
      break;
    }
    if (n == 1) {
      line += c;
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      std::_Exit(0);
    }
  }
  return line;
}

void control_close() {
  const int fd = control_descriptor();
  if (fd >= 0) {
    ::close(fd);
    ::unsetenv("GPUCHECK_CONTROL_FD");
  }
}

std::vector<ChildOutcome> run_children(std::span<const ChildRequest> requests) {
  ChildGroup group;
  for (const ChildRequest& request : requests) {
    group.start(request);
  }
  return group.wait_all();
}

ChildOutcome run_child(const ChildRequest& request) {
  return std::move(run_children(std::span<const ChildRequest>(&request, 1)).front());
}

} // namespace gpucheck::process
