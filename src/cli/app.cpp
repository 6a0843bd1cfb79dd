#include "cli/app.hpp"

#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "build_info.hpp"
#include "cli/clock.hpp"
#include "cli/exit_codes.hpp"
#include "cli/gate_options.hpp"
#include "cli/interrupt.hpp"
#include "cli/matrix_command.hpp"
#include "cli/merge_command.hpp"
#include "cli/options.hpp"
#include "cli/output_file.hpp"
#include "cli/outputs.hpp"
#include "cli/progress.hpp"
#include "cli/watchdog.hpp"
#include "compat/matrix.hpp"
#include "core/root_causes.hpp"
#include "engine/gpu_engine.hpp"
#include "findings/catalog.hpp"
#include "gates/gates.hpp"
#include "gpucheck/model/json_input.hpp"
#include "gpucheck/model/json_io.hpp"
#include "gpucheck/registry.hpp"
#include "gpucheck/runner.hpp"
#include "gpucheck/selection.hpp"
#include "gpucheck/suggest.hpp"
#include "kernel_build.hpp"
#include "probes/collect.hpp"
#include "probes/path_trust.hpp"
#include "probes/raw_sources.hpp"
#include "probes/redaction_hints.hpp"
#include "process/child_process.hpp"
#include "process/trace.hpp"
#include "render/bundle.hpp"
#include "render/json.hpp"
#include "render/text.hpp"
#include "render/utf8.hpp"

