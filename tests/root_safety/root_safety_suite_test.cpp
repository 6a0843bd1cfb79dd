// The root-safety suite (issue 34, docs/security.md): the real gpucheck run as root against every
// vector an unprivileged user can plant: modules in the working directory, PYTHONPATH and the
// user site, programs on PATH (a `bash` for a shim), an ACL on a trusted tool, libraries on
// LD_LIBRARY_PATH, links and FIFOs where an output goes, links among the reports `merge` reads.
// Each case asserts that nothing the other user planted ran (no marker appears), that nothing
// in the tree outside the run's own output changed (every file's contents and every link's
// target compared), and that the report or the error names the refusal.
//
// It runs as root only (`ctest -R RootSafetySuite`; CI runs as root); as any other user each case
// is skipped saying so. The other user is created for the suite (useradd) and removed after it;
// where no user can be created, uid 65534 (nobody) owns the planted files.
#include <fcntl.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "cli/run_binary.hpp"
#include "support/acl.hpp"
#include "support/fixture_tree.hpp"
#include "support/root_safety_notes.hpp"
#include "support/text_and_processes.hpp"

namespace gpucheck::testing {
namespace {

namespace fs = std::filesystem;

constexpr const char* k_user = "gpucheck-mallory";

struct OtherUser {
  uid_t uid = 65534;
  gid_t gid = 65534;
  bool created = false;
};

OtherUser& mallory() {
  static OtherUser user;
  return user;
}

class RootSafetySuite : public ::testing::Test {
public:
  static void SetUpTestSuite() {
    if (::geteuid() != 0) {
      return;
    }
    if (::getpwnam(k_user) == nullptr) {
      mallory().created =
          std::system(("useradd --system --no-create-home --shell /usr/sbin/nologin " +
                       std::string(k_user) + " >/dev/null 2>&1")
                          .c_str()) == 0;
    }
    if (const passwd* user = ::getpwnam(k_user)) {
      mallory().uid = user->pw_uid;
      mallory().gid = user->pw_gid;
    }
  }
  static void TearDownTestSuite() {
    if (mallory().created) {
      [[maybe_unused]] const int rc =
          std::system(("userdel " + std::string(k_user) + " >/dev/null 2>&1").c_str());
      mallory().created = false;
    }
  }

protected:
  void SetUp() override {
    if (::geteuid() != 0) {
      GTEST_SKIP() << "the root-safety suite runs gpucheck as root: run it as root "
                      "(ctest -R RootSafetySuite)";
    }
    tree.dir("/markers");
    tree.dir("/out");
  }

