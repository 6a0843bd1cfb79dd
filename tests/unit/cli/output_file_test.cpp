// Output files (docs/security.md): regular files replaced atomically through a temporary file of
// a random name; devices and FIFOs written in; links, block devices, sockets never replaced.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "cli/output_file.hpp"
#include "support/fixture_tree.hpp"
#include "support/text_and_processes.hpp"

namespace gpucheck::testing {
namespace {

using cli::classify_output_path;
using cli::OutputFileKind;
using cli::write_output_file;
using cli::WriteError;

std::vector<std::string> entries(const std::string& directory) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(directory)) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string random_text() {
  std::mt19937 rng(std::random_device{}());
  return "report " + std::to_string(rng()) + "\n";
}

/// What a FIFO's reader got (up to `expected` bytes and a margin), then the reader closed.
std::string read_and_close(int reader, size_t expected) {
  std::string got(expected + 16, '\0');
  const ssize_t n = ::read(reader, got.data(), got.size());
  ::close(reader);
  got.resize(n > 0 ? static_cast<size_t>(n) : 0);
  return got;
}

TEST(OutputFile, WritesAndReplacesARegularFileLeavingNoTemporaryFile) {
  FixtureTree dir;
  const std::string path = dir.host("/r.json");
  const std::string second = random_text();
  ASSERT_FALSE(write_output_file(path, "first"));
  ASSERT_FALSE(write_output_file(path, second));
  EXPECT_EQ(read_file(path), second);
  EXPECT_EQ(entries(dir.root()), std::vector<std::string>{"r.json"});
}

TEST(OutputFile, NewFilesGetTheUmasksMode) {
  FixtureTree dir;
  const mode_t old_mask = ::umask(027);
  const std::optional<WriteError> problem = write_output_file(dir.host("/r.txt"), "x");
  ::umask(old_mask);
  ASSERT_FALSE(problem);
  struct stat info {};
  ASSERT_EQ(::stat(dir.host("/r.txt").c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0640u);
}

TEST(OutputFile, DevNullIsWrittenIntoAndStaysADevice) {
  EXPECT_EQ(classify_output_path("/dev/null").kind, OutputFileKind::stream);
  ASSERT_FALSE(write_output_file("/dev/null", random_text()));
  struct stat info {};
  ASSERT_EQ(::lstat("/dev/null", &info), 0);
  EXPECT_TRUE(S_ISCHR(info.st_mode));
}

TEST(OutputFile, DevFullIsAWriteErrorNotAUsageError) {
  if (::access("/dev/full", W_OK) != 0) {
    GTEST_SKIP() << "/dev/full is not writable here";
  }
  const std::optional<WriteError> problem = write_output_file("/dev/full", random_text());
  ASSERT_TRUE(problem);
  EXPECT_FALSE(problem->refused);
  EXPECT_NE(problem->message.find("/dev/full"), std::string::npos);
  EXPECT_NE(problem->message.find("No space left"), std::string::npos) << problem->message;
}

/// Makes what a test plants another user's: as root, by giving it to nobody (65534); else by
/// naming another uid as the runner (the test's own files then belong to "another user").
struct OtherUser {
  std::optional<uid_t> runner; ///< the `as` argument of classify/write
  /// Give `path` (a link itself, not its target) to the other user.
  void plant(const std::string& path) const {
    if (::geteuid() == 0) {
      ASSERT_EQ(::lchown(path.c_str(), 65534, 65534), 0) << path;
    }
  }
  static OtherUser make() {
    return ::geteuid() == 0 ? OtherUser{std::nullopt} : OtherUser{::geteuid() + 1};
  }
};

// Issue 34: /tmp/reports -> a root-only folder, planted by nobody, made root's report replace a
// file there.
TEST(OutputFile, ALinkAnotherUserOwnsOnTheWayIsNotFollowed) {
  FixtureTree dir;
  dir.file("/victimdir/passwd", "root-only data");
  dir.symlink("/reports", dir.host("/victimdir"));
  const OtherUser other = OtherUser::make();
  other.plant(dir.host("/reports"));
  const std::string path = dir.host("/reports/passwd");
  EXPECT_EQ(classify_output_path(path, other.runner).kind, OutputFileKind::refused);
  const std::optional<WriteError> problem = write_output_file(path, "report", other.runner);
  ASSERT_TRUE(problem);
  EXPECT_TRUE(problem->refused);
  EXPECT_NE(problem->message.find("symbolic link owned by user"), std::string::npos)
      << problem->message;
  EXPECT_EQ(read_file(dir.host("/victimdir/passwd")), "root-only data");
  EXPECT_EQ(entries(dir.host("/victimdir")), std::vector<std::string>{"passwd"});
  // Its twin: the runner's own link on the way (as /var/run -> /run is root's) is followed.
  if (::geteuid() == 0) {
    ASSERT_EQ(::lchown(dir.host("/reports").c_str(), 0, 0), 0);
  }
  ASSERT_FALSE(write_output_file(dir.host("/reports/new.json"), "report"));
  EXPECT_EQ(read_file(dir.host("/victimdir/new.json")), "report");
}

// Issue 34: /tmp/out.json -> /dev/zero, nobody's link, took root's report into the device.
TEST(OutputFile, ALinkAnotherUserOwnsToADeviceIsRefused) {
  FixtureTree dir;
  dir.symlink("/out.json", "/dev/zero");
  const OtherUser other = OtherUser::make();
  other.plant(dir.host("/out.json"));
  const std::optional<WriteError> problem =
      write_output_file(dir.host("/out.json"), "report", other.runner);
  ASSERT_TRUE(problem);
  EXPECT_TRUE(problem->refused);
  EXPECT_NE(problem->message.find("owned by user"), std::string::npos) << problem->message;
  // Its twin, the runner's own link to a device: ALinkToADeviceIsWrittenThrough.
}

// Issue 34: a FIFO planted by another user, with a reader of theirs, received root's report.
TEST(OutputFile, AFifoAnotherUserOwnsIsRefusedAndItsReaderGetsNothing) {
  FixtureTree dir;
  const std::string fifo = dir.host("/pipe");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0666), 0);
  const OtherUser other = OtherUser::make();
  other.plant(fifo);
  const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0);
  const std::optional<WriteError> problem = write_output_file(fifo, "report", other.runner);
  ASSERT_TRUE(problem);
  EXPECT_TRUE(problem->refused);
  EXPECT_NE(problem->message.find("FIFO owned by user"), std::string::npos) << problem->message;
  std::array<char, 16> got{};
  EXPECT_LE(::read(reader, got.data(), got.size()), 0); // nothing written
  ::close(reader);
}

