// The root policy's path check: a program or library is trusted only when
// nobody but root and the running user can change it or any directory above it. Testable without
// root: the "running user" is a parameter, and ownership by another user is made by chown when
// the suite runs as root, else by naming another uid as the runner.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <tuple>
#include <vector>

#include "probes/path_trust.hpp"
#include "support/fixture_tree.hpp"

namespace gpucheck::testing {
namespace {

using probes::Sysroot;
using probes::untrusted_reason;

constexpr uid_t k_other_uid = 12345;

void set_mode(const std::string& path, mode_t mode) {
  ASSERT_EQ(::chmod(path.c_str(), mode), 0) << path;
}

/// A tree with /opt/tool/bin/nvcc (0755) in directories of 0755.
void tool_tree(FixtureTree& tree) {
  tree.file("/opt/tool/bin/nvcc", "#!/bin/sh\n", 0755);
  for (const char* dir : {"/opt", "/opt/tool", "/opt/tool/bin"}) {
    set_mode(tree.host(dir), 0755);
  }
}

TEST(PathTrust, FilesOfRootOrTheRunnerInClosedDirectoriesAreTrusted) {
  FixtureTree tree;
  tool_tree(tree);
  EXPECT_EQ(untrusted_reason(Sysroot(tree.root()), "/opt/tool/bin/nvcc", ::geteuid()),
            std::nullopt);
  EXPECT_EQ(untrusted_reason(Sysroot("/"), "/bin/sh", ::geteuid()), std::nullopt);
}

TEST(PathTrust, AWorldWritableFileOrDirectoryOnTheWayIsNot) {
  FixtureTree tree;
  tool_tree(tree);
  const Sysroot root(tree.root());
  set_mode(tree.host("/opt/tool/bin/nvcc"), 0777);
  std::optional<std::string> why = untrusted_reason(root, "/opt/tool/bin/nvcc", ::geteuid());
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("'/opt/tool/bin/nvcc' is writable by every user (mode 0777)"),
            std::string::npos)
      << *why;
  set_mode(tree.host("/opt/tool/bin/nvcc"), 0755);
  set_mode(tree.host("/opt/tool"), 0777);
  why = untrusted_reason(root, "/opt/tool/bin/nvcc", ::geteuid());
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("'/opt/tool'"), std::string::npos) << *why;
  // A sticky directory (like /tmp) is fine: others cannot replace what they do not own.
  set_mode(tree.host("/opt/tool"), 01777);
  EXPECT_EQ(untrusted_reason(root, "/opt/tool/bin/nvcc", ::geteuid()), std::nullopt);
}

TEST(PathTrust, GroupWritableIsTrustedOnlyForRootsGroup) {
  FixtureTree tree;
  tool_tree(tree);
  const std::string bin = tree.host("/opt/tool/bin");
  if (::geteuid() == 0) {
    ASSERT_EQ(::chown(bin.c_str(), 0, 0), 0);
    set_mode(bin, 0775);
    EXPECT_EQ(untrusted_reason(Sysroot(tree.root()), "/opt/tool/bin/nvcc", 0), std::nullopt);
    ASSERT_EQ(::chown(bin.c_str(), 0, 1000), 0);
  } else if (::getegid() == 0) {
    GTEST_SKIP() << "needs a group other than root's";
  }
  set_mode(bin, 0775);
  const std::optional<std::string> why =
      untrusted_reason(Sysroot(tree.root()), "/opt/tool/bin/nvcc", ::geteuid());
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("writable by group"), std::string::npos) << *why;
}

TEST(PathTrust, AnotherUsersFileOrDirectoryIsNot) {
  FixtureTree tree;
  tool_tree(tree);
  uid_t runner = ::geteuid();
  if (runner == 0) {
    ASSERT_EQ(::chown(tree.host("/opt/tool").c_str(), k_other_uid, static_cast<gid_t>(-1)), 0);
  } else {
    runner = k_other_uid; // the tree is then another user's
  }
  const std::optional<std::string> why =
      untrusted_reason(Sysroot(tree.root()), "/opt/tool/bin/nvcc", runner);
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("is owned by uid"), std::string::npos) << *why;
}

TEST(PathTrust, LinksAreCheckedWhereTheyAreAndWhereTheyLead) {
  FixtureTree tree;
  tool_tree(tree);
  const Sysroot root(tree.root());
  // A link in a trusted directory to a file in an open one: what would run is not safe.
  tree.file("/open/nvcc", "#!/bin/sh\n", 0755);
  set_mode(tree.host("/open"), 0777);
  tree.dir("/usr/bin");
  set_mode(tree.host("/usr"), 0755);
  set_mode(tree.host("/usr/bin"), 0755);
  // (Absolute link targets are the tree's paths: the sysroot resolves them inside it.)
  tree.symlink("/usr/bin/nvcc", "/open/nvcc");
  std::optional<std::string> why = untrusted_reason(root, "/usr/bin/nvcc", ::geteuid());
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("/open"), std::string::npos) << *why;
  // A link in an open directory to a trusted file: another user could point it elsewhere.
  tree.symlink("/open/link", "/opt/tool/bin/nvcc");
  why = untrusted_reason(root, "/open/link", ::geteuid());
  ASSERT_TRUE(why);
  // A missing file cannot be examined: untrusted.
  EXPECT_TRUE(untrusted_reason(root, "/opt/tool/bin/missing", ::geteuid()));
}