  /// Give a planted path to the other user (lchown: a link itself, not its target).
  void give(const std::string& absolute) {
    ASSERT_EQ(::lchown(tree.host(absolute).c_str(), mallory().uid, mallory().gid), 0) << absolute;
  }
  /// A program of the other user's that leaves a marker when it runs.
  void plant_program(const std::string& absolute) {
    tree.file(absolute,
              "#!/bin/sh\n: > '" +
                  tree.host("/markers/" + fs::path(absolute).filename().string() + "-" +
                            std::to_string(std::hash<std::string>{}(absolute))) +
                  "'\n",
              0755);
  }
  /// Python code that leaves a marker when it is imported.
  void plant_module(const std::string& absolute) {
    tree.file(absolute,
              "open('" +
                  tree.host("/markers/" + std::to_string(std::hash<std::string>{}(absolute))) +
                  "', 'w').close()\n");
  }
  /// Every regular file's contents and every link's target in the tree but /out.
  [[nodiscard]] std::map<std::string, std::string> state() const {
    std::map<std::string, std::string> files;
    for (const fs::directory_entry& entry : fs::recursive_directory_iterator(tree.root())) {
      const std::string path = entry.path().string();
      if (path.starts_with(tree.host("/out"))) {
        continue;
      }
      if (entry.is_symlink()) {
        files[path] = "-> " + fs::read_symlink(entry.path()).string();
      } else if (entry.is_regular_file()) {
        files[path] = read_file(path);
      }
    }
    return files;
  }
  /// The markers planted code left: none may exist.
  [[nodiscard]] std::vector<std::string> markers() const {
    std::vector<std::string> found;
    for (const fs::directory_entry& entry : fs::recursive_directory_iterator(tree.root())) {
      const std::string path = entry.path().string();
      if ((path.starts_with(tree.host("/markers/")) || path.ends_with(".ran")) &&
          !entry.is_directory()) {
        found.push_back(path);
      }
    }
    return found;
  }
  /// Run gpucheck as root and check that nothing planted ran and nothing but /out changed.
  cli_test::RunResult run(cli_test::RunSpec spec) {
    const std::map<std::string, std::string> before = state();
    spec.inherit_env = false;
    spec.env.emplace("HOME", "/nonexistent");
    spec.env.emplace("PATH", "/usr/sbin:/usr/bin:/sbin:/bin");
    cli_test::RunResult result = cli_test::run_gpucheck(spec);
    EXPECT_EQ(markers(), std::vector<std::string>{}) << "planted code ran as root; " << result.err;
    const std::map<std::string, std::string> after = state();
    for (const auto& [path, content] : after) {
      const auto was = before.find(path);
      EXPECT_TRUE(was != before.end() && was->second == content)
          << path << " was written or changed outside the output";
    }
    EXPECT_EQ(before.size(), after.size()) << "a file outside the output was removed";
    return result;
  }
  static nlohmann::json parsed(const cli_test::RunResult& result) {
    nlohmann::json report = nlohmann::json::parse(result.out, nullptr, false);
    EXPECT_FALSE(report.is_discarded()) << result.err;
    return report;
  }

