#include "probes/redaction_hints.hpp"

#include <gtest/gtest.h>

#include "support/fixture_tree.hpp"

namespace gpucheck::probes {
namespace {

TEST(LoginNames, TakesPeopleNotSystemAccounts) {
  EXPECT_EQ(login_names_from_passwd("root:x:0:0:root:/root:/bin/bash\n"
                                    "daemon:x:1:1::/usr/sbin:/usr/sbin/nologin\n"
                                    "alice:x:1000:1000:Alice:/home/alice:/bin/bash\n"
                                    "nobody:x:65534:65534::/nonexistent:/bin/false\n"
                                    "# comment\n"
                                    "bob:x:1001:1001::/home/bob:/bin/zsh\n"
                                    "broken\n"),
            (std::vector<std::string>{"alice", "bob"}));
}

/// The hints come through the probes' seams: the environment given, the sysroot's passwd file,
/// and no host name from gethostname() under a tree (it names the machine running the test).
TEST(RedactionHints, ReadsTheEnvironmentAndTheSysrootsPasswd) {
  testing::FixtureTree tree;
  tree.file("/etc/passwd",
            "root:x:0:0:root:/root:/bin/bash\ncarol:x:1002:1002::/home/carol:/bin/sh\n");
  const Environment environment(
      {{"USER", "dave"}, {"LOGNAME", ""}, {"SUDO_USER", "erin"}, {"HOME", "/home/frank"}});
  const RedactionHints hints = collect_redaction_hints(Sysroot(tree.root()), environment);
  EXPECT_EQ(hints.user_names, (std::vector<std::string>{"dave", "erin", "frank", "carol"}));
  EXPECT_TRUE(hints.host_names.empty());
  // A home outside /home and /Users names no person; no passwd file, no names from it.
  testing::FixtureTree bare;
  const RedactionHints root_home = collect_redaction_hints(
      Sysroot(bare.root()), Environment(std::map<std::string, std::string>{{"HOME", "/root"}}));
  EXPECT_TRUE(root_home.user_names.empty());
}

} // namespace
} // namespace gpucheck::probes