namespace gpucheck::cli {

namespace {

/// --only and --skip as the run selects: the patterns given, each resolved against every check
/// id (resolve_selection: "gpu.pcie" is gpu.pcie_link, "gpu.compute" only gpu.compute).
Selection selection_of(const RunOptions& options) {
  std::vector<std::string> ids;
  for (const CheckDef& check : all_checks()) {
    ids.emplace_back(check.info.id);
  }
  return resolve_selection({split_commas(options.only), split_commas(options.skip)}, ids);
}

/// A problem with the user's input: reported in one line, exit 2.
struct UsageError {
  std::string message;
  bool help_hint = false; ///< also print the "Run 'gpucheck --help'" line (option problems)
};

std::optional<std::string> getenv_opt(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? std::optional<std::string>(v) : std::nullopt;
}

/// The terminal's width in columns when `fd` is a terminal that reports one.
std::optional<int> terminal_columns(int fd) {
  struct winsize size {};
  if (::isatty(fd) != 0 && ::ioctl(fd, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) {
    return static_cast<int>(size.ws_col);
  }
  return std::nullopt;
}

SystemSnapshot load_snapshot_file(const std::string& path) {
  Expected<std::string> text = read_input_file(path);
  if (!text) {
    throw UsageError{
        fmt::format("cannot read snapshot file '{}' ({})", path, text.error().message)};
  }
  Expected<SystemSnapshot> snapshot = snapshot_from_text(*text);
  if (!snapshot) {
    throw UsageError{fmt::format("{}: {}", path, snapshot.error().message)};
  }
  return std::move(snapshot).value();
}

/// Each timed phase of the long level (--duration, default 60 s).
std::chrono::milliseconds long_duration(const RunOptions& options) {
  return std::chrono::milliseconds(static_cast<int64_t>(options.duration_s.value_or(60.0) * 1000));
}

/// The root_safety notes of LD_LIBRARY_PATH entries left out (restrict_library_path()).
std::vector<ProbeIssue>& library_path_notes() {
  static std::vector<ProbeIssue> notes;
  return notes;
}

/// As root, the LD_LIBRARY_PATH entries another user could write leave the environment that every
/// child inherits (probe and GPU children would dlopen libcuda or cuDNN from them as root), once,
/// before any child or thread starts; the live snapshot names each one left out.
void restrict_library_path() {
  const char* value = std::getenv("LD_LIBRARY_PATH");
  if (value == nullptr) {
    return;
  }
  probes::SearchPathFilter filter = probes::filter_search_path("LD_LIBRARY_PATH", value, true);
  if (filter.notes.empty()) {
    return;
  }
  if (filter.kept.empty()) {
    ::unsetenv("LD_LIBRARY_PATH");
  } else {
    ::setenv("LD_LIBRARY_PATH", filter.kept.c_str(), 1);
  }
  library_path_notes() = std::move(filter.notes);
}

SystemSnapshot obtain_snapshot(const RunOptions& options, const engine::ProbeHooks& hooks = {}) {
  if (options.from_snapshot) {
    return load_snapshot_file(*options.from_snapshot);
  }
  probes::ProbeOptions probe_options;
  probe_options.sysroot = options.sysroot;
  probe_options.quick = options.quick;
  for (const std::string& python : options.python) {
    // A relative --python names a file from the working directory; probes take absolute paths.
    probe_options.python_interpreters.push_back(
        python.starts_with('/') ? python : std::filesystem::absolute(python).string());
  }
  probe_options.import_frameworks = options.import_frameworks;
  probe_options.child_timeout =
      std::chrono::milliseconds(static_cast<int64_t>(options.probe_timeout_s * 1000));
  // The interpreter query gets the probes' deadline too: a fixed 2 s timed out under eight
  // concurrent runs and changed the report.
  probe_options.python_query_timeout = probe_options.child_timeout;
  probe_options.before_cudnn_children = hooks.before_cudnn_children;
  // The compatibility matrix is parsed at its first use, by the first check after the probes:
  // 3-6 ms on --quick's critical path, parsed here instead while the probe children run. A
  // matrix that cannot be parsed throws again at that first use, which reports it.
  const std::jthread matrix_parse([] {
    try {
      static_cast<void>(compat::active_matrix());
    } catch (...) {
      // reported at its first use
    }
  });
  SystemSnapshot snapshot = probes::collect_snapshot(probe_options, probes::Environment::current());
  snapshot.probe_issues.insert(snapshot.probe_issues.end(), library_path_notes().begin(),
                               library_path_notes().end());
  return snapshot;
}

Report build_report(const RunOptions& options, SystemSnapshot snapshot,
                    engine::GpuEngine* gpu_engine = nullptr) {
  CheckOptions check_options;
  // A replayed snapshot describes another machine (or another moment): GPU work here would
  // judge this machine's GPU instead, so replay runs the passive checks only.
  check_options.quick = options.quick || options.from_snapshot.has_value();
  if (options.from_snapshot) {
    check_options.no_gpu_work_reason =
        "replaying a snapshot: GPU work would measure this machine, not the recorded one";
  }
  check_options.timeout = std::chrono::milliseconds(static_cast<int64_t>(options.timeout_s * 1000));
  check_options.level = options.level;
  check_options.duration = long_duration(options);
  check_options.force = options.force;
  const CheckContext context{snapshot, check_options, gpu_engine};
  const Selection selection = selection_of(options);

  Report report;
  // Gates run last: they read the snapshot and the other checks' results.
  report.results = gates::apply_gates(gate_spec(options.gates), snapshot,
                                      run_checks(all_checks(), context, selection));
  report.summary = summarize(report.results);
  report.root_causes = find_root_causes(report.results);
  report.context.tool_version = build_info::k_version;
  report.context.generated_at = report_timestamp();
  report.context.matrix_version = compat::active_matrix().matrix_version;
  report.context.mode = options.from_snapshot ? "replay" : std::string(to_string(options.level));
  report.context.argv = options.argv;
  report.snapshot = std::move(snapshot);
  return report;
}

int exit_code_for(const Report& report) {
  return (report.summary.fail > 0 || report.summary.error > 0) ? k_exit_check_failed : k_exit_ok;
}

/// A pattern that matches no check, or a selection that matches none, is a typo, not a
/// successful run of what was left: a usage error, with the id nearest the pattern.
void require_some_check(const RunOptions& options) {
  const Selection given{split_commas(options.only), split_commas(options.skip)};
  if (given.only.empty() && given.skip.empty()) {
    return;
  }
  const Selection selection = selection_of(options);
  std::vector<std::string> names; // every id and each of its leading components
  for (const CheckDef& check : all_checks()) {
    const std::string id(check.info.id);
    for (size_t dot = id.find('.'); dot != std::string::npos; dot = id.find('.', dot + 1)) {
      if (std::find(names.begin(), names.end(), id.substr(0, dot)) == names.end()) {
        names.push_back(id.substr(0, dot));
      }
    }
    names.push_back(id);
  }
  for (const auto& [flag, patterns] :
       {std::pair{"--only", &given.only}, std::pair{"--skip", &given.skip}}) {
    for (const std::string& pattern : *patterns) {
      const bool matches =
          std::any_of(all_checks().begin(), all_checks().end(), [&pattern](const CheckDef& check) {
            return pattern_matches(check.info.id, pattern);
          });
      if (!matches) {
        throw UsageError{fmt::format("{} '{}' matches no check{}; 'gpucheck list' shows the ids",
                                     flag, render::visible_utf8(pattern),
                                     did_you_mean_words(pattern, names)),
                         true};
      }
    }
  }
  for (const CheckDef& check : all_checks()) {
    if (is_selected(check.info.id, selection)) {
      return;
    }
  }
  throw UsageError{"--only/--skip select no check ('gpucheck list' shows the ids)", true};
}

/// Each --python must name an executable file (under --sysroot when given): a typo, a directory or
/// a data file is a usage error (exit 2) before anything is probed, not an environment read from
/// the files around it. Whether an executable is a Python interpreter is learnt by
/// asking it, with the probes' deadline (fw.interpreter_failed when it does not answer).
void check_python_options(const RunOptions& options) {
  for (const std::string& python : options.python) {
    const std::string absolute =
        python.starts_with('/') ? python : std::filesystem::absolute(python).string();
    const std::string host = options.sysroot == "/" ? absolute : options.sysroot + absolute;
    struct stat st {};
    if (::stat(host.c_str(), &st) != 0) {
      throw UsageError{fmt::format("--python '{}': {}", python, std::strerror(errno)), true};
    }
    if (S_ISDIR(st.st_mode)) {
      throw UsageError{
          fmt::format("--python '{}' is a directory; name the interpreter, e.g. {}/bin/python3",
                      python, python),
          true};
    }
    if (!S_ISREG(st.st_mode) || (st.st_mode & 0111U) == 0) {
      throw UsageError{
          fmt::format("--python '{}' is not an executable file (a Python interpreter is)", python),
          true};
    }
  }
}

/// The exit code after writing outputs: a refused path is a usage error (2), data that could not
/// be written (disk full, I/O error, stdout closed) is gpucheck's failure (3); the worse wins.
int worse_exit(int current, const WriteError& problem) {
  std::cerr << "gpucheck: " << problem.message << "\n";
  const int code = problem.refused ? k_exit_usage : k_exit_internal;
  return std::max(current, code);
}

/// Write a rendered report to stdout; a failure (closed, /dev/full) says why.
std::optional<WriteError> write_stdout(const std::string& text) {
  errno = 0;
  std::cout << text;
  std::cout.flush();
  if (!std::cout) {
    const int error = errno;
    return WriteError{fmt::format("cannot write the report to stdout: {}",
                                  error != 0 ? std::strerror(error) : "write failed"),
                      false};
  }
  return std::nullopt;
}

/// Write the report where the plan says: files first, then the bundle, then stdout. An output
/// that fails is named on stderr and the others are still written (a report always gets out);
/// the exit code is then 2 for a path that was refused, 3 for data that could not be written.
int write_outputs(const Report& report, const OutputPlan& plan, const RunOptions& options,
                  const RedactionHints& hints, std::chrono::milliseconds run_duration) {
  std::optional<Report> redacted;
  const auto shown = [&](ReportFormat format) -> const Report& {
    if (!plan.redacts(format)) {
      return report;
    }
    if (!redacted) {
      render::Redactor redactor(hints);
      redacted = redactor.redact(report);
    }
    return *redacted;
  };
  int write_failure = k_exit_ok;
  render::TextStyle file_style;
  file_style.verbose = options.verbose;
  file_style.quiet = options.quiet;
  for (const OutputTarget& target : plan.files) {
    const std::string text = render_report(shown(target.format), target.format, file_style,
                                           options.output.json_compact, run_duration);
    if (std::optional<WriteError> problem = write_output_file(target.path, text)) {
      write_failure = worse_exit(write_failure, *problem);
    }
  }
  if (plan.bundle) {
    render::BundleOptions bundle_options;
    bundle_options.redact = !plan.redact_none;
    bundle_options.hints = hints;
    bundle_options.mtime_s = epoch_seconds(report.context.generated_at);
    // The raw sources are read by probes/ here, after every check rather than with the other
    // probes: their nvidia-smi -q and lspci -vvv would query the GPUs beside the timed work.
    const std::map<std::string, std::string> sources =
        options.from_snapshot
            ? std::map<std::string, std::string>{{"not-collected.txt",
                                                  "This bundle was made from a saved snapshot: "
                                                  "the raw sources of that machine were not "
                                                  "saved with it.\n"}}
            : probes::collect_raw_sources(probes::Sysroot(options.sysroot));
    if (std::optional<WriteError> problem =
            write_output_file(*plan.bundle, render::make_bundle(report, sources, bundle_options))) {
      write_failure = worse_exit(write_failure, *problem);
    }
  }
  if (plan.stdout_format) {
    render::TextStyle style;
    style.color =
        render::decide_color(options.color, ::isatty(STDOUT_FILENO) != 0, getenv_opt("NO_COLOR"),
                             getenv_opt("CLICOLOR_FORCE"), getenv_opt("TERM"));
    style.verbose = options.verbose;
    style.quiet = options.quiet;
    style.width = render::decide_width(terminal_columns(STDOUT_FILENO), getenv_opt("COLUMNS"));
    if (std::optional<WriteError> problem =
            write_stdout(render_report(shown(*plan.stdout_format), *plan.stdout_format, style,
                                       options.output.json_compact, run_duration))) {
      write_failure = worse_exit(write_failure, *problem);
    }
  }
  if (write_failure != k_exit_ok) {
    return write_failure;
  }
  // --format reason answers "drain this node?": 1 when it should, 0 otherwise (docs/fleet.md).
  if (plan.stdout_format == ReportFormat::reason) {
    return drains_node(report) ? k_exit_check_failed : k_exit_ok;
  }
  return exit_code_for(report);
}

/// `code`, unless stdout could not take what was written to it (closed, /dev/full): then exit 3
/// with a line saying so, as a run does (list, explain, --help and --version exited 0).
int stdout_checked(int code) {
  errno = 0;
  std::cout.flush();
  if (!std::cout) {
    const int error = errno;
    std::cerr << "gpucheck: cannot write to stdout: "
              << (error != 0 ? std::strerror(error) : "write failed") << "\n";
    return k_exit_internal;
  }
  return code;
}

/// The main command and `gpucheck report` (report_command): check the outputs, run, write.
namespace {
/// The outputs of a run, its options checked first (usage errors before any probing); the
/// plan's warnings go to stderr.
OutputPlan checked_output_plan(const RunOptions& options, bool report_command) {
  require_some_check(options);
  check_python_options(options);
  // CLI11 does not run validators on an empty value (`--fail-on ""`, `fail-on =` in a config):
  // such a gate is a usage error now, not an internal error after probing (found by fuzz_config).
  try {
    (void)gate_spec(options.gates);
  } catch (const std::invalid_argument& e) {
    throw UsageError{e.what(), true};
  }
  OutputOptions output = options.output;
  output.json = output.json || options.json;
  Expected<OutputPlan> plan = plan_outputs(output, report_command);
  if (!plan) {
    throw UsageError{plan.error().message, true};
  }
  for (const std::string& warning : plan->warnings) {
    std::cerr << "gpucheck: warning: " << render::visible_utf8(warning) << "\n";
  }
  return std::move(*plan);
}

/// Progress goes to stderr; a program reading JSON, JUnit, metrics, annotations or a drain
/// reason from stdout wants silence.
bool machine_output(const OutputPlan& plan) {
  return plan.stdout_format == ReportFormat::json || plan.stdout_format == ReportFormat::junit ||
         plan.stdout_format == ReportFormat::prometheus ||
         plan.stdout_format == ReportFormat::github || plan.stdout_format == ReportFormat::reason;
}

/// Another run tests a GPU: whose turn this run waits for, said on every kind of output (a wait
/// of a minute needs a reason on the terminal).
void say_turn_wait(const engine::TurnWait& wait, const std::string& gpu) {
  const std::string who = !wait.holder ? std::string("another gpucheck run")
                          : *wait.holder > 0
                              ? fmt::format("gpucheck run {}", *wait.holder)
                              : std::string("another gpucheck run (in another PID namespace)");
  std::fputs(fmt::format("gpucheck: GPU {} is being tested by {}; waiting up to {} for its "
                         "turn (--wait-turn)\n",
                         gpu, who, engine::wait_text(wait.limit))
                 .c_str(),
             stderr);
}

/// The GPU engine of a run that does GPU work (not --quick, not a replay), else nullptr. Its
/// children start now and do their setup while the probes run.
std::unique_ptr<engine::GpuEngine> gpu_engine_for(const RunOptions& options) {
  if (options.quick || options.from_snapshot) {
    return nullptr;
  }
  engine::LongLevel long_level;
  long_level.enabled = options.level == Level::long_;
  long_level.duration = long_duration(options);
  long_level.force = options.force;
  std::unique_ptr<engine::GpuEngine> gpu_engine = engine::make_gpu_engine(
      selection_of(options), options.sysroot,
      std::chrono::milliseconds(static_cast<int64_t>(options.timeout_s * 1000)), long_level,
      options.wait_turn_s ? std::optional<std::chrono::milliseconds>(
                                static_cast<int64_t>(*options.wait_turn_s * 1000))
                          : std::nullopt);
  gpu_engine->options().on_turn_wait = &say_turn_wait;
  return gpu_engine;
}

/// Ctrl-C or SIGTERM: the probes' children and helpers end now, with what they started (their
/// process groups get the signal, then SIGKILL), and the GPU work stops (the long level's works
/// report what they did); the report of what ran is then written.
std::function<void(int)> stop_on_signal(engine::GpuEngine* engine) {
  return [engine](int signo) {
    std::fprintf(stderr,
                 "\ngpucheck: %s: stopping the probes and the GPU work; the report shows what "
                 "ran and what was cut short (again to quit at once)\n",
                 signo == SIGINT ? "interrupted" : process::signal_name(signo).c_str());
    process::interrupt_children(signo);
    if (engine != nullptr) {
      engine->interrupt();
    }
  };
}
} // namespace

int command_run(const RunOptions& options, bool report_command) {
  const auto started = std::chrono::steady_clock::now();
  const OutputPlan plan = checked_output_plan(options, report_command);
  // A snapshot to replay is read first: a bad one is a usage error with no progress line
  // before it.
  std::optional<SystemSnapshot> replayed;
  if (options.from_snapshot) {
    replayed = load_snapshot_file(*options.from_snapshot);
  }
  if (!machine_output(plan)) {
    std::fputs(options.from_snapshot ? "gpucheck: replaying a snapshot...\n"
                                     : "gpucheck: probing...\n",
               stderr);
  }
  std::unique_ptr<engine::GpuEngine> gpu_engine = gpu_engine_for(options);
  engine::GpuEngine* engine_ptr = gpu_engine.get();
  // Nothing waits forever: past the run's bound what still runs is stopped and the report of
  // what finished is written; a run still not over 10 s later ends with the internal-error code.
  const auto probe_timeout =
      std::chrono::milliseconds(static_cast<int64_t>(options.probe_timeout_s * 1000));
  const Watchdog watchdog(
      [engine_ptr, probe_timeout] {
        return run_time_bound(probe_timeout, engine_ptr != nullptr ? engine_ptr->time_bound(8)
                                                                   : std::chrono::milliseconds(0));
      },
      [engine_ptr] {
        std::fputs("\ngpucheck: the run passed its time limit; stopping what still runs and "
                   "writing the report of what finished\n",
                   stderr);
        process::interrupt_children(SIGTERM);
        if (engine_ptr != nullptr) {
          engine_ptr->cancel();
        }
      },
      std::chrono::seconds(10),
      [] {
        std::fputs("gpucheck: internal error: the run did not end after its time limit\n", stderr);
        std::_Exit(k_exit_internal);
      });
  const InterruptWatch interrupt_watch(stop_on_signal(engine_ptr));
  // The engine orders its start around the probes (with --import, whose framework imports use
  // the GPU, after them).
  SystemSnapshot snapshot =
      replayed     ? std::move(*replayed)
      : gpu_engine ? gpu_engine->around_probes(options.import_frameworks,
                                               [&options](const engine::ProbeHooks& hooks) {
                                                 return obtain_snapshot(options, hooks);
                                               })
                   : obtain_snapshot(options);
  // Names a redacted output must not show beyond the snapshot's: a live machine's, read with the
  // probes when an output is redacted (a replayed snapshot has none).
  const RedactionHints hints =
      replayed || !plan.redacts_any()
          ? RedactionHints{}
          : probes::collect_redaction_hints(probes::Sysroot(options.sysroot),
                                            probes::Environment::current());
  std::optional<Report> report;
  {
    const ProgressLine progress(
        [engine_ptr]() -> std::optional<engine::Scheduler::Progress> {
          return engine_ptr != nullptr ? engine_ptr->progress() : std::nullopt;
        },
        options.level == Level::long_ && engine_ptr != nullptr && ::isatty(STDERR_FILENO) != 0);
    report = build_report(options, std::move(snapshot), gpu_engine.get());
  }
  process::trace("report built");
  const int code = write_outputs(*report, plan, options, hints,
                                 std::chrono::duration_cast<std::chrono::milliseconds>(
                                     std::chrono::steady_clock::now() - started));
  process::trace("outputs written");
  if (const int signo = interrupt_watch.signal(); signo != 0) {
    return std::max(code, k_exit_signal_base + signo);
  }
  return code;
}

int command_snapshot(const RunOptions& options, const std::string& output) {
  check_python_options(options);
  const bool to_stdout = output.empty() || output == "-";
  if (!to_stdout) {
    if (std::optional<std::string> problem = output_path_problem(output)) {
      throw UsageError{*problem};
    }
  }
  // Ctrl-C or SIGTERM: the probes' children end now and the snapshot of what was read is still
  // written (each cut-short probe says so); the exit code then says which signal came.
  const InterruptWatch interrupt_watch([](int signo) {
    std::fprintf(stderr,
                 "\ngpucheck: %s: stopping the probes; the snapshot shows what was read and what "
                 "was cut short (again to quit at once)\n",
                 signo == SIGINT ? "interrupted" : process::signal_name(signo).c_str());
    process::interrupt_children(signo);
  });
  const SystemSnapshot snapshot = obtain_snapshot(options);
  const std::string text = render::render_snapshot_json(snapshot);
  const std::optional<WriteError> problem =
      to_stdout ? write_stdout(text) : write_output_file(output, text);
  const int code = problem ? worse_exit(k_exit_ok, *problem) : k_exit_ok;
  if (const int signo = interrupt_watch.signal(); signo != 0) {
    return std::max(code, k_exit_signal_base + signo);
  }
  return code;
}

/// The lowest level whose report has the check: an active check's GPU work needs standard.
Level lowest_level(const CheckInfo& info) {
  return info.kind == CheckKind::active && info.level == Level::quick ? Level::standard
                                                                      : info.level;
}

int command_list(bool json) {
  if (json) {
    nlohmann::json list = nlohmann::json::array();
    for (const CheckDef& check : all_checks()) {
      list.push_back({{"id", check.info.id},
                      {"title", check.info.title},
                      {"description", check.info.description},
                      {"kind", check.info.kind == CheckKind::active ? "active" : "passive"},
                      {"level", std::string(to_string(lowest_level(check.info)))}});
    }
    std::cout << list.dump(2) << "\n";
    return k_exit_ok;
  }
  for (const CheckDef& check : all_checks()) {
    // The level is shown where it is not the lowest that runs it: "(long)" for the long level's.
    std::cout << fmt::format("{:<28} {:<8} {}{}\n", check.info.id,
                             check.info.kind == CheckKind::active ? "active" : "passive",
                             check.info.title,
                             check.info.level == Level::long_ ? " (--level long)" : "");
  }
  return k_exit_ok;
}

int command_explain(const std::string& code) {
  if (code == "all") {
    for (const FindingSpec& spec : finding_catalog()) {
      std::cout << fmt::format("{:<36} {:<5} {}\n", spec.code, to_string(spec.severity),
                               spec.title);
    }
    return k_exit_ok;
  }
  const FindingSpec* spec = find_finding_spec(code);
  if (spec == nullptr) {
    // A check id ("gpu.ecc") names a check: say what it verifies and how to run it alone.
    for (const CheckDef& check : all_checks()) {
      if (check.info.id == code) {
        std::cout << fmt::format(
            "{} (check, {})\n{}\n\n{}\n\nRun it alone: gpucheck --only {}\nIts finding codes "
            "and how it judges: docs/checks.md; gpucheck explain CODE for each code.\n",
            check.info.id, check.info.kind == CheckKind::active ? "active" : "passive",
            check.info.title, check.info.description, check.info.id);
        return k_exit_ok;
      }
    }
    std::vector<std::string> known;
    for (const FindingSpec& s : finding_catalog()) {
      known.emplace_back(s.code);
    }
    for (const CheckDef& check : all_checks()) {
      known.emplace_back(check.info.id);
    }
    const std::string near = did_you_mean_words(code, known);
    throw UsageError{fmt::format("unknown finding code or check id '{}'{}",
                                 render::visible_utf8(code),
                                 !near.empty() ? near
                                               : " (gpucheck explain all lists the codes, gpucheck "
                                                 "list the checks)")};
  }
  std::cout << fmt::format("{} ({})\n{}\n\n{}\n\nMessage: {}\nRemedy: {}\n", spec->code,
                           to_string(spec->severity), spec->title, spec->explanation, spec->message,
                           spec->remedy);
  // Whether a cluster's health check takes the node out of service for it (docs/fleet.md).
  std::cout << (spec->drain == Drain::yes
                    ? "Drain: yes (a broken node: --format reason names it, and the Slurm and "
                      "Kubernetes health checks drain the node)\n"
                    : "Drain: no (not a broken node: never drains a node)\n");
  // The templates' {0}, {1}, ... are facts of the machine the finding is about: say which.
  std::string where;
  for (std::size_t i = 0; i < spec->placeholders.size(); ++i) {
    if (!spec->placeholders[i].empty()) {
      where += fmt::format("  {{{}}} {}\n", i, spec->placeholders[i]);
    }
  }
  if (!where.empty()) {
    std::cout << "\nWhere:\n" << where;
  }
  return k_exit_ok;
}

/// The range of --timeout and --probe-timeout in seconds: 1e300 overflowed the milliseconds
/// (every probe killed at once) and 1e-300 was 0 ms.
constexpr double k_min_timeout_s = 0.01;
constexpr double k_max_timeout_s = 86400.0;

/// Seconds from `low` to `high` for --timeout, --probe-timeout, --duration and --wait-turn; the
/// message says the range. (CLI11's PositiveNumber names the largest double, which is no help to
/// anyone.)
CLI::Validator seconds_between(double low, double high) {
  return CLI::Validator(
      [low, high](std::string& text) -> std::string {
        char* end = nullptr;
        const double value = std::strtod(text.c_str(), &end);
        if (end != text.c_str() && *end == '\0' && std::isfinite(value) && value >= low &&
            value <= high) {
          return "";
        }
        return fmt::format("expected seconds from {} to {} (one day), got '{}'", low, high, text);
      },
      "SECONDS");
}

int command_matrix(const RunOptions& options, const MatrixOptions& matrix_options) {
  const compat::Matrix& matrix = compat::active_matrix();
  std::optional<compat::MachineQuery> probed;
  if (!matrix_options.driver || matrix_options.gpus.empty()) {
    probed = compat::query_from_snapshot(obtain_snapshot(options), matrix);
  }
  Expected<compat::MachineQuery> query = matrix_query(matrix_options, matrix, probed);
  if (!query) {
    throw UsageError{query.error().message};
  }
  std::cout << render_matrix(matrix, *query, options.json);
  std::cout.flush();
  return std::cout ? k_exit_ok : k_exit_internal;
}

/// The CLI11 side of --format and --output: which --output each --format follows is known only
/// from the order on the command line (pair_formats, after parsing).
struct OutputBinding {
  std::vector<std::string> format_values;
  CLI::Option* format = nullptr;
  CLI::Option* output = nullptr;
};

void add_output_options(CLI::App& app, OutputOptions& output, OutputBinding& binding) {
  binding.format =
      app.add_option("--format", binding.format_values,
                     "Report format: text (default), json, markdown, junit, prometheus, github "
                     "(Actions annotations), reason (one drain line, exit 1 when the node should "
                     "drain); for stdout, or for the --output just before it when that names no "
                     "format")
          ->allow_extra_args(false);
  binding.output =
      app.add_option("--output", output.outputs,
                     "Also write the report to a file: [FORMAT:]FILE, e.g. "
                     "json:report.json, report.xml (format from .txt/.json/.md/.xml/.prom) "
                     "or FILE --format F; repeatable; '-' is stdout")
          ->allow_extra_args(false);
  app.add_option(
      "--bundle", output.bundle,
      "Write a support bundle (.tar.gz): the report in every format (the one-line reason "
      "aside), the snapshot and the raw sources, redacted");
  app.add_flag("--redact", output.redact,
               "Redact text, JSON and JUnit output too (host, users, addresses, GPU ids)");
  app.add_flag("--no-redact", output.no_redact,
               "Do not redact the Markdown report and the bundle (they are by default)");
  app.add_flag("--json-compact", output.json_compact,
               "Write JSON on one line (log pipelines), wherever JSON is written");
}

/// Each --format with the --output it directly follows (docs/report-format.md).
void pair_formats(const CLI::App& app, const OutputBinding& binding, OutputOptions& output) {
  size_t outputs_seen = 0;
  size_t formats_seen = 0;
  std::optional<size_t> last_output;
  for (const CLI::Option* option : app.parse_order()) {
    if (option == binding.output) {
      last_output = outputs_seen++;
    } else if (option == binding.format && formats_seen < binding.format_values.size()) {
      output.formats.push_back(FormatOption{binding.format_values[formats_seen++], last_output});
      last_output.reset();
    }
  }
  // A config file's `format` is in no command line's order: it is stdout's (it was dropped).
  for (; formats_seen < binding.format_values.size(); ++formats_seen) {
    output.formats.push_back(FormatOption{binding.format_values[formats_seen], std::nullopt});
  }
}

void add_probe_options(CLI::App& app, RunOptions& options) {
  app.add_option("--from-snapshot", options.from_snapshot,
                 "Judge a saved snapshot (gpucheck snapshot) instead of probing this machine");
  app.add_option("--sysroot", options.sysroot,
                 "Read /proc, /sys, /dev and /etc under this directory (testing)")
      ->group("")
      ->envname("GPUCHECK_SYSROOT");
  app.add_option("--probe-timeout", options.probe_timeout_s,
                 "Seconds each probe child may run before it is killed (0.01 to 86400)")
      ->check(seconds_between(k_min_timeout_s, k_max_timeout_s));
  app.add_option("--python", options.python,
                 "Also examine this Python interpreter's frameworks (repeatable)")
      ->type_name("PATH");
  app.add_flag("--import", options.import_frameworks,
               "Import PyTorch/TensorFlow/JAX in a child interpreter and run one tiny GPU op");
}

/// `gpucheck --version`: the release, the commit, the compatibility data and the toolkits of the
/// embedded kernel images (docs/building.md).
std::string version_text() {
  std::string images;
  for (const char* toolkit : kernel_build::k_image_toolkits) {
    if (*toolkit != '\0') {
      images += fmt::format("{}CUDA {}", images.empty() ? "" : ", ", toolkit);
    }
  }
  return fmt::format("gpucheck {} (commit {})\ncompatibility data {}\nkernel images: {}",
                     build_info::k_version, build_info::k_git_commit,
                     compat::embedded_matrix().matrix_version,
                     images.empty() ? "none (built without nvcc)" : images);
}

} // namespace

namespace {
/// " (did you mean '--quick'?)" for the first word of the command line that is no option of
/// gpucheck or of its command (nor a command, where one may stand), or "".
std::string unknown_word_suggestion(const CLI::App& app, int argc, char** argv) {
  std::vector<std::string> commands;
  std::vector<std::string> flags;
  const auto add_flags = [&flags](const CLI::App& from) {
    for (const CLI::Option* option : from.get_options()) {
      for (const std::string& name : option->get_lnames()) {
        flags.push_back("--" + name);
      }
    }
  };
  add_flags(app);
  const CLI::App* command = nullptr;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    commands.push_back(sub->get_name());
  }
  for (int i = 1; i < argc; ++i) {
    const std::string_view word = argv[i] != nullptr ? argv[i] : "";
    if (word == "--") {
      break;
    }
    if (word.starts_with("--")) {
      const std::string name(word.substr(0, word.find('=')));
      if (std::find(flags.begin(), flags.end(), name) == flags.end()) {
        return did_you_mean_words(name, flags);
      }
    } else if (!word.starts_with('-') && command == nullptr && i == 1) {
      for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
        if (sub->get_name() == word) {
          command = sub;
          add_flags(*sub);
        }
      }
      if (command == nullptr) {
        return did_you_mean_words(word, commands);
      }
    }
  }
  return "";
}

/// "config file 'PATH', line 3: " when CLI11's error is about a value the config file gave
/// ("--expect-gpus: Value eight not in range 0 to 4096"), not the command line; else "".
std::string config_value_position(const CLI::App& app, std::string_view error, int argc,
                                  char** argv) {
  if (!error.starts_with("--") || error.find(':') == std::string_view::npos) {
    return "";
  }
  const std::string_view flag = error.substr(0, error.find(':'));
  for (int i = 1; i < argc; ++i) {
    const std::string_view word = argv[i] != nullptr ? argv[i] : "";
    if (word == flag ||
        (word.starts_with(flag) && word.size() > flag.size() && word[flag.size()] == '=')) {
      return ""; // the command line's value, which overrides the file's
    }
  }
  const std::optional<std::string> where = config_position(app, flag.substr(2));
  return where ? *where + ": " : "";
}
} // namespace

