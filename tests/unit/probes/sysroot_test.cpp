// Sysroot: every way a probe reads through GPUCHECK_SYSROOT resolves links inside the tree. An
// absolute link in a tree names the tree's file; the host's kernel must never follow it to the
// host's file of that name.
#include "probes/sysroot.hpp"

#include <gtest/gtest.h>

#include <random>

#include "gpucheck/model/json_io.hpp"
#include "probes/collect.hpp"
#include "probes/kernel_log.hpp"
#include "probes/paths.hpp"
#include "support/fixture_tree.hpp"

namespace gpucheck::probes {
namespace {

using gpucheck::testing::FixtureTree;

/// A tree whose links point at absolute paths that exist on the host (in `host`) but not in the
/// tree, next to links whose targets the tree does have.
struct EscapingTree {
  FixtureTree host;
  FixtureTree tree;
  std::string secret;

  EscapingTree() {
    secret = "host-secret-" + std::to_string(std::random_device{}());
    // Readable by every parser that might meet it: os-release, passwd and kernel log lines.
    host.file("/shadow",
              "PRETTY_NAME=\"" + secret + "\"\n" + secret + ":x:1000:1000::/home/" + secret +
                  ":/bin/sh\n<3>[    1.000000] NVRM: Xid (PCI:0000:01:00): 79, " + secret + "\n");
    host.file("/secrets/token", secret + "\n");
    // Links whose absolute targets are host paths: inside the tree they name nothing.
    tree.symlink("/etc/os-release", host.host("/shadow"));
    tree.symlink("/etc/passwd", host.host("/shadow"));
    tree.symlink("/sys/escape", host.host("/secrets"));
    tree.symlink("/var/lib/dpkg/status", host.host("/shadow"));
    tree.symlink("/dev/kmsg", host.host("/shadow"));
    // A relative link climbing above the root stays at the root.
    tree.symlink("/etc/climb", "../../../../../../../../" + host.host("/shadow"));
    // The healthy twin: an absolute link whose target the tree has.
    tree.file("/opt/real/version.txt", "tree's own\n");
    tree.symlink("/etc/good", "/opt/real/version.txt");
    tree.symlink("/sys/good", "/opt/real");
  }
};

TEST(Sysroot, EveryReadResolvesAbsoluteLinksInsideTheTree) {
  const EscapingTree t;
  const Sysroot root(t.tree.root());
  // The host's files are really there, where the kernel would follow the links.
  ASSERT_NE(Sysroot("/").read(t.host.host("/shadow")).value_or("").find(t.secret),
            std::string::npos);
  for (const char* path : {"/etc/os-release", "/etc/passwd", "/var/lib/dpkg/status", "/dev/kmsg",
                           "/etc/climb", "/sys/escape/token"}) {
    EXPECT_EQ(root.read(path), std::nullopt) << path;
    EXPECT_EQ(root.read_line(path), std::nullopt) << path;
    EXPECT_EQ(read_resolved(root, path), std::nullopt) << path;
    EXPECT_EQ(read_attribute(root, path), std::nullopt) << path;
    EXPECT_EQ(root.host_resolved(path), std::nullopt) << path;
    const PathStat stat = stat_path(root, path);
    EXPECT_FALSE(stat.exists) << path;
    EXPECT_FALSE(can_access(root, path, R_OK)) << path;
  }
  EXPECT_TRUE(root.list("/sys/escape").empty());
  EXPECT_FALSE(root.is_directory("/sys/escape"));
  // A dangling link still exists as a link.
  EXPECT_TRUE(root.exists("/etc/os-release"));
  EXPECT_FALSE(root.exists("/sys/escape/token"));

  // Healthy twin: links whose targets are in the tree are followed.
  EXPECT_EQ(root.read("/etc/good"), "tree's own\n");
  EXPECT_EQ(root.read_line("/sys/good/version.txt"), "tree's own");
  EXPECT_EQ(root.list("/sys/good"), std::vector<std::string>{"version.txt"});
  EXPECT_TRUE(root.is_directory("/sys/good"));
  EXPECT_TRUE(stat_path(root, "/etc/good").is_regular);
  EXPECT_EQ(root.resolve("/sys/good/version.txt"), "/opt/real/version.txt");
  EXPECT_EQ(root.host_resolved("/etc/good"), t.tree.host("/opt/real/version.txt"));
}

// The probes built on it: nothing of the host's file reaches the snapshot.
TEST(Sysroot, ProbesNeverReadTheHostsFileThroughATreesLink) {
  const EscapingTree t;
  const Sysroot root(t.tree.root());
  SystemSnapshot snapshot;
  snapshot.host = probe_host(root);
  snapshot.environment = probe_environment(root, Environment(std::map<std::string, std::string>{}));
  snapshot.kernel_log = read_kernel_log(root, {});
  const std::string json = nlohmann::json(snapshot).dump();
  EXPECT_EQ(json.find(t.secret), std::string::npos) << json;
}

TEST(Sysroot, TheRealRootReadsThroughLinksAsTheKernelDoes) {
  FixtureTree host;
  host.file("/data/file", "content\n");
  host.symlink("/link", host.host("/data/file"));
  const Sysroot root("/");
  EXPECT_EQ(root.read(host.host("/link")), "content\n");
  EXPECT_EQ(root.resolve(host.host("/link")), host.host("/data/file"));
}

} // namespace
} // namespace gpucheck::probes
