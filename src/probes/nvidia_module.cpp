// probe_kernel_module: the NVIDIA kernel module, its device nodes and the NVIDIA PCI functions,
// read from /proc, /sys and /dev through the sysroot (no NVIDIA library is touched).
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>

#include "gpucheck/model/text.hpp"
#include "probes/collect.hpp"
#include "probes/module_policy.hpp"
#include "probes/nvidia_version.hpp"
#include "probes/paths.hpp"

namespace gpucheck::probes {

namespace {

constexpr std::string_view k_nvidia_vendor = "0x10de";

std::optional<int> read_int(const Sysroot& root, const std::string& path) {
  const std::optional<std::string> text = read_attribute(root, path);
  if (!text || text->empty()) {
    return std::nullopt;
  }
  int value = 0;
  const char* first = text->data();
  const char* last = first + text->size();
  const auto [ptr, ec] = std::from_chars(first, last, value);
  if (ec != std::errc() || ptr != last) {
    return std::nullopt;
  }
  return value;
}

std::optional<std::string> read_nonempty_line(const Sysroot& root, const std::string& path) {
  std::optional<std::string> text = read_attribute(root, path);
  if (!text || text->empty()) {
    return std::nullopt;
  }
  return text;
}

DeviceNode probe_node(const Sysroot& root, const std::string& path) {
  DeviceNode node;
  node.path = path;
  const PathStat st = stat_path(root, path);
  node.exists = st.exists;
  if (st.exists) {
    node.mode = st.mode;
    node.readable = can_access(root, path, R_OK);
    node.writable = can_access(root, path, W_OK);
  }
  return node;
}

bool is_gpu_minor_node(std::string_view name) {
  // "nvidia0".."nvidia255": the per-GPU nodes; not nvidiactl, nvidia-uvm, nvidia-modeset.
  if (!name.starts_with("nvidia") || name.size() == 6) {
    return false;
  }
  return std::all_of(name.begin() + 6, name.end(),
                     [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; });
}

std::vector<DeviceNode> probe_device_nodes(const Sysroot& root) {
  std::vector<DeviceNode> nodes;
  for (const char* fixed : {"/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools"}) {
    nodes.push_back(probe_node(root, fixed));
  }
  std::vector<std::string> minors;
  for (const std::string& name : root.list("/dev")) {
    if (is_gpu_minor_node(name)) {
      minors.push_back(name);
    }
  }
  // Numeric order: nvidia2 before nvidia10.
  std::sort(minors.begin(), minors.end(), [](const std::string& a, const std::string& b) {
    return a.size() != b.size() ? a.size() < b.size() : a < b;
  });
  for (const std::string& name : minors) {
    nodes.push_back(probe_node(root, "/dev/" + name));
  }
  // MIG capability nodes (/dev/nvidia-caps/nvidia-cap1, ...): root-only modes break MIG (F30).
  for (const std::string& name : root.list("/dev/nvidia-caps")) {
    nodes.push_back(probe_node(root, "/dev/nvidia-caps/" + name));
  }
  DeviceNode modeset = probe_node(root, "/dev/nvidia-modeset");
  if (modeset.exists) {
    // Only graphics needs it; reported when present so permissions can be judged.
    nodes.push_back(std::move(modeset));
  }
  return nodes;
}

/// "0000:00:02.0 0x8086" for a display controller of an integrated GPU's vendor (Intel, AMD):
/// beside an NVIDIA GPU, the machine has hybrid graphics (a laptop's Optimus/PRIME).
std::optional<std::string> integrated_gpu(const Sysroot& root, const std::string& bdf) {
  const std::string dir = "/sys/bus/pci/devices/" + bdf;
  const std::string vendor = lower(read_attribute(root, dir + "/vendor").value_or(""));
  if (vendor != "0x8086" && vendor != "0x1002") {
    return std::nullopt;
  }
  if (!lower(read_attribute(root, dir + "/class").value_or("")).starts_with("0x03")) {
    return std::nullopt;
  }
  return bdf + " " + vendor;
}

std::optional<PciDevice> probe_pci_function(const Sysroot& root, const std::string& bdf) {
  const std::string dir = "/sys/bus/pci/devices/" + bdf;
  const std::optional<std::string> vendor = read_attribute(root, dir + "/vendor");
  if (!vendor || lower(*vendor) != k_nvidia_vendor) {
    return std::nullopt;
  }
  const std::string class_code = lower(read_attribute(root, dir + "/class").value_or(""));
  // Display controllers only (VGA 0x0300, 3D 0x0302): the functions CUDA can use. Audio
  // (0x0403), USB-C and NVSwitch bridges (0x0680) are not GPUs.
  if (!class_code.starts_with("0x03")) {
    return std::nullopt;
  }
  PciDevice device;
  device.bdf = bdf;
  device.device_id = lower(read_attribute(root, dir + "/device").value_or(""));
  device.class_code = class_code;
  if (const std::optional<std::string> driver = root.read_link(dir + "/driver")) {
    device.driver = base_name(*driver);
  }
  device.current_link_speed = read_nonempty_line(root, dir + "/current_link_speed");
  device.current_link_width = read_int(root, dir + "/current_link_width");
  device.max_link_speed = read_nonempty_line(root, dir + "/max_link_speed");
  device.max_link_width = read_int(root, dir + "/max_link_width");
  device.numa_node = read_int(root, dir + "/numa_node");
  device.runtime_status = read_nonempty_line(root, dir + "/power/runtime_status");
  device.power_state = read_nonempty_line(root, dir + "/power_state");
  // Vendor and device id read 0xffff when a device no longer answers on the bus (the kernel's
  // sysfs vendor file is cached; config space is read from the device). 64 bytes are readable
  // without root.
  if (const std::optional<std::string> config = root.read(dir + "/config");
      config && config->size() >= 4) {
    device.config_all_ones = std::all_of(config->begin(), config->begin() + 4, [](char c) {
      return static_cast<unsigned char>(c) == 0xff;
    });
  }
  return device;
}

/// nvidia*.ko* files of one kernel release, from the directories where distributions, DKMS,
/// akmods and the .run installer put them (listed, not walked).
std::vector<std::string> module_files_for(const Sysroot& root, const std::string& release) {
  const std::string base = "/lib/modules/" + release;
  std::vector<std::string> dirs;
  for (const char* sub :
       {"updates/dkms", "updates", "extra", "extra/nvidia", "kernel/drivers/video"}) {
    dirs.push_back(join_path(base, sub));
  }
  // Ubuntu's precompiled linux-modules-nvidia-*: kernel/nvidia-580srv/.
  for (const std::string& name : list_resolved(root, base + "/kernel")) {
    if (name.starts_with("nvidia")) {
      dirs.push_back(base + "/kernel/" + name);
    }
  }
  std::vector<std::string> files;
  for (const std::string& dir : dirs) {
    for (const std::string& name : list_resolved(root, dir)) {
      if (name.starts_with("nvidia") && name.find(".ko") != std::string::npos) {
        files.push_back(join_path(dir, name));
      }
    }
  }
  return files;
}

bool has_nvidia_module(const std::vector<std::string>& files) {
  return std::any_of(files.begin(), files.end(),
                     [](const std::string& f) { return base_name(f).starts_with("nvidia.ko"); });
}

void probe_module_policy(const Sysroot& root, KernelModuleInfo& info) {
  info.running_kernel = read_attribute(root, "/proc/sys/kernel/osrelease").value_or("");
  if (info.running_kernel.empty() && root.root() == "/") {
    struct utsname uts {};
    if (::uname(&uts) == 0) {
      info.running_kernel = uts.release;
    }
  }
  if (!info.running_kernel.empty()) {
    info.module_files = module_files_for(root, info.running_kernel);
  }
  for (const std::string& release : list_resolved(root, "/lib/modules")) {
    if (release != info.running_kernel && has_nvidia_module(module_files_for(root, release))) {
      info.other_kernels_with_module.push_back(release);
    }
  }
  if (const std::optional<std::string> efivar =
          root.read("/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c")) {
    info.secure_boot = parse_secure_boot_efivar(*efivar);
  }
  info.lockdown =
      parse_lockdown(read_attribute(root, "/sys/kernel/security/lockdown").value_or(""));
  for (const char* dir :
       {"/etc/modprobe.d", "/lib/modprobe.d", "/usr/lib/modprobe.d", "/run/modprobe.d"}) {
    for (const std::string& name : list_resolved(root, dir)) {
      if (!name.ends_with(".conf")) {
        continue;
      }
      const std::string file = join_path(dir, name);
      if (const std::optional<std::string> text = read_resolved(root, file)) {
        for (const std::string& line : parse_modprobe_blacklist(*text)) {
          info.modprobe_blacklist.push_back(file + ": " + line);
        }
      }
    }
  }
}

} // namespace

KernelModuleInfo probe_kernel_module(const Sysroot& root) {
  KernelModuleInfo info;
  const std::optional<std::string> proc = root.read("/proc/driver/nvidia/version");
  info.proc_version_present = proc.has_value() || root.exists("/proc/driver/nvidia/version");
  if (proc) {
    info.version_text = proc->substr(0, proc->find('\n'));
    if (const std::optional<NvrmVersion> parsed = parse_nvrm_version(*proc)) {
      info.version = parsed->version;
      info.flavor = parsed->flavor;
    }
  }
  if (!info.version) {
    // sysfs carries the version (not the flavor) even where procfs is hidden.
    if (std::optional<std::string> sys = read_nonempty_line(root, "/sys/module/nvidia/version");
        sys && looks_like_driver_version(*sys)) {
      info.version = std::move(sys);
    }
  }
  info.nvidia_loaded = root.is_directory("/sys/module/nvidia");
  info.uvm_loaded = root.is_directory("/sys/module/nvidia_uvm");
  info.nouveau_loaded = root.is_directory("/sys/module/nouveau");
  info.device_nodes = probe_device_nodes(root);
  for (const std::string& bdf : root.list("/sys/bus/pci/devices")) {
    if (std::optional<PciDevice> device = probe_pci_function(root, bdf)) {
      info.pci_devices.push_back(std::move(*device));
    } else if (std::optional<std::string> integrated = integrated_gpu(root, bdf)) {
      info.integrated_gpus.push_back(std::move(*integrated));
    }
  }
  // Hybrid graphics (F42): the PRIME profile and bbswitch say whether the NVIDIA GPU is off.
  info.prime_profile = read_nonempty_line(root, "/etc/prime-discrete");
  info.bbswitch = read_nonempty_line(root, "/proc/acpi/bbswitch");
  probe_module_policy(root, info);
  return info;
}

} // namespace gpucheck::probes
