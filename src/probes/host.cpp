// probe_host: who and what the machine is, from /proc and /etc through the sysroot. Only a
// probe of the real root ("/") asks the running process (uname, gnu_get_libc_version), so a
// fixture tree never mixes in the test machine's facts.
#include <gnu/libc-version.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "probes/collect.hpp"
#include "probes/host_text.hpp"

namespace gpucheck::probes {

HostInfo probe_host(const Sysroot& root) {
  HostInfo info;
  const bool live = root.root() == "/";
  struct utsname uts {};
  const bool have_uts = live && ::uname(&uts) == 0;

  info.hostname = root.read_line("/proc/sys/kernel/hostname").value_or("");
  if (info.hostname.empty()) {
    info.hostname = root.read_line("/etc/hostname").value_or("");
  }
  if (info.hostname.empty() && have_uts) {
    info.hostname = uts.nodename;
  }

  for (const char* file : {"/etc/os-release", "/usr/lib/os-release"}) {
    if (const std::optional<std::string> text = root.read(file)) {
      info.os = parse_os_release_pretty_name(*text);
      break;
    }
  }

  info.kernel = root.read_line("/proc/sys/kernel/osrelease").value_or("");
  if (info.kernel.empty() && have_uts) {
    info.kernel = uts.release;
  }
  info.arch = root.read_line("/proc/sys/kernel/arch").value_or("");
  if (info.arch.empty() && have_uts) {
    info.arch = uts.machine;
  }
  if (live) {
    info.glibc = ::gnu_get_libc_version();
  }

  if (const std::optional<std::string> cpuinfo = root.read("/proc/cpuinfo")) {
    const CpuSummary cpu = parse_cpuinfo(*cpuinfo);
    info.cpu_model = cpu.model;
    info.cpu_count = cpu.count;
  }
  if (info.cpu_count == 0 && live) {
    info.cpu_count = static_cast<int>(::sysconf(_SC_NPROCESSORS_ONLN));
  }
  if (const std::optional<std::string> meminfo = root.read("/proc/meminfo")) {
    info.memory_total_bytes = parse_meminfo_total_bytes(*meminfo);
  }
  return info;
}

} // namespace gpucheck::probes