/// Give `path` an access ACL: the owner rwx, `tag` (0x02 a user, 0x08 a group) `id` with
/// `perm`, the owning group r-x, mask rwx, others r-x. False where the file system has no ACLs.
bool set_acl(const std::string& path, unsigned tag, uint32_t id, unsigned perm) {
  std::string raw;
  const auto put16 = [&raw](unsigned v) {
    raw += static_cast<char>(v & 0xff);
    raw += static_cast<char>((v >> 8) & 0xff);
  };
  const auto put32 = [&raw](uint32_t v) {
    for (int i = 0; i < 4; ++i) {
      raw += static_cast<char>((v >> (8 * i)) & 0xff);
    }
  };
  put32(2);
  std::vector<std::tuple<unsigned, unsigned, uint32_t>> entries{{0x01, 7, 0xffffffff},
                                                                {tag, perm, id},
                                                                {0x04, 5, 0xffffffff},
                                                                {0x10, 7, 0xffffffff},
                                                                {0x20, 5, 0xffffffff}};
  std::sort(entries.begin(), entries.end()); // the kernel wants them in the tags' order
  for (const auto& [t, p, i] : entries) {
    put16(t);
    put16(p);
    put32(i);
  }
  return ::setxattr(path.c_str(), "system.posix_acl_access", raw.data(), raw.size(), 0) == 0;
}

// The mode of a file with an ACL shows the mask as its group bits (-rwxrwxr-x+, root's group):
// a named user or group with write access must still make it untrusted. Its twin: a named user
// who may only read.
TEST(PathTrust, WriteAccessGrantedByAnAccessControlListIsSeen) {
  FixtureTree tree;
  tool_tree(tree);
  const Sysroot root(tree.root());
  const std::string nvcc = tree.host("/opt/tool/bin/nvcc");
  if (!set_acl(nvcc, 0x02, k_other_uid, 7)) {
    GTEST_SKIP() << "no POSIX ACLs on this file system: " << std::strerror(errno);
  }
  std::optional<std::string> why = untrusted_reason(root, "/opt/tool/bin/nvcc", ::geteuid());
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("'/opt/tool/bin/nvcc' is writable by uid 12345 through its access control "
                      "list"),
            std::string::npos)
      << *why;
  ASSERT_TRUE(set_acl(nvcc, 0x08, k_other_uid, 6));
  why = untrusted_reason(root, "/opt/tool/bin/nvcc", ::geteuid());
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("group 12345"), std::string::npos) << *why;
  // On a directory on the way, too.
  ASSERT_TRUE(set_acl(nvcc, 0x02, k_other_uid, 5));
  EXPECT_EQ(untrusted_reason(root, "/opt/tool/bin/nvcc", ::geteuid()), std::nullopt);
  ASSERT_TRUE(set_acl(tree.host("/opt/tool"), 0x02, k_other_uid, 7));
  why = untrusted_reason(root, "/opt/tool/bin/nvcc", ::geteuid());
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("'/opt/tool' is writable by uid 12345"), std::string::npos) << *why;
}

TEST(PathTrust, MayRunAsRootRecordsARefusalUnderAStableName) {
  FixtureTree tree;
  tool_tree(tree);
  set_mode(tree.host("/opt/tool/bin"), 0777);
  ::setenv("GPUCHECK_TEST_TREAT_AS_ROOT", "1", 1);
  std::vector<ProbeIssue> notes;
  const bool allowed =
      probes::may_run_as_root(Sysroot(tree.root()), "/opt/tool/bin/nvcc", "run nvcc", notes);
  set_mode(tree.host("/opt/tool/bin"), 0755);
  const bool allowed_when_closed =
      probes::may_run_as_root(Sysroot(tree.root()), "/opt/tool/bin/nvcc", "run nvcc", notes);
  ::unsetenv("GPUCHECK_TEST_TREAT_AS_ROOT");
  EXPECT_FALSE(allowed);
  EXPECT_TRUE(allowed_when_closed);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0].probe, "root_safety");
  EXPECT_NE(notes[0].message.find("did not run nvcc '/opt/tool/bin/nvcc' as root"),
            std::string::npos)
      << notes[0].message;
}

} // namespace
} // namespace gpucheck::testing