// Issue 34: a FIFO without a reader was refused only after the probes had run. Checking the path
// refuses it; with a reader, checking it opens it and the write later goes through that
// descriptor (the reader sees no end of file in between).
TEST(OutputFile, AFifoIsOpenedWhenItsPathIsChecked) {
  FixtureTree dir;
  const std::string fifo = dir.host("/pipe");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const cli::OutputFileClass alone = classify_output_path(fifo);
  EXPECT_EQ(alone.kind, OutputFileKind::refused);
  EXPECT_EQ(alone.reason, "no process is reading this FIFO");
  const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0);
  EXPECT_EQ(classify_output_path(fifo).kind, OutputFileKind::stream);
  std::array<char, 16> early{};
  errno = 0;
  EXPECT_EQ(::read(reader, early.data(), early.size()), -1); // open, empty: no end of file
  EXPECT_EQ(errno, EAGAIN);
  const std::string text = random_text();
  ASSERT_FALSE(write_output_file(fifo, text));
  EXPECT_EQ(read_and_close(reader, text.size()), text);
}

TEST(OutputFile, AFifoWithAReaderIsWrittenIntoAndStaysAFifo) {
  FixtureTree dir;
  const std::string fifo = dir.host("/pipe");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  ASSERT_GE(reader, 0);
  const std::string text = random_text();
  ASSERT_FALSE(write_output_file(fifo, text));
  EXPECT_EQ(read_and_close(reader, text.size()), text);
  struct stat info {};
  ASSERT_EQ(::lstat(fifo.c_str(), &info), 0);
  EXPECT_TRUE(S_ISFIFO(info.st_mode));
}

TEST(OutputFile, AFifoWithoutAReaderIsRefusedAtOnceNotAHang) {
  FixtureTree dir;
  const std::string fifo = dir.host("/pipe");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::optional<WriteError> problem = write_output_file(fifo, "x");
  ASSERT_TRUE(problem);
  EXPECT_TRUE(problem->refused);
  EXPECT_NE(problem->message.find("FIFO"), std::string::npos) << problem->message;
  struct stat info {};
  ASSERT_EQ(::lstat(fifo.c_str(), &info), 0);
  EXPECT_TRUE(S_ISFIFO(info.st_mode));
}

