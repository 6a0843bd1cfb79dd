#include "probes/raw_sources.hpp"

#include <chrono>
#include <optional>
#include <string_view>

#include "probes/bundle_commands.hpp"
#include "probes/paths.hpp"
#include "probes/run_capture.hpp"

namespace gpucheck::probes {

namespace {

using namespace std::chrono_literals;

constexpr std::chrono::milliseconds k_command_deadline = 3000ms;

/// Libraries of the driver, the CUDA toolkit, cuDNN, NCCL and TensorRT.
constexpr std::string_view k_nvidia_library_prefixes[] = {
    "libcuda.",     "libcudart",    "libcudnn",      "libcublas", "libcufft",   "libcurand",
    "libcusparse",  "libcusolver",  "libcupti",      "libcufile", "libnvidia-", "libnvrtc",
    "libnvJitLink", "libnvjitlink", "libnvToolsExt", "libnvblas", "libnvjpeg",  "libnccl",
    "libnvcuvid",   "libnvoptix",   "libnvinfer"};

/// Each line of `text` (with its '\n') for which `keep` says yes.
template <typename Keep> std::string filter_lines(std::string_view text, Keep keep) {
  std::string out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    end = end == std::string_view::npos ? text.size() : end;
    const std::string_view line = text.substr(start, end - start);
    if (keep(line)) {
      out += line;
      out += '\n';
    }
    start = end + 1;
  }
  return out;
}

bool contains_any(std::string_view line, std::initializer_list<std::string_view> needles) {
  for (const std::string_view needle : needles) {
    if (line.find(needle) != std::string_view::npos) {
      return true;
    }
  }
  return false;
}

/// The first of these programs that exists, run with `argument`.
std::optional<std::string>
run_first(const Sysroot& root, std::initializer_list<const char*> programs, const char* argument) {
  for (const char* program : programs) {
    if (root.exists(program)) {
      return run_capture({program, argument}, k_command_deadline);
    }
  }
  return std::nullopt;
}

} // namespace

std::string nvidia_kernel_log_lines(std::string_view log) {
  return filter_lines(log, [](std::string_view line) {
    return contains_any(line, {"NVRM", "Xid", "nvidia", "NVIDIA", "nouveau"});
  });
}

std::string nvidia_ldconfig_lines(std::string_view ldconfig_output) {
  return filter_lines(ldconfig_output, [](std::string_view line) {
    // Lines are "\tNAME (FLAGS) => PATH": match the name's start.
    const size_t start = line.find_first_not_of(" \t");
    const std::string_view name = start == std::string_view::npos ? "" : line.substr(start);
    for (const std::string_view prefix : k_nvidia_library_prefixes) {
      if (name.starts_with(prefix)) {
        return true;
      }
    }
    return false;
  });
}

std::map<std::string, std::string> collect_raw_sources(const Sysroot& root) {
  const bool live = root.root() == "/";
  std::map<std::string, std::string> sources;

  // Links are resolved inside the sysroot (read_resolved): an absolute link in a fixture or a
  // container root must not copy a host file such as /etc/shadow into the bundle.
  sources["proc-driver-nvidia-version.txt"] =
      read_resolved(root, "/proc/driver/nvidia/version")
          .value_or("(/proc/driver/nvidia/version is absent or unreadable: no NVIDIA kernel "
                    "module loaded)\n");

  const std::optional<std::string> log =
      live ? run_first(root, {"/usr/bin/dmesg", "/bin/dmesg"}, "--kernel")
           : read_resolved(root, "/var/log/dmesg");
  if (!log) {
    sources["dmesg-nvidia.txt"] =
        "(the kernel log could not be read: dmesg needs root, or kernel.dmesg_restrict=0)\n";
  } else {
    const std::string lines = nvidia_kernel_log_lines(*log);
    sources["dmesg-nvidia.txt"] =
        lines.empty() ? "(the kernel log has no NVRM, Xid or nvidia lines)\n" : lines;
  }

  const std::optional<std::string> cache =
      live ? run_first(root, {"/sbin/ldconfig", "/usr/sbin/ldconfig", "/usr/bin/ldconfig"}, "-p")
           : read_resolved(root, "/etc/ld.so.cache.txt");
  if (!cache) {
    sources["ldconfig-nvidia.txt"] = "(ldconfig -p could not be run)\n";
  } else {
    const std::string lines = nvidia_ldconfig_lines(*cache);
    sources["ldconfig-nvidia.txt"] =
        lines.empty() ? "(the loader cache names no NVIDIA library)\n" : lines;
  }

  const std::vector<BundleCommand> commands = bundle_commands();
  sources.merge(live ? collect_command_outputs(commands) : command_outputs_not_run(commands));
  return sources;
}

} // namespace gpucheck::probes
