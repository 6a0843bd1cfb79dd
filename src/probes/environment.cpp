// probe_environment: CUDA-relevant variables, container and WSL detection, read through the
// sysroot and the captured environment.
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <set>
#include <span>
#include <sstream>
#include <sys/statvfs.h>
#include <unistd.h>

#include "gpucheck/model/text.hpp"
#include "probes/collect.hpp"
#include "probes/paths.hpp"
#include "probes/risky_env.hpp"

namespace gpucheck::probes {

namespace {

struct Marker {
  const char* needle;
  const char* kind;
};

/// Markers in /proc/1/cgroup: a host's init sits in "/" or "/init.scope", a container's in the
/// runtime's slice.
constexpr Marker k_cgroup_markers[] = {
    {"kubepods", "kubernetes"},
    {"libpod", "podman"},
    {"/docker/", "docker"},
    {"docker-", "docker"},
    {"cri-containerd", "containerd"},
    {"/containerd/", "containerd"},
    {"/lxc/", "lxc"},
    {"lxc.payload", "lxc"},
};

/// Markers in the source of the /etc/hostname, /etc/hosts and /etc/resolv.conf bind mounts,
/// which every runtime creates (cgroup v2 hides the cgroup path, these still tell).
constexpr Marker k_mount_markers[] = {
    {"kubelet/pods", "kubernetes"},
    {"containers/storage", "podman"},
    {"/docker/containers/", "docker"},
    {"io.containerd", "containerd"},
};

void scan_markers(std::string_view text, std::span<const Marker> markers, const std::string& source,
                  std::set<std::string>& kinds, std::vector<std::string>& evidence) {
  std::set<std::string_view> named; // one evidence line per kind and source
  for (const Marker& marker : markers) {
    if (text.find(marker.needle) != std::string_view::npos && named.insert(marker.kind).second) {
      kinds.insert(marker.kind);
      evidence.push_back(source + " mentions " + marker.needle);
    }
  }
}

/// The mount roots (field 4) of the runtime-managed /etc files in a mountinfo text.
std::string etc_bind_mount_sources(const std::string& mountinfo) {
  std::string sources;
  std::istringstream lines(mountinfo);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::string id, parent, devices, mount_root, mount_point;
    if (!(fields >> id >> parent >> devices >> mount_root >> mount_point)) {
      continue;
    }
    if (mount_point == "/etc/hostname" || mount_point == "/etc/hosts" ||
        mount_point == "/etc/resolv.conf") {
      sources += mount_root;
      sources += '\n';
    }
  }
  return sources;
}

/// Whether a mount point is an NVIDIA driver file the container toolkit bind-mounts.
bool is_nvidia_mount_point(std::string_view mount_point) {
  const size_t slash = mount_point.rfind('/');
  const std::string_view name =
      slash == std::string_view::npos ? mount_point : mount_point.substr(slash + 1);
  for (const char* prefix : {"libcuda.so", "libnvidia-", "libnvcuvid.so", "nvidia-smi",
                             "nvidia-persistenced", "nvidia-cuda-mps"}) {
    if (name.starts_with(prefix)) {
      return true;
    }
  }
  return mount_point.starts_with("/dev/nvidia") || mount_point.starts_with("/proc/driver/nvidia");
}

/// Mount points (field 5) of NVIDIA driver files in a mountinfo text, in order.
std::vector<std::string> nvidia_mount_points(const std::string& mountinfo) {
  std::vector<std::string> points;
  std::istringstream lines(mountinfo);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::string id, parent, devices, mount_root, mount_point;
    if ((fields >> id >> parent >> devices >> mount_root >> mount_point) &&
        is_nvidia_mount_point(mount_point)) {
      points.push_back(mount_point);
    }
  }
  return points;
}

/// The kind named by systemd's $container / /run/systemd/container convention.
std::string container_kind_from_name(const std::string& name) {
  const std::string n = lower(name);
  for (const char* kind : {"docker", "podman", "lxc", "containerd"}) {
    if (n.find(kind) != std::string::npos) {
      return kind;
    }
  }
  return "other"; // systemd-nspawn, rkt, wsl, ...
}