  FixtureTree tree;
};

/// The real interpreter, when the machine has one root owns (CI installs python3).
std::string system_python() {
  for (const char* path : {"/usr/bin/python3", "/bin/python3"}) {
    struct stat info {};
    if (::stat(path, &info) == 0 && info.st_uid == 0) {
      return path;
    }
  }
  return "";
}

// A module in the working directory (json.py, imported by the query), sitecustomize.py through
// PYTHONPATH, usercustomize.py in the user site through HOME and PYTHONUSERBASE: root's
// interpreter is asked and imports nothing of them.
TEST_F(RootSafetySuite, ThePythonChildRunsNoneOfAnotherUsersModules) {
  const std::string python = system_python();
  if (python.empty()) {
    GTEST_SKIP() << "no python3 owned by root in /usr/bin or /bin";
  }
  for (const char* name : {"json", "os", "sitecustomize", "usercustomize", "torch", "encodings"}) {
    plant_module(std::string("/cwd/") + name + ".py");
    plant_module(std::string("/home/pp/") + name + ".py");
  }
  for (int minor = 6; minor <= 16; ++minor) {
    plant_module(fmt::format("/home/.local/lib/python3.{}/site-packages/usercustomize.py", minor));
  }
  for (const char* dir : {"/cwd", "/home"}) {
    for (const fs::directory_entry& entry : fs::recursive_directory_iterator(tree.host(dir))) {
      ASSERT_EQ(::lchown(entry.path().c_str(), mallory().uid, mallory().gid), 0);
    }
    give(dir);
  }
  const cli_test::RunResult result =
      run({.args = {"--json", "--quick", "--import", "--only", "fw", "--python", python},
           .env = {{"HOME", tree.host("/home")},
                   {"PYTHONPATH", tree.host("/home/pp")},
                   {"PYTHONUSERBASE", tree.host("/home/.local")},
                   {"PYTHONSTARTUP", tree.host("/home/pp/os.py")}},
           .cwd = tree.host("/cwd")});
  const nlohmann::json report = parsed(result);
  ASSERT_FALSE(report["snapshot"]["python_environments"].empty())
      << "the interpreter was never asked: " << result.err;
}

// Another user's folder first on PATH holding what gpucheck might run (an interpreter, the
// `bash` of a version manager's shim, nvcc, nvidia-smi, ldconfig), and a shim that cannot be
// resolved: nothing runs, and the report says what was left out.
TEST_F(RootSafetySuite, NothingOnPathFromAnotherUsersFolderRuns) {
  for (const char* name : {"python3", "python", "bash", "sh", "env", "nvcc", "nvidia-smi",
                           "ldconfig", "journalctl", "dmesg", "lspci", "uname"}) {
    plant_program(std::string("/mbin/") + name);
    give(std::string("/mbin/") + name);
  }
  give("/mbin");
  tree.file("/shims/python3",
            "#!/usr/bin/env bash\nset -e\nprogram=\"${0##*/}\"\nexport PYENV_ROOT=\"" +
                tree.host("/pyenv") + "\"\n: > '" + tree.host("/markers/shim") + "'\nexec \"" +
                tree.host("/pyenv") + "/libexec/pyenv\" exec \"$program\" \"$@\"\n",
            0755);
  const cli_test::RunResult result =
      run({.args = {"--json", "--quick"},
           .env = {{"PATH", tree.host("/mbin") + ":" + tree.host("/shims") + ":/usr/bin:/bin"}}});
  const nlohmann::json report = parsed(result);
  const std::vector<std::string> notes = root_safety_notes(report);
  EXPECT_TRUE(any_note_has(notes, tree.host("/mbin")))
      << report["snapshot"]["probe_issues"].dump(1);
}

// A tool root owns, mode 0755, that an ACL lets the other user rewrite (-rwxrwxr-x+).
TEST_F(RootSafetySuite, AToolAnAclLetsAnotherUserWriteIsNotRun) {
  plant_program("/acl/bin/nvcc");
  if (!set_acl(tree.host("/acl/bin/nvcc"), k_acl_user, mallory().uid, 7)) {
    GTEST_SKIP() << "this file system keeps no POSIX ACLs";
  }
  const cli_test::RunResult result = run(
      {.args = {"--json", "--quick"}, .env = {{"PATH", tree.host("/acl/bin") + ":/usr/bin:/bin"}}});
  const nlohmann::json report = parsed(result);
  EXPECT_TRUE(any_note_has(root_safety_notes(report), "nvcc"))
      << report["snapshot"]["probe_issues"].dump(1);
}

// Libraries on LD_LIBRARY_PATH in another user's folder, and another user's library in root's
// folder: no child loads them (their constructors leave a marker), and the note names them.
TEST_F(RootSafetySuite, NoLibraryAnotherUserCanWriteIsLoaded) {
  const std::string planted = GPUCHECK_PLANTED_LIBRARY;
  for (const char* name : {"libcuda.so.1", "libnvidia-ml.so.1", "libcudnn.so.9", "libcudart.so.13",
                           "libcublas.so.13", "libnccl.so.2"}) {
    tree.dir("/mlib");
    fs::copy_file(planted, tree.host(std::string("/mlib/") + name));
    give(std::string("/mlib/") + name);
  }
  give("/mlib");
  tree.dir("/rlib");
  fs::copy_file(planted, tree.host("/rlib/libcuda.so.1"));
  give("/rlib/libcuda.so.1");
  const cli_test::RunResult result =
      run({.args = {"--json", "--quick"},
           .env = {{"LD_LIBRARY_PATH",
                    tree.host("/mlib") + ":" + tree.host("/rlib") + ":" + GPUCHECK_FAKE_LIB_DIR}}});
  const nlohmann::json report = parsed(result);
  const std::vector<std::string> notes = root_safety_notes(report);
  EXPECT_TRUE(any_note_has(notes, tree.host("/mlib")))
      << report["snapshot"]["probe_issues"].dump(1);
  EXPECT_TRUE(any_note_has(notes, tree.host("/rlib")))
      << report["snapshot"]["probe_issues"].dump(1);
}

// Outputs through what another user planted in a shared folder: a link on the way to root's
// folder, a link to root's file and to a device, a FIFO with a reader. Each is refused before
// anything is written, naming the output; root's files are unchanged and the reader gets nothing.
TEST_F(RootSafetySuite, NoOutputIsWrittenThroughWhatAnotherUserPlanted) {
  tree.file("/victim/passwd", "root:x:0:0:root:/root:/bin/bash\n");
  tree.file("/victim/shadow", "root:*:19000:0:99999:7:::\n", 0600);
  tree.dir("/pub");
  fs::permissions(tree.host("/pub"), fs::perms::all | fs::perms::sticky_bit);
  tree.symlink("/pub/reports", tree.host("/victim"));
  give("/pub/reports");
  tree.symlink("/pub/out.json", tree.host("/victim/shadow"));
  give("/pub/out.json");
  tree.symlink("/pub/zero.json", "/dev/zero");
  give("/pub/zero.json");
  ASSERT_EQ(::mkfifo(tree.host("/pub/fifo.json").c_str(), 0666), 0);
  give("/pub/fifo.json");
  const std::map<std::string, std::string> env{{"LD_LIBRARY_PATH", GPUCHECK_FAKE_LIB_DIR}};
  for (const std::string target :
       {"/pub/reports/passwd", "/pub/out.json", "/pub/zero.json", "/pub/fifo.json"}) {
    std::string got;
    std::thread reader;
    if (target == "/pub/fifo.json") {
      reader = std::thread([&got, this] {
        // Non-blocking, so that the reader ends whether or not a writer ever comes.
        const int fd = ::open(tree.host("/pub/fifo.json").c_str(), O_RDONLY | O_NONBLOCK);
        for (int i = 0; fd >= 0 && i < 300; ++i) {
          char buffer[4096];
          const ssize_t n = ::read(fd, buffer, sizeof buffer);
          if (n > 0) {
            got.append(buffer, static_cast<size_t>(n));
          }
          std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        if (fd >= 0) {
          ::close(fd);
        }
      });
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    const cli_test::RunResult result =
        run({.args = {"--quick", "--only", "driver.nvml", "--output", "json:" + tree.host(target)},
             .env = env});
    if (reader.joinable()) {
      reader.join();
    }
    EXPECT_NE(result.exit_code, 0) << target << " was written: " << result.err;
    EXPECT_NE(result.err.find(tree.host(target)), std::string::npos)
        << target << " is not named: " << result.err;
    EXPECT_EQ(got, "") << "the planted FIFO's reader got the report";
  }
}

// `merge` over a shared folder where another user linked reports to root's secrets: it reads
// no link and quotes nothing of them, whether given the folder or the link itself.
TEST_F(RootSafetySuite, MergeFollowsNoLinkAnotherUserPlanted) {
  const std::string secret = "TOPSECRET-6d75d1f";
  tree.file("/victim/note.txt", secret + "\n", 0600);
  tree.file("/victim/report.json", "{\"secret\": \"" + secret + "\"}\n", 0600);
  tree.dir("/pub/nodes");
  fs::permissions(tree.host("/pub/nodes"), fs::perms::all);
  tree.symlink("/pub/nodes/a.json", tree.host("/victim/note.txt"));
  tree.symlink("/pub/nodes/b.json", tree.host("/victim/report.json"));
  give("/pub/nodes/a.json");
  give("/pub/nodes/b.json");
  give("/pub/nodes");
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"merge", tree.host("/pub/nodes")},
        std::vector<std::string>{"merge", tree.host("/pub/nodes/a.json")},
        std::vector<std::string>{"merge", "--format", "json", tree.host("/pub/nodes/b.json")}}) {
    const cli_test::RunResult result = run({.args = args});
    EXPECT_EQ(result.out.find(secret), std::string::npos) << result.out;
    EXPECT_EQ(result.err.find(secret), std::string::npos) << result.err;
    EXPECT_GE(result.exit_code, 0);
  }
}

} // namespace
} // namespace gpucheck::testing
