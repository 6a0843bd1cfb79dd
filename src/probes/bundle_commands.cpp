#include "probes/bundle_commands.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <optional>
#include <string_view>

#include "probes/path_trust.hpp"
#include "probes/run_capture.hpp"
#include "process/child_process.hpp"

namespace gpucheck::probes {

namespace {

using namespace std::chrono_literals;

/// The first candidate that is an executable regular file, looked at on the host.
std::optional<std::string> first_existing(const std::vector<std::string>& candidates) {
  for (const std::string& path : candidates) {
    struct stat info {};
    if (::stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode) &&
        ::access(path.c_str(), X_OK) == 0) {
      return path;
    }
  }
  return std::nullopt;
}

/// "a, b or c".
std::string either(const std::vector<std::string>& items) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    out += i == 0 ? "" : (i + 1 == items.size() ? " or " : ", ");
    out += items[i];
  }
  return out;
}

/// `text` up to its last newline: a line cut by a kill or the cap is dropped, so no identifier
/// stands in it half-written where redaction would not recognise it.
std::string_view complete_lines(std::string_view text) {
  const size_t last = text.rfind('\n');
  return last == std::string_view::npos ? std::string_view{} : text.substr(0, last + 1);
}

std::string size_text(size_t bytes) {
  return bytes % (size_t{1} << 20) == 0 ? fmt::format("{} MiB", bytes >> 20)
                                        : fmt::format("{} bytes", bytes);
}

/// The note and the output of a program that did not simply exit 0.
std::string described(const std::string& command, const BundleCommand& spec,
                      const Capture& capture) {
  std::string why;
  std::string_view kept = complete_lines(capture.output);
  switch (capture.end) {
  case CaptureEnd::exited:
    if (capture.status == 0) {
      return capture.output;
    }
    why = fmt::format("exited with status {}", capture.status);
    kept = capture.output; // it ended by itself: its last line is whole
    break;
  case CaptureEnd::signalled:
    why = fmt::format("was ended by {}", process::signal_name(capture.status));
    break;
  case CaptureEnd::timed_out:
    why = fmt::format("did not finish within {:g} s and was killed{}",
                      static_cast<double>(spec.deadline.count()) / 1000.0,
                      capture.unreaped ? ", and had not ended a second later (stuck in the kernel)"
                                       : "");
    break;
  case CaptureEnd::flooded:
    why = fmt::format("printed more than {} and was stopped", size_text(spec.max_bytes));
    break;
  case CaptureEnd::interrupted:
    why = "was stopped or not started: gpucheck was interrupted";
    break;
  case CaptureEnd::refused:
    why = "was not run: the root policy refused it (docs/security.md)";
    break;
  case CaptureEnd::not_started:
    why = "could not be started";
    break;
  }
  if (kept.empty()) {
    return fmt::format("({} {}; it printed nothing)\n", command, why);
  }
  std::string text = fmt::format("({} {}; what it printed follows)\n", command, why);
  text += kept;
  if (!text.ends_with('\n')) {
    text += '\n';
  }
  return text;
}

std::string command_line(const std::string& program, const std::vector<std::string>& args) {
  std::string line = program;
  for (const std::string& arg : args) {
    line += ' ';
    line += arg;
  }
  return line;
}

/// The program's file name ("nvidia-smi").
std::string program_name(const BundleCommand& spec) {
  if (spec.candidates.empty()) {
    return "the program";
  }
  const std::string& path = spec.candidates.front();
  return path.substr(path.rfind('/') + 1);
}

} // namespace

std::vector<BundleCommand> bundle_commands() {
  return {
      BundleCommand{"nvidia-smi-q.txt",
                    {"/usr/bin/nvidia-smi", "/bin/nvidia-smi", "/usr/local/nvidia/bin/nvidia-smi"},
                    {"-q"},
                    20000ms},
      BundleCommand{"lspci-vvv.txt",
                    {"/usr/bin/lspci", "/usr/sbin/lspci", "/sbin/lspci", "/bin/lspci"},
                    {"-vvv"},
                    10000ms},
  };
}

std::vector<std::string> bundle_command_environment() {
  return {"LC_ALL=C", "PATH=/usr/sbin:/usr/bin:/sbin:/bin"};
}

std::map<std::string, std::string>
collect_command_outputs(const std::vector<BundleCommand>& commands) {
  std::map<std::string, std::string> outputs;
  for (const BundleCommand& spec : commands) {
    const std::optional<std::string> program = first_existing(spec.candidates);
    if (!program) {
      outputs[spec.file_name] =
          fmt::format("({} was not run: no executable at {})\n",
                      command_line(program_name(spec), spec.args), either(spec.candidates));
      continue;
    }
    const std::string command = command_line(*program, spec.args);
    // Said here with the reason; run_capture_detailed would refuse it too, without one.
    if (root_policy_applies()) {
      if (const std::optional<std::string> reason =
              untrusted_reason(Sysroot("/"), *program, ::geteuid())) {
        outputs[spec.file_name] =
            fmt::format("({} was not run as root: {}; another user could have put code there)\n",
                        command, *reason);
        continue;
      }
    }
    CaptureOptions options;
    options.deadline = spec.deadline;
    options.max_bytes = spec.max_bytes;
    options.kill_at_cap = true;
    options.with_stderr = true;
    options.environment = bundle_command_environment();
    std::vector<std::string> argv{*program};
    argv.insert(argv.end(), spec.args.begin(), spec.args.end());
    outputs[spec.file_name] = described(command, spec, run_capture_detailed(argv, options));
  }
  return outputs;
}

std::map<std::string, std::string>
command_outputs_not_run(const std::vector<BundleCommand>& commands) {
  std::map<std::string, std::string> outputs;
  for (const BundleCommand& spec : commands) {
    outputs[spec.file_name] = fmt::format(
        "({} was not run: gpucheck read a system tree (--sysroot), and the program would "
        "describe the machine gpucheck runs on instead)\n",
        command_line(program_name(spec), spec.args));
  }
  return outputs;
}

} // namespace gpucheck::probes
