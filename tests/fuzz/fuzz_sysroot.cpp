// The local facts the parent reads from /proc, /sys, /dev and /etc (src/probes/): the driver's
// version banner, the kernel log, cgroups and mount tables, os-release, cpuinfo, meminfo, PCI
// link attributes, modprobe configuration, lockdown and Secure Boot, dpkg's status, the loader
// cache, a toolkit's version files and /proc/PID/comm, each filled from one section of the input
// in a fixture tree. Any bytes: the probes return, and the snapshot they make is written as
// JSON and reads back. (What the checks and renderers make of any snapshot is fuzz_snapshot's.)
#include <filesystem>

#include "fuzz_support.hpp"
#include "probes/collect.hpp"
#include "probes/kernel_log.hpp"
#include "probes/ldconfig_cache.hpp"
#include "probes/toolkit_version.hpp"

namespace {

namespace fs = std::filesystem;

constexpr const char* k_gpu = "/sys/bus/pci/devices/0000:3b:00.0";

// The files, in the order of the input's sections. The PCI device's attributes share one
// section, a line each.
constexpr const char* k_files[] = {
    "/proc/driver/nvidia/version",
    "/sys/module/nvidia/version",
    "/proc/1/cgroup",
    "/proc/self/mountinfo",
    "/proc/self/mounts",
    "/etc/os-release",
    "/proc/cpuinfo",
    "/proc/meminfo",
    "/dev/kmsg",
    "/etc/modprobe.d/fuzz.conf",
    "/sys/kernel/security/lockdown",
    "/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c",
    "/var/lib/dpkg/status",
    "/etc/ld.so.cache.txt",
    "/usr/local/cuda/version.json",
    "/usr/local/cuda/version.txt",
    "/proc/4242/comm",
    "/proc/uptime",
    "/run/systemd/container",
};
constexpr const char* k_pci_attributes[] = {
    "current_link_speed", "current_link_width", "max_link_speed", "max_link_width",
    "numa_node",          "power_state",        "device"};

const std::string& tree() {
  static const std::string root = [] {
    const std::string dir = gpucheck::fuzz::scratch_directory() + "/sysroot";
    for (const char* file : k_files) {
      fs::create_directories(fs::path(dir + file).parent_path());
    }
    fs::create_directories(dir + k_gpu);
    fs::create_directories(dir + "/lib/modules/6.8.0-fuzz/updates/dkms");
    fs::create_directories(dir + "/proc/sys/kernel");
    gpucheck::fuzz::write_file(dir + "/proc/sys/kernel/osrelease", "6.8.0-fuzz\n");
    gpucheck::fuzz::write_file(dir + "/lib/modules/6.8.0-fuzz/updates/dkms/nvidia.ko", "");
    gpucheck::fuzz::write_file(dir + k_gpu + "/vendor", "0x10de\n");
    gpucheck::fuzz::write_file(dir + k_gpu + "/class", "0x030200\n");
    return dir;
  }();
  return root;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gpucheck;
  const std::string& dir = tree();
  const std::vector<std::string_view> parts =
      fuzz::sections(fuzz::as_text(data, size), std::size(k_files) + 2);
  for (size_t i = 0; i < std::size(k_files); ++i) {
    fuzz::write_file(dir + k_files[i], parts[i]);
  }
  std::string_view pci = parts[std::size(k_files)];
  for (const char* attribute : k_pci_attributes) {
    const size_t newline = pci.find('\n');
    fuzz::write_file(dir + k_gpu + "/" + attribute, pci.substr(0, newline));
    pci.remove_prefix(newline == std::string_view::npos ? pci.size() : newline + 1);
  }
  const probes::Sysroot root(dir);
  const probes::Environment env({{"CUDA_VISIBLE_DEVICES", std::string(parts.back())},
                                 {"LD_LIBRARY_PATH", std::string(parts.back())}});

  SystemSnapshot snapshot; // only what these probes fill: the round trip is of their output
  snapshot.kernel_module = probes::probe_kernel_module(root);
  snapshot.environment = probes::probe_environment(root, env);
  snapshot.host = probes::probe_host(root);
  snapshot.kernel_log = probes::read_kernel_log(root, {"0000:3b:00.0"});
  snapshot.fabric_manager_running = probes::fabric_manager_running(root);
  (void)probes::read_loader_cache(root);
  (void)probes::read_toolkit_version(root, "/usr/local/cuda");
  fuzz::check_snapshot_round_trip(snapshot);
  return 0;
}