ContainerInfo detect_container(const Sysroot& root, const Environment& env) {
  ContainerInfo info;
  std::set<std::string> kinds;
  if (root.exists("/.dockerenv")) {
    kinds.insert("docker");
    info.evidence.emplace_back("/.dockerenv exists");
  }
  if (root.exists("/run/.containerenv")) {
    kinds.insert("podman");
    info.evidence.emplace_back("/run/.containerenv exists");
  }
  if (env.get("KUBERNETES_SERVICE_HOST")) {
    kinds.insert("kubernetes");
    info.evidence.emplace_back("KUBERNETES_SERVICE_HOST is set");
  }
  if (const std::optional<std::string> name = env.get("container"); name && !name->empty()) {
    kinds.insert(container_kind_from_name(*name));
    info.evidence.push_back("$container is " + *name);
  }
  if (const std::optional<std::string> name = root.read_line("/run/systemd/container");
      name && !name->empty()) {
    kinds.insert(container_kind_from_name(*name));
    info.evidence.push_back("/run/systemd/container says " + *name);
  }
  if (const std::optional<std::string> cgroup = root.read("/proc/1/cgroup")) {
    scan_markers(*cgroup, k_cgroup_markers, "/proc/1/cgroup", kinds, info.evidence);
  }
  if (const std::optional<std::string> mounts = root.read("/proc/self/mountinfo")) {
    scan_markers(etc_bind_mount_sources(*mounts), k_mount_markers, "/proc/self/mountinfo", kinds,
                 info.evidence);
    info.nvidia_mounts = nvidia_mount_points(*mounts);
  }
  // The orchestrator first (kubernetes runs on containerd or docker), then the runtimes.
  for (const char* kind : {"kubernetes", "podman", "docker", "containerd", "lxc", "other"}) {
    if (kinds.contains(kind)) {
      info.kind = kind;
      break;
    }
  }
  return info;
}

bool detect_wsl(const Sysroot& root) {
  for (const char* file : {"/proc/sys/kernel/osrelease", "/proc/version"}) {
    if (const std::optional<std::string> text = root.read_line(file)) {
      const std::string l = lower(*text);
      if (l.find("microsoft") != std::string::npos || l.find("wsl") != std::string::npos) {
        return true;
      }
    }
  }
  // /dev/dxg is the WSL2 GPU paravirtualisation device; it exists nowhere else.
  return root.exists("/dev/dxg");
}

/// Whether an installed package is a Linux NVIDIA driver, or a CUDA meta-package that pulls one
/// in (NVIDIA's WSL guide: install cuda-toolkit-X-Y, never cuda, cuda-X-Y or cuda-drivers).
bool is_driver_package(std::string_view name) {
  auto digits_and_dashes = [](std::string_view rest) {
    return !rest.empty() && std::all_of(rest.begin(), rest.end(), [](char c) {
      return std::isdigit(static_cast<unsigned char>(c)) != 0 || c == '-';
    });
  };
  if (name == "cuda" || name == "cuda-drivers" || name.starts_with("cuda-drivers-") ||
      name.starts_with("nvidia-driver-") || name.starts_with("libnvidia-compute-") ||
      name.starts_with("nvidia-dkms-") || name.starts_with("nvidia-kernel-open-") ||
      name.starts_with("nvidia-kernel-source-") || name == "nvidia-driver" || name == "libcuda1" ||
      name == "nvidia-open") {
    return true;
  }
  // cuda-12-8 and cuda-runtime-12-8 depend on cuda-drivers; cuda-toolkit-12-8 does not.
  return (name.starts_with("cuda-") && digits_and_dashes(name.substr(5))) ||
         (name.starts_with("cuda-runtime-") && digits_and_dashes(name.substr(13)));
}

/// Installed driver packages from dpkg's status file, read line by line with a cap (it is
/// several MiB on a desktop; only the package name and status lines matter).
std::vector<std::string> installed_driver_packages(const Sysroot& root) {
  std::vector<std::string> packages;
  // Resolved inside the root: a link in a tree never reads the host's file.
  std::ifstream in(root.host_resolved("/var/lib/dpkg/status").value_or(std::string()));
  constexpr size_t k_max_bytes = 64U << 20U;
  size_t read = 0;
  std::string line;
  std::string package;
  bool installed = false;
  auto flush = [&] {
    if (installed && is_driver_package(package)) {
      packages.push_back(package);
    }
    package.clear();
    installed = false;
  };
  while (read < k_max_bytes && std::getline(in, line)) {
    read += line.size() + 1;
    if (line.empty()) {
      flush();
    } else if (line.starts_with("Package: ")) {
      package = line.substr(9);
    } else if (line.starts_with("Status: ")) {
      installed = line.ends_with(" installed");
    }
  }
  flush();
  std::sort(packages.begin(), packages.end());
  packages.erase(std::unique(packages.begin(), packages.end()), packages.end());
  return packages;
}

