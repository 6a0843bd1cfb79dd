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
#include "support/acl.hpp"
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

// LD_LIBRARY_PATH as root: a folder only root can write is still left out when a library in it,
// in a folder below it (glibc-hwcaps), or a link's target (existing or not yet) is one another
// user could write; the loader takes the dependencies from there too. Each twin, closed, is kept.
TEST(PathTrust, ALibraryFolderIsLeftOutForWhatItHolds) {
  FixtureTree tree;
  tree.file("/lib/a/libcuda.so.1", "", 0644);
  tree.file("/lib/b/glibc-hwcaps/x86-64-v3/libcudnn.so.9", "", 0644);
  tree.file("/open/libnccl.so.2", "", 0644);
  tree.symlink("/lib/c/libnccl.so.2", tree.host("/open/libnccl.so.2"));
  tree.symlink("/lib/d/libcublas.so.13", tree.host("/open/missing.so"));
  const std::vector<std::pair<std::string, std::string>> cases{
      {"/lib/a", "/lib/a/libcuda.so.1"},
      {"/lib/b", "/lib/b/glibc-hwcaps/x86-64-v3/libcudnn.so.9"},
      {"/lib/c", "/open"},
      {"/lib/d", "/open"}};
  ::setenv("GPUCHECK_TEST_TREAT_AS_ROOT", "1", 1);
  for (const auto& [folder, opened] : cases) {
    const std::string value = tree.host(folder);
    set_mode(tree.host(opened), std::filesystem::is_directory(tree.host(opened)) ? 0777 : 0666);
    const probes::SearchPathFilter open =
        probes::filter_search_path("LD_LIBRARY_PATH", value, true);
    const probes::SearchPathFilter folder_only = probes::filter_search_path("PATH", value);
    set_mode(tree.host(opened), std::filesystem::is_directory(tree.host(opened)) ? 0755 : 0644);
    const probes::SearchPathFilter closed =
        probes::filter_search_path("LD_LIBRARY_PATH", value, true);
    EXPECT_EQ(open.kept, "") << folder;
    ASSERT_EQ(open.notes.size(), 1u) << folder;
    EXPECT_NE(open.notes[0].message.find(tree.host(opened)), std::string::npos)
        << open.notes[0].message;
    EXPECT_EQ(folder_only.kept, value) << "the folder alone is root's";
    EXPECT_EQ(closed.kept, value) << folder;
    EXPECT_TRUE(closed.notes.empty()) << folder;
  }
  // A folder the loader does not search below an entry (perl5 in /usr/lib/x86_64-linux-gnu) is
  // not examined: the entry is kept.
  tree.file("/lib/e/libcudart.so.13", "", 0644).file("/lib/e/perl5/open.so", "", 0644);
  set_mode(tree.host("/lib/e/perl5/open.so"), 0666);
  EXPECT_EQ(probes::filter_search_path("LD_LIBRARY_PATH", tree.host("/lib/e"), true).kept,
            tree.host("/lib/e"));
  ::unsetenv("GPUCHECK_TEST_TREAT_AS_ROOT");
}

} // namespace
} // namespace gpucheck::testing