TEST(OutputFile, ALinkToAFileIsRefusedAndNeitherLinkNorTargetChange) {
  FixtureTree dir;
  dir.file("/victim", "root-only data");
  dir.symlink("/r.json", dir.host("/victim"));
  const std::optional<WriteError> problem = write_output_file(dir.host("/r.json"), "report");
  ASSERT_TRUE(problem);
  EXPECT_TRUE(problem->refused);
  EXPECT_NE(problem->message.find("symbolic link"), std::string::npos) << problem->message;
  EXPECT_EQ(read_file(dir.host("/victim")), "root-only data");
  struct stat info {};
  ASSERT_EQ(::lstat(dir.host("/r.json").c_str(), &info), 0);
  EXPECT_TRUE(S_ISLNK(info.st_mode));
}

TEST(OutputFile, ADanglingLinkIsRefusedAndNothingIsCreatedAtItsTarget) {
  FixtureTree dir;
  dir.symlink("/r.json", dir.host("/created-through-link"));
  const std::optional<WriteError> problem = write_output_file(dir.host("/r.json"), "report");
  ASSERT_TRUE(problem);
  EXPECT_TRUE(problem->refused);
  EXPECT_FALSE(std::filesystem::exists(dir.host("/created-through-link")));
}

TEST(OutputFile, ALinkToADeviceIsWrittenThrough) {
  FixtureTree dir;
  dir.symlink("/null", "/dev/null");
  EXPECT_EQ(classify_output_path(dir.host("/null")).kind, OutputFileKind::stream);
  ASSERT_FALSE(write_output_file(dir.host("/null"), "x"));
  struct stat info {};
  ASSERT_EQ(::lstat(dir.host("/null").c_str(), &info), 0);
  EXPECT_TRUE(S_ISLNK(info.st_mode));
}

TEST(OutputFile, DirectoriesSocketsAndMissingDirectoriesAreRefused) {
  FixtureTree dir;
  dir.dir("/sub");
  EXPECT_EQ(classify_output_path(dir.host("/sub")).reason, "it is a directory");
  EXPECT_NE(classify_output_path(dir.host("/no/r.json")).reason.find("does not exist"),
            std::string::npos);
  EXPECT_EQ(classify_output_path(dir.host("/sub/new.json")).kind, OutputFileKind::replace);
  EXPECT_EQ(classify_output_path("/dev/fd/987654").kind, OutputFileKind::refused);
}

// The old scheme opened ".NAME.tmp.PID" without O_EXCL: a link planted under that name (and any
// other guess) must never be followed.
TEST(OutputFile, PlantedTemporaryNamesAreNeverOpened) {
  FixtureTree dir;
  dir.file("/victim", "root-only data");
  for (int pid : {static_cast<int>(::getpid()), 1, 2}) {
    dir.symlink("/.r.json.tmp." + std::to_string(pid), dir.host("/victim"));
  }
  ASSERT_FALSE(write_output_file(dir.host("/r.json"), "report"));
  EXPECT_EQ(read_file(dir.host("/victim")), "root-only data");
  EXPECT_EQ(read_file(dir.host("/r.json")), "report");
  EXPECT_EQ(entries(dir.root()).size(), 5u); // victim, three links, r.json
}

// A write that fails half-way (here: the file size limit) removes its temporary file, keeps the
// old file, and is an I/O failure (exit 3), not a usage error.
TEST(OutputFile, AFailedWriteRemovesTheTemporaryFileAndKeepsTheOldOne) {
  FixtureTree dir;
  const std::string path = dir.host("/r.json");
  dir.file("/r.json", "old report");
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::signal(SIGXFSZ, SIG_IGN);
    const rlimit limit{16, 16};
    ::setrlimit(RLIMIT_FSIZE, &limit);
    const std::optional<WriteError> problem = write_output_file(path, std::string(4096, 'x'));
    ::_exit(!problem ? 10 : problem->refused ? 11 : 0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "10: succeeded, 11: called a usage error";
  EXPECT_EQ(read_file(path), "old report");
  EXPECT_EQ(entries(dir.root()), std::vector<std::string>{"r.json"});
}

} // namespace
} // namespace gpucheck::testing
