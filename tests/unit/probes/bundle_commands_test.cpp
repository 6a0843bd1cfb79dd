// The bundle's programs (nvidia-smi -q, lspci -vvv), faked by scripts in a temporary tree: what
// they print is kept, and a missing, refused, failing, crashing, hanging or flooding program is a
// note, never a failure.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>

#include "probes/bundle_commands.hpp"
#include "support/fixture_tree.hpp"

namespace gpucheck::testing {
namespace {

using namespace std::chrono_literals;
using probes::BundleCommand;
using probes::collect_command_outputs;

/// A command named like nvidia-smi whose only candidate is `script` in the tree.
BundleCommand fake_command(const FixtureTree& tree, const std::string& script,
                           std::chrono::milliseconds deadline = 10000ms) {
  return BundleCommand{"nvidia-smi-q.txt", {tree.host(script)}, {"-q"}, deadline};
}

std::string run_one(const BundleCommand& command) {
  return collect_command_outputs({command}).at(command.file_name);
}

TEST(BundleCommands, TheFirstExistingCandidateRunsInACleanEnvironment) {
  FixtureTree tree;
  tree.file("/bin/tool", "#!/bin/sh\necho \"args: $*\"\nenv\n", 0755);
  ::setenv("GPUCHECK_TEST_LEAK", "leaked", 1);
  BundleCommand command = fake_command(tree, "/bin/tool");
  command.candidates.insert(command.candidates.begin(), tree.host("/missing/tool"));
  const std::string out = run_one(command);
  ::unsetenv("GPUCHECK_TEST_LEAK");
  EXPECT_EQ(out.rfind("args: -q\n", 0), 0u) << out;
  EXPECT_NE(out.find("LC_ALL=C\n"), std::string::npos) << out;
  EXPECT_NE(out.find("PATH=/usr/sbin:/usr/bin:/sbin:/bin\n"), std::string::npos) << out;
  for (const char* absent : {"GPUCHECK_TEST_LEAK", "HOME=", "LD_LIBRARY_PATH", "LD_PRELOAD"}) {
    EXPECT_EQ(out.find(absent), std::string::npos) << absent << " in\n" << out;
  }
}

TEST(BundleCommands, TheSystemsCommandsComeFromFixedSystemPathsOnly) {
  for (const BundleCommand& command : probes::bundle_commands()) {
    ASSERT_FALSE(command.candidates.empty());
    for (const std::string& path : command.candidates) {
      EXPECT_TRUE(path.starts_with("/usr/bin/") || path.starts_with("/bin/") ||
                  path.starts_with("/usr/sbin/") || path.starts_with("/sbin/") ||
                  path.starts_with("/usr/local/nvidia/bin/"))
          << path;
    }
    EXPECT_LE(command.deadline, 20000ms);
    EXPECT_LE(command.max_bytes, size_t{4} << 20);
  }
}

TEST(BundleCommands, NoProgramIsANote) {
  FixtureTree tree;
  tree.file("/bin/not-executable", "#!/bin/sh\necho ran\n", 0644);
  BundleCommand command = fake_command(tree, "/bin/nvidia-smi");
  command.candidates.push_back(tree.host("/bin/not-executable"));
  EXPECT_EQ(run_one(command),
            fmt::format("(nvidia-smi -q was not run: no executable at {} or {})\n",
                        tree.host("/bin/nvidia-smi"), tree.host("/bin/not-executable")));
}

TEST(BundleCommands, AFailureKeepsWhatItPrintedUnderANote) {
  FixtureTree tree;
  tree.file("/bin/smi",
            "#!/bin/sh\necho 'NVIDIA-SMI has failed because it couldn'\"'\"'t communicate with the "
            "NVIDIA driver.'\nexit 9\n",
            0755);
  EXPECT_EQ(run_one(fake_command(tree, "/bin/smi")),
            fmt::format("({} -q exited with status 9; what it printed follows)\n"
                        "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA "
                        "driver.\n",
                        tree.host("/bin/smi")));
}

TEST(BundleCommands, ACrashIsNotedWithTheSignal) {
  FixtureTree tree;
  tree.file("/bin/smi", "#!/bin/sh\necho '==== GPU 00000000:1B:00.0'\nkill -SEGV $$\n", 0755);
  const std::string out = run_one(fake_command(tree, "/bin/smi"));
  EXPECT_EQ(out, fmt::format("({} -q was ended by SIGSEGV; what it printed follows)\n"
                             "==== GPU 00000000:1B:00.0\n",
                             tree.host("/bin/smi")));
}

TEST(BundleCommands, AHangingProgramIsKilledAtItsDeadline) {
  FixtureTree tree;
  // Its own child holds stdout open too: the whole group goes.
  tree.file("/bin/smi",
            "#!/bin/sh\necho 'GPU 00000000:1B:00.0'\nprintf 'half a li'\nsleep 60 &\n"
            "sleep 60\n",
            0755);
  const auto start = std::chrono::steady_clock::now();
  const std::string out = run_one(fake_command(tree, "/bin/smi", 1000ms));
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  EXPECT_EQ(out, fmt::format("({} -q did not finish within 1 s and was killed; what it printed "
                             "follows)\nGPU 00000000:1B:00.0\n",
                             tree.host("/bin/smi")));
}

TEST(BundleCommands, AFloodIsStoppedAtTheCapKeepingCompleteLines) {
  FixtureTree tree;
  tree.file("/bin/smi", "#!/bin/sh\nexec yes 'Serial Number : 1652322012345'\n", 0755);
  BundleCommand command = fake_command(tree, "/bin/smi", 10000ms);
  command.max_bytes = 100000;
  const auto start = std::chrono::steady_clock::now();
  const std::string out = run_one(command);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s) << "stopped at the cap, not the deadline";
  const std::string note =
      fmt::format("({} -q printed more than 100000 bytes and was stopped; what it printed "
                  "follows)\n",
                  tree.host("/bin/smi"));
  ASSERT_EQ(out.rfind(note, 0), 0u) << out.substr(0, 200);
  const std::string kept = out.substr(note.size());
  const std::string line = "Serial Number : 1652322012345\n";
  EXPECT_LE(kept.size(), 100000u);
  EXPECT_GT(kept.size(), 100000u - line.size());
  EXPECT_EQ(kept.size() % line.size(), 0u) << "only complete lines";
}

TEST(BundleCommands, AsRootAProgramAnotherUserCouldReplaceIsNotRun) {
  FixtureTree tree;
  tree.file("/open/smi", "#!/bin/sh\ntouch \"$0.ran\"\necho ran\n", 0755);
  ASSERT_EQ(::chmod(tree.host("/open").c_str(), 0777), 0);
  ::setenv("GPUCHECK_TEST_TREAT_AS_ROOT", "1", 1);
  const std::string refused = run_one(fake_command(tree, "/open/smi"));
  ::unsetenv("GPUCHECK_TEST_TREAT_AS_ROOT");
  EXPECT_EQ(refused.rfind(fmt::format("({} -q was not run as root: ", tree.host("/open/smi")), 0),
            0u)
      << refused;
  EXPECT_NE(refused.find("writable by every user"), std::string::npos) << refused;
  EXPECT_NE(::access(tree.host("/open/smi.ran").c_str(), F_OK), 0) << "it ran";
  // The healthy twin: the directory closed, it runs.
  ASSERT_EQ(::chmod(tree.host("/open").c_str(), 0755), 0);
  ::setenv("GPUCHECK_TEST_TREAT_AS_ROOT", "1", 1);
  const std::string ran = run_one(fake_command(tree, "/open/smi"));
  ::unsetenv("GPUCHECK_TEST_TREAT_AS_ROOT");
  EXPECT_EQ(ran, "ran\n");
}

} // namespace
} // namespace gpucheck::testing