WslInfo probe_wsl(const Sysroot& root) {
  WslInfo info;
  info.kernel_release = root.read_line("/proc/sys/kernel/osrelease").value_or("");
  info.dxg = root.exists("/dev/dxg");
  for (const char* name : {"libcuda.so", "libcuda.so.1", "libcuda.so.1.1", "libnvidia-ml.so.1"}) {
    WslFile file;
    file.path = std::string("/usr/lib/wsl/lib/") + name;
    const PathStat stat = stat_path(root, file.path);
    file.exists = stat.exists;
    file.is_symlink = stat.is_symlink;
    info.files.push_back(std::move(file));
  }
  info.driver_packages = installed_driver_packages(root);
  return info;
}

/// The size= option of the tmpfs mounted at /dev/shm in a mounts text ("65536k"), in bytes.
std::optional<uint64_t> shm_size_from_mounts(const std::string& mounts) {
  std::istringstream lines(mounts);
  std::string line;
  std::optional<uint64_t> size;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::string device, mount_point, type, options;
    if (!(fields >> device >> mount_point >> type >> options) || mount_point != "/dev/shm") {
      continue;
    }
    size.reset(); // the last mount on /dev/shm is the one in effect
    std::istringstream opts(options);
    std::string option;
    while (std::getline(opts, option, ',')) {
      if (!option.starts_with("size=")) {
        continue;
      }
      char* end = nullptr;
      const unsigned long long value = std::strtoull(option.c_str() + 5, &end, 10);
      uint64_t unit = 1;
      switch (end != nullptr ? *end : '\0') {
      case 'k':
      case 'K':
        unit = 1ULL << 10U;
        break;
      case 'm':
      case 'M':
        unit = 1ULL << 20U;
        break;
      case 'g':
      case 'G':
        unit = 1ULL << 30U;
        break;
      default:
        break;
      }
      size = static_cast<uint64_t>(value) * unit;
    }
  }
  return size;
}

ShmInfo probe_shm(const Sysroot& root) {
  ShmInfo info;
  if (!root.is_directory("/dev/shm")) {
    info.source = "absent";
    return info;
  }
  info.writable = can_access(root, "/dev/shm", W_OK);
  // statvfs tells the truth on the real root; under a fixture root it would describe the build
  // machine's file system, so there the tmpfs mount's size= option is read instead.
  struct statvfs vfs {};
  if (root.root() == "/" && ::statvfs("/dev/shm", &vfs) == 0) {
    info.total_bytes = static_cast<uint64_t>(vfs.f_blocks) * vfs.f_frsize;
    info.free_bytes = static_cast<uint64_t>(vfs.f_bavail) * vfs.f_frsize;
    info.source = "statvfs";
  } else if (const std::optional<std::string> mounts = root.read("/proc/self/mounts")) {
    if (const std::optional<uint64_t> size = shm_size_from_mounts(*mounts)) {
      info.total_bytes = size;
      info.source = "mounts";
    }
  }
  return info;
}

} // namespace

EnvironmentInfo probe_environment(const Sysroot& root, const Environment& env) {
  EnvironmentInfo info;
  for (const auto& [name, value] : env.all()) {
    if (is_captured_env_var(name)) {
      info.variables.emplace(name, value);
    }
  }
  // CUDA_MPS_TOKEN and its kind stay out of every output, the JSON and the snapshot included.
  hide_secret_variables(info.variables);
  info.container = detect_container(root, env);
  info.wsl = detect_wsl(root);
  if (info.wsl) {
    info.wsl_details = probe_wsl(root);
  }
  info.shm = probe_shm(root);
  return info;
}

} // namespace gpucheck::probes