namespace {
/// A run's own options (gpucheck without a subcommand, or `report`).
void add_run_options(CLI::App& app, RunOptions& options, OutputBinding& output_binding,
                     std::string& color, std::optional<std::string>& matrix_file) {
  app.add_flag("--json", options.json, "Write the report as JSON: the same as --format json");
  add_output_options(app, options.output, output_binding);
  app.add_flag("--quick", options.quick,
               "Probes and judgement only: no work on the GPU (the same as --level quick)");
  app.add_option("--level", options.level_name,
                 "quick (no GPU work), standard (default: short verified GPU work, about a "
                 "second) or long (adds the memory test and the sustained burn)");
  app.add_option("--duration", options.duration_s,
                 "Seconds of each timed phase of --level long, per GPU (default 60; 1 to 86400)")
      ->check(seconds_between(1.0, k_max_timeout_s));
  app.add_flag("--force", options.force,
               "--level long also on GPUs that other processes use (it takes nearly all their "
               "free memory and full power), and NCCL's all-reduce beside them");
  CLI::Option* verbose =
      app.add_flag("-v,--verbose", options.verbose,
                   "Show details of passing checks too, and each skipped check with its reason");
  app.add_flag("-q,--quiet", options.quiet,
               "Text: only the problems (warn, fail, error) and the summary line")
      ->excludes(verbose);
  app.add_option("--only", options.only,
                 "Run only checks whose id starts with these words: gpu, gpu.ecc, gpu.pcie "
                 "(repeatable, comma-separated)");
  app.add_option("--skip", options.skip,
                 "Skip checks whose id starts with these words (repeatable, comma-separated)");
  app.add_option("--timeout", options.timeout_s,
                 "Seconds each GPU check may run (default 30; 0.01 to 86400)")
      ->check(seconds_between(k_min_timeout_s, k_max_timeout_s));
  app.add_option("--wait-turn", options.wait_turn_s,
                 "Seconds to wait for other gpucheck runs testing the same GPUs before those GPUs "
                 "are reported not tested (default 30 + 15 per GPU; 0 to 86400)")
      ->check(seconds_between(0.0, k_max_timeout_s));
  app.add_option("--color", color, "Colour: auto (TTY, NO_COLOR, CLICOLOR_FORCE), always, never")
      ->check(CLI::IsMember({"auto", "always", "never"}));
  add_probe_options(app, options);
  add_gate_options(app, options.gates);
  app.add_option("--matrix", matrix_file,
                 "Use this compatibility data file instead of the embedded one");
}

/// The subcommands, and what each reads.
struct Commands {
  CLI::App* snapshot = nullptr;
  std::string snapshot_output;
  CLI::App* report = nullptr;
  CLI::App* list = nullptr;
  CLI::App* explain = nullptr;
  std::string explain_code;
  CLI::App* matrix = nullptr;
  MatrixOptions matrix_options;
  CLI::App* merge = nullptr;
  MergeOptions merge_options;
};

void add_commands(CLI::App& app, RunOptions& options, Commands& c) {
  c.snapshot = app.add_subcommand("snapshot",
                                  "Write the probed facts as JSON (replay with --from-snapshot)");
  c.snapshot->add_option("-o,--output", c.snapshot_output, "File to write (default: stdout)");

  c.report = app.add_subcommand(
      "report", "Write the Markdown report for a ticket, redacted (to stdout or --output)");
  // The run's options (--from-snapshot, --output, --no-redact, --only, ...) work after `report`.
  c.report->fallthrough();

  c.list = app.add_subcommand("list", "List the checks in run order");
  c.explain = app.add_subcommand(
      "explain", "Explain a finding code or a check id (or 'all' to list the codes)");
  c.explain
      ->add_option("code", c.explain_code, "Finding code (cuda.init_failed) or check id (gpu.ecc)")
      ->required();
  c.matrix = app.add_subcommand(
      "matrix", "What this machine (or --driver/--gpu) can run: CUDA, PyTorch, TF, JAX, cuDNN");
  c.matrix->add_option("--driver", c.matrix_options.driver, "Driver version, e.g. 535.104.05");
  c.matrix->add_option("--gpu", c.matrix_options.gpus,
                       "GPU: sm_86, 8.6 or a name like H100 (repeatable, comma-separated)");
  c.matrix->add_flag("--json", options.json, "Write the answer as JSON");
  c.merge = add_merge_command(app, c.merge_options);
}

/// The command the line chose, run: a usage error is exit 2, an unexpected one internal.
int run_command(const RunOptions& options, Commands& c,
                const std::optional<std::string>& matrix_file) {
  try {
    if (matrix_file) {
      Expected<std::string> activated = activate_matrix_file(*matrix_file);
      if (!activated) {
        throw UsageError{activated.error().message};
      }
    }
    if (*c.merge) {
      return run_merge(c.merge_options, std::cout, std::cerr);
    }
    if (*c.matrix) {
      return command_matrix(options, c.matrix_options);
    }
    if (*c.snapshot) {
      return command_snapshot(options, c.snapshot_output);
    }
    if (*c.list) {
      return stdout_checked(command_list(options.json));
    }
    if (*c.explain) {
      return stdout_checked(command_explain(c.explain_code));
    }
    return command_run(options, c.report->parsed());
  } catch (const UsageError& e) {
    std::cerr << "gpucheck: " << e.message << "\n";
    if (e.help_hint) {
      std::cerr << "Run 'gpucheck --help' for usage.\n";
    }
    return k_exit_usage;
  } catch (const std::exception& e) {
    std::cerr << "gpucheck: internal error: " << e.what() << "\n";
    return k_exit_internal;
  }
}
} // namespace

