#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "gpucheck/model/json_io.hpp"
#include "probes/collect.hpp"
#include "support/fixture_tree.hpp"

namespace gpucheck::probes {
namespace {

using gpucheck::testing::FixtureTree;

void add_pci(FixtureTree& tree, const std::string& bdf, const std::string& vendor,
             const std::string& cls, const std::string& driver) {
  const std::string dir = "/sys/bus/pci/devices/" + bdf;
  tree.file(dir + "/vendor", vendor + "\n")
      .file(dir + "/device", "0x2335\n")
      .file(dir + "/class", cls + "\n")
      .file(dir + "/current_link_speed", "16.0 GT/s PCIe\n")
      .file(dir + "/current_link_width", "8\n")
      .file(dir + "/max_link_speed", "32.0 GT/s PCIe\n")
      .file(dir + "/max_link_width", "16\n")
      .file(dir + "/numa_node", "1\n");
  if (!driver.empty()) {
    tree.symlink(dir + "/driver", "../../../bus/pci/drivers/" + driver);
  }
}

TEST(KernelModuleProbe, EmptyRootGivesNothingAndDoesNotThrow) {
  FixtureTree tree;
  const KernelModuleInfo info = probe_kernel_module(Sysroot(tree.root()));
  EXPECT_FALSE(info.proc_version_present);
  EXPECT_FALSE(info.version);
  EXPECT_FALSE(info.flavor);
  EXPECT_FALSE(info.nvidia_loaded);
  EXPECT_TRUE(info.pci_devices.empty());
  ASSERT_EQ(info.device_nodes.size(), 3U);
  EXPECT_EQ(info.device_nodes[0].path, "/dev/nvidiactl");
  EXPECT_FALSE(info.device_nodes[0].exists);
  EXPECT_FALSE(info.device_nodes[0].mode);
}

TEST(KernelModuleProbe, ReadsProcVersionModulesNodesAndPci) {
  FixtureTree tree;
  tree.file("/proc/driver/nvidia/version",
            "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build  "
            "(dvs-builder@U22)  Wed Jan  7 2026\nGCC version:  gcc version 12.3.0\n")
      .dir("/sys/module/nvidia")
      .dir("/sys/module/nvidia_uvm")
      .file("/dev/nvidiactl", "", 0666)
      .file("/dev/nvidia-uvm", "", 0660)
      .file("/dev/nvidia10", "", 0666)
      .file("/dev/nvidia2", "", 0600)
      .file("/dev/nvidia-modeset", "", 0666)
      .file("/dev/nvidia-caps-imex", "", 0666)
      .file("/dev/nvidia-caps/nvidia-cap1", "", 0400);
  add_pci(tree, "0000:3b:00.0", "0x10de", "0x030200", "nvidia");
  add_pci(tree, "0000:3b:00.1", "0x10de", "0x040300", "snd_hda_intel"); // audio function
  add_pci(tree, "0000:00:02.0", "0x8086", "0x030000", "i915");          // iGPU
  add_pci(tree, "0000:af:00.0", "0x10DE", "0x030000", "");              // unbound

  const KernelModuleInfo info = probe_kernel_module(Sysroot(tree.root()));
  EXPECT_TRUE(info.proc_version_present);
  EXPECT_EQ(info.version, "580.159.04");
  EXPECT_EQ(info.flavor, "open");
  EXPECT_EQ(info.version_text,
            "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build  "
            "(dvs-builder@U22)  Wed Jan  7 2026");
  EXPECT_TRUE(info.nvidia_loaded);
  EXPECT_TRUE(info.uvm_loaded);
  EXPECT_FALSE(info.nouveau_loaded);

  std::vector<std::string> paths;
  for (const DeviceNode& node : info.device_nodes) {
    paths.push_back(node.path);
  }
  EXPECT_EQ(paths, (std::vector<std::string>{
                       "/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools", "/dev/nvidia2",
                       "/dev/nvidia10", "/dev/nvidia-caps/nvidia-cap1", "/dev/nvidia-modeset"}));
  EXPECT_TRUE(info.device_nodes[0].exists);
  EXPECT_EQ(info.device_nodes[0].mode, 0666U);
  EXPECT_TRUE(info.device_nodes[0].readable);
  EXPECT_TRUE(info.device_nodes[0].writable);
  EXPECT_EQ(info.device_nodes[1].mode, 0660U);
  EXPECT_FALSE(info.device_nodes[2].exists);
  EXPECT_EQ(info.device_nodes[3].mode, 0600U);
  EXPECT_EQ(info.device_nodes[5].mode, 0400U);

  ASSERT_EQ(info.pci_devices.size(), 2U);
  const PciDevice& gpu = info.pci_devices[0];
  EXPECT_EQ(gpu.bdf, "0000:3b:00.0");
  EXPECT_EQ(gpu.device_id, "0x2335");
  EXPECT_EQ(gpu.class_code, "0x030200");
  EXPECT_EQ(gpu.driver, "nvidia");
  EXPECT_EQ(gpu.current_link_speed, "16.0 GT/s PCIe");
  EXPECT_EQ(gpu.current_link_width, 8);
  EXPECT_EQ(gpu.max_link_speed, "32.0 GT/s PCIe");
  EXPECT_EQ(gpu.max_link_width, 16);
  EXPECT_EQ(gpu.numa_node, 1);
  EXPECT_EQ(info.pci_devices[1].bdf, "0000:af:00.0");
  EXPECT_EQ(info.pci_devices[1].driver, "");
}

TEST(KernelModuleProbe, UnreadableNodeIsReportedPerUser) {
  FixtureTree tree;
  tree.file("/dev/nvidiactl", "", 0000);
  const KernelModuleInfo info = probe_kernel_module(Sysroot(tree.root()));
  ASSERT_TRUE(info.device_nodes[0].exists);
  EXPECT_EQ(info.device_nodes[0].mode, 0U);
  // root bypasses file modes; everyone else is refused.
  const bool privileged = ::geteuid() == 0;
  EXPECT_EQ(info.device_nodes[0].readable, privileged);
  EXPECT_EQ(info.device_nodes[0].writable, privileged);
}

TEST(KernelModuleProbe, SysfsVersionFallbackAndNouveau) {
  FixtureTree tree;
  tree.file("/sys/module/nvidia/version", "535.129.03\n").dir("/sys/module/nouveau");
  add_pci(tree, "0000:01:00.0", "0x10de", "0x030000", "nouveau");
  const KernelModuleInfo info = probe_kernel_module(Sysroot(tree.root()));
  EXPECT_FALSE(info.proc_version_present);
  EXPECT_EQ(info.version, "535.129.03");
  EXPECT_FALSE(info.flavor);
  EXPECT_TRUE(info.nouveau_loaded);
  ASSERT_EQ(info.pci_devices.size(), 1U);
  EXPECT_EQ(info.pci_devices[0].driver, "nouveau");
}

TEST(KernelModuleProbe, ModuleFilesSecureBootLockdownAndBlacklists) {
  // F05: module built for an older kernel only; F20: Secure Boot on; F42: blacklisted.
  using namespace std::string_literals;
  FixtureTree tree;
  tree.file("/proc/sys/kernel/osrelease", "6.8.0-45-generic\n")
      .file("/lib/modules/6.8.0-45-generic/kernel/drivers/gpu/drm/nouveau/nouveau.ko.zst")
      .file("/lib/modules/6.5.0-41-generic/updates/dkms/nvidia.ko.zst")
      .file("/lib/modules/6.5.0-41-generic/updates/dkms/nvidia-uvm.ko.zst")
      .file("/lib/modules/6.2.0-20-generic/kernel/nvidia-535srv/nvidia.ko")
      .file("/lib/modules/5.15.0-1-generic/kernel/README")
      .file("/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c",
            "\x06\x00\x00\x00\x01"s)
      .file("/sys/kernel/security/lockdown", "none [integrity] confidentiality\n")
      .file("/etc/modprobe.d/blacklist-nvidia.conf", "blacklist nvidia\nblacklist nouveau\n")
      .file("/usr/lib/modprobe.d/nvidia.txt", "blacklist nvidia\n"); // not a .conf: ignored
  add_pci(tree, "0000:01:00.0", "0x10de", "0x030000", "");
  tree.file("/sys/bus/pci/devices/0000:01:00.0/power/runtime_status", "suspended\n")
      .file("/sys/bus/pci/devices/0000:01:00.0/power_state", "D3cold\n");

  const KernelModuleInfo info = probe_kernel_module(Sysroot(tree.root()));
  EXPECT_EQ(info.running_kernel, "6.8.0-45-generic");
  EXPECT_TRUE(info.module_files.empty());
  EXPECT_EQ(info.other_kernels_with_module,
            (std::vector<std::string>{"6.2.0-20-generic", "6.5.0-41-generic"}));
  EXPECT_EQ(info.secure_boot, true);
  EXPECT_EQ(info.lockdown, "integrity");
  EXPECT_EQ(info.modprobe_blacklist,
            (std::vector<std::string>{"/etc/modprobe.d/blacklist-nvidia.conf: blacklist nvidia"}));
  ASSERT_EQ(info.pci_devices.size(), 1U);
  EXPECT_EQ(info.pci_devices[0].runtime_status, "suspended");
  EXPECT_EQ(info.pci_devices[0].power_state, "D3cold");

  // Every fact survives a snapshot round trip.
  const nlohmann::json json = info;
  EXPECT_EQ(json.get<KernelModuleInfo>(), info);
}

TEST(KernelModuleProbe, ModuleFilesOfTheRunningKernel) {
  FixtureTree tree;
  tree.file("/proc/sys/kernel/osrelease", "6.8.0-45-generic\n")
      .file("/lib/modules/6.8.0-45-generic/updates/dkms/nvidia.ko.zst")
      .file("/lib/modules/6.8.0-45-generic/updates/dkms/nvidia-uvm.ko.zst")
      .file("/lib/modules/6.8.0-45-generic/updates/dkms/other.ko.zst");
  const KernelModuleInfo info = probe_kernel_module(Sysroot(tree.root()));
  EXPECT_EQ(info.module_files, (std::vector<std::string>{
                                   "/lib/modules/6.8.0-45-generic/updates/dkms/nvidia-uvm.ko.zst",
                                   "/lib/modules/6.8.0-45-generic/updates/dkms/nvidia.ko.zst"}));
  EXPECT_TRUE(info.other_kernels_with_module.empty());
  EXPECT_FALSE(info.secure_boot);
  EXPECT_EQ(info.lockdown, "");
}

TEST(KernelModuleProbe, GarbledFilesBecomeNullopt) {
  FixtureTree tree;
  tree.file("/proc/driver/nvidia/version", "\x01\x02 not a banner")
      .file("/sys/module/nvidia/version", "garbage\n");
  add_pci(tree, "0000:01:00.0", "0x10de", "0x030000", "nvidia");
  tree.file("/sys/bus/pci/devices/0000:01:00.0/current_link_width", "x16\n")
      .file("/sys/bus/pci/devices/0000:01:00.0/numa_node", "-1\n")
      .remove("/sys/bus/pci/devices/0000:01:00.0/max_link_speed");
  const KernelModuleInfo info = probe_kernel_module(Sysroot(tree.root()));
  EXPECT_TRUE(info.proc_version_present);
  EXPECT_FALSE(info.version);
  ASSERT_EQ(info.pci_devices.size(), 1U);
  EXPECT_FALSE(info.pci_devices[0].current_link_width);
  EXPECT_FALSE(info.pci_devices[0].max_link_speed);
  EXPECT_EQ(info.pci_devices[0].numa_node, -1);
}

} // namespace
} // namespace gpucheck::probes
