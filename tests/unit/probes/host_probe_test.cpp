#include <gtest/gtest.h>

#include "probes/collect.hpp"
#include "probes/host_text.hpp"
#include "support/fixture_tree.hpp"

namespace gpucheck::probes {
namespace {

using gpucheck::testing::FixtureTree;

TEST(HostText, OsReleasePrettyNameAndFallback) {
  EXPECT_EQ(parse_os_release_pretty_name("NAME=\"Ubuntu\"\nPRETTY_NAME=\"Ubuntu 24.04.1 LTS\"\n"),
            "Ubuntu 24.04.1 LTS");
  EXPECT_EQ(parse_os_release_pretty_name("NAME=Fedora\nVERSION='41 (Server)'\n"),
            "Fedora 41 (Server)");
  EXPECT_EQ(parse_os_release_pretty_name("PRETTY_NAME=\"Say \\\"hi\\\"\"\n"), "Say \"hi\"");
  EXPECT_EQ(parse_os_release_pretty_name("garbage\n"), "");
}

TEST(HostText, CpuinfoX86AndArm) {
  const std::string x86 = "processor\t: 0\nmodel name\t: AMD EPYC 9654 96-Core Processor\n\n"
                          "processor\t: 1\nmodel name\t: AMD EPYC 9654 96-Core Processor\n\n"
                          "processor\t: 2\nmodel name\t: AMD EPYC 9654 96-Core Processor\n";
  EXPECT_EQ(parse_cpuinfo(x86), (CpuSummary{"AMD EPYC 9654 96-Core Processor", 3}));
  const std::string grace = "processor\t: 0\nBogoMIPS\t: 2000.00\nCPU implementer\t: 0x41\n"
                            "CPU part\t: 0xd4f\n\nprocessor\t: 1\nCPU part\t: 0xd4f\n";
  EXPECT_EQ(parse_cpuinfo(grace), (CpuSummary{"CPU part 0xd4f", 2}));
  const std::string jetson = "processor : 0\nModel : NVIDIA Jetson AGX Orin\n";
  EXPECT_EQ(parse_cpuinfo(jetson), (CpuSummary{"NVIDIA Jetson AGX Orin", 1}));
  EXPECT_EQ(parse_cpuinfo(""), (CpuSummary{"", 0}));
}

TEST(HostText, MeminfoTotal) {
  EXPECT_EQ(parse_meminfo_total_bytes("MemTotal:       131821412 kB\nMemFree: 1 kB\n"),
            131821412ULL * 1024);
  EXPECT_EQ(parse_meminfo_total_bytes("MemFree: 1 kB\n"), std::nullopt);
  EXPECT_EQ(parse_meminfo_total_bytes("MemTotal: lots\n"), std::nullopt);
  EXPECT_EQ(parse_meminfo_total_bytes("MemTotal: 12 MB\n"), std::nullopt);
}

TEST(HostProbe, ReadsFixtureWithoutAskingTheTestMachine) {
  FixtureTree tree;
  tree.file("/proc/sys/kernel/hostname", "gpu-node-17\n")
      .file("/proc/sys/kernel/osrelease", "6.8.0-45-generic\n")
      .file("/etc/os-release", "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n")
      .file("/proc/cpuinfo", "processor : 0\nmodel name : Xeon\nprocessor : 1\nmodel name : Xeon\n")
      .file("/proc/meminfo", "MemTotal: 2048 kB\n");
  const HostInfo info = probe_host(Sysroot(tree.root()));
  EXPECT_EQ(info.hostname, "gpu-node-17");
  EXPECT_EQ(info.kernel, "6.8.0-45-generic");
  EXPECT_EQ(info.os, "Debian GNU/Linux 12 (bookworm)");
  EXPECT_EQ(info.cpu_model, "Xeon");
  EXPECT_EQ(info.cpu_count, 2);
  EXPECT_EQ(info.memory_total_bytes, 2048U * 1024);
  EXPECT_EQ(info.glibc, "");
  EXPECT_EQ(info.arch, "");
}

TEST(HostProbe, EmptyRootGivesEmptyFacts) {
  FixtureTree tree;
  const HostInfo info = probe_host(Sysroot(tree.root()));
  EXPECT_EQ(info, HostInfo{});
}

TEST(HostProbe, RealMachineHasTheBasics) {
  const HostInfo info = probe_host(Sysroot("/"));
  EXPECT_FALSE(info.hostname.empty());
  EXPECT_FALSE(info.kernel.empty());
  EXPECT_FALSE(info.arch.empty());
  EXPECT_FALSE(info.glibc.empty());
  EXPECT_GT(info.cpu_count, 0);
  ASSERT_TRUE(info.memory_total_bytes);
  EXPECT_GT(*info.memory_total_bytes, 64ULL << 20);
}

} // namespace
} // namespace gpucheck::probes