int run_app(int argc, char** argv) {
  restrict_library_path();
  RunOptions options;
  options.argv.assign(argv + 1, argv + argc);

  CLI::App app{
      "gpucheck: does this machine's NVIDIA GPU stack really work? If not, why, and what to do."};
  app.name("gpucheck");
  app.set_version_flag("--version", &version_text);
  OutputBinding output_binding;
  std::string color = "auto";
  std::optional<std::string> matrix_file;
  add_run_options(app, options, output_binding, color, matrix_file);
  Commands commands;
  add_commands(app, options, commands);
  app.require_subcommand(0, 1);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return stdout_checked(app.exit(e));
  } catch (const CLI::CallForAllHelp& e) {
    return stdout_checked(app.exit(e));
  } catch (const CLI::CallForVersion& e) {
    return stdout_checked(app.exit(e));
  } catch (const CLI::ParseError& e) {
    std::cerr << "gpucheck: " << config_value_position(app, e.what(), argc, argv) << e.what()
              << unknown_word_suggestion(app, argc, argv) << "\n"
              << "Run 'gpucheck --help' for usage.\n";
    return k_exit_usage;
  }
  pair_formats(app, output_binding, options.output);
  if (Expected<Level> level = resolve_level(options); level) {
    options.level = *level;
    options.quick = options.level == Level::quick;
  } else {
    std::cerr << "gpucheck: " << level.error().message << "\n"
              << "Run 'gpucheck --help' for usage.\n";
    return k_exit_usage;
  }
  options.color = color == "always"  ? render::ColorChoice::always
                  : color == "never" ? render::ColorChoice::never
                                     : render::ColorChoice::automatic;

  return run_command(options, commands, matrix_file);
}

} // namespace gpucheck::cli
