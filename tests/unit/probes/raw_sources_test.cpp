// Raw sources for the bundle, read from a fixture tree.
#include <gtest/gtest.h>

#include <filesystem>

#include "probes/raw_sources.hpp"
#include "support/fixture_tree.hpp"

namespace gpucheck::testing {
namespace {

using probes::collect_raw_sources;
using probes::nvidia_kernel_log_lines;
using probes::nvidia_ldconfig_lines;
using probes::Sysroot;

TEST(RawSources, KernelLogKeepsOnlyDriverLines) {
  EXPECT_EQ(nvidia_kernel_log_lines("[1] usb 1-1: new device\n"
                                    "[2] NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off\n"
                                    "[3] e1000e: link up\n"
                                    "[4] nvidia-uvm: Loaded the UVM driver\n"
                                    "[5] nouveau 0000:01:00.0: unknown chipset"),
            "[2] NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off\n"
            "[4] nvidia-uvm: Loaded the UVM driver\n"
            "[5] nouveau 0000:01:00.0: unknown chipset\n");
  EXPECT_EQ(nvidia_kernel_log_lines(""), "");
}

TEST(RawSources, LdconfigKeepsOnlyNvidiaLibraries) {
  EXPECT_EQ(
      nvidia_ldconfig_lines(
          "1234 libs found in cache `/etc/ld.so.cache'\n"
          "\tlibz.so.1 (libc6,x86-64) => /lib/x86_64-linux-gnu/libz.so.1\n"
          "\tlibcudnn.so.9 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libcudnn.so.9\n"
          "\tlibnvidia-ml.so.1 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1\n"
          "\tlibcurl.so.4 (libc6,x86-64) => /lib/x86_64-linux-gnu/libcurl.so.4\n"
          "\tlibnccl.so.2 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libnccl.so.2\n"),
      "\tlibcudnn.so.9 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libcudnn.so.9\n"
      "\tlibnvidia-ml.so.1 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1\n"
      "\tlibnccl.so.2 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libnccl.so.2\n");
}

TEST(RawSources, ReadsTheSourcesFromTheTreeAndRunsNoProgram) {
  FixtureTree tree;
  tree.file("/proc/driver/nvidia/version",
            "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04\n"
            "GCC version:  gcc version 13.3.0\n");
  tree.file("/var/log/dmesg", "[1] ok\n[2] NVRM: loading NVIDIA UNIX Open Kernel Module\n");
  tree.file("/etc/ld.so.cache.txt",
            "\tlibcuda.so.1 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libcuda.so.1\n");
  const std::map<std::string, std::string> sources = collect_raw_sources(Sysroot(tree.root()));
  ASSERT_EQ(sources.size(), 5u);
  EXPECT_EQ(sources.at("proc-driver-nvidia-version.txt"),
            "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04\n"
            "GCC version:  gcc version 13.3.0\n");
  EXPECT_EQ(sources.at("dmesg-nvidia.txt"), "[2] NVRM: loading NVIDIA UNIX Open Kernel Module\n");
  EXPECT_EQ(sources.at("ldconfig-nvidia.txt"),
            "\tlibcuda.so.1 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libcuda.so.1\n");
  // The tree's programs are never run: they would describe the machine gpucheck runs on (and a
  // tree's file is no program root should start).
  tree.file("/usr/bin/nvidia-smi", "#!/bin/sh\ntouch \"$0.ran\"\n", 0755);
  const std::map<std::string, std::string> again = collect_raw_sources(Sysroot(tree.root()));
  EXPECT_EQ(again.at("nvidia-smi-q.txt"),
            "(nvidia-smi -q was not run: gpucheck read a system tree (--sysroot), and the program "
            "would describe the machine gpucheck runs on instead)\n");
  EXPECT_EQ(
      again.at("lspci-vvv.txt").rfind("(lspci -vvv was not run: gpucheck read a system tree", 0),
      0u);
  EXPECT_FALSE(std::filesystem::exists(tree.host("/usr/bin/nvidia-smi.ran")));
}

TEST(RawSources, SaysWhyASourceIsMissing) {
  FixtureTree tree;
  tree.file("/var/log/dmesg", "[1] nothing about GPUs\n");
  const std::map<std::string, std::string> sources = collect_raw_sources(Sysroot(tree.root()));
  EXPECT_NE(sources.at("proc-driver-nvidia-version.txt").find("no NVIDIA kernel module loaded"),
            std::string::npos);
  EXPECT_NE(sources.at("dmesg-nvidia.txt").find("has no NVRM, Xid or nvidia lines"),
            std::string::npos);
  EXPECT_NE(sources.at("ldconfig-nvidia.txt").find("could not be run"), std::string::npos);
}

// An absolute link in the tree resolves inside the tree, never to the host's
// file of that name (a link to a shadow-like file was copied into the bundle).
TEST(RawSources, AbsoluteLinksResolveInsideTheTreeNotOnTheHost) {
  FixtureTree host;
  host.file("/secret", "NVRM host secret\n");
  FixtureTree tree;
  // On the host the link's target exists; inside the tree it does not.
  tree.symlink("/var/log/dmesg", host.host("/secret"));
  tree.file("/tree-version", "NVRM version: tree's own\n");
  tree.symlink("/proc/driver/nvidia/version", "/tree-version");
  const std::map<std::string, std::string> sources = collect_raw_sources(Sysroot(tree.root()));
  for (const auto& [name, text] : sources) {
    EXPECT_EQ(text.find("host secret"), std::string::npos) << name;
  }
  EXPECT_EQ(sources.at("proc-driver-nvidia-version.txt"), "NVRM version: tree's own\n");
}

} // namespace
} // namespace gpucheck::testing
