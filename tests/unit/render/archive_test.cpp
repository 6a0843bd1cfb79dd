// The .tar.gz (our ustar, zlib's gzip): gzip, tar and Python's tarfile must read it back byte for
// byte.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "render/archive.hpp"
#include "support/external_tool.hpp"
#include "support/fixture_tree.hpp"
#include "support/text_and_processes.hpp"

namespace gpucheck::testing {
namespace {

using render::ArchiveMember;
using render::make_gzip;
using render::make_tar;

std::string random_bytes(size_t size, unsigned seed) {
  std::mt19937 rng(seed);
  std::string out(size, '\0');
  for (char& c : out) {
    c = static_cast<char>(rng() & 0xffU);
  }
  return out;
}

void require_tools() {
  for (const char* tool : {"gzip", "tar"}) {
    ASSERT_TRUE(tool_on_path(tool)) << tool << " is not installed";
  }
}

TEST(Gzip, GzipDecompressesItExactly) {
  require_tools();
  const unsigned seed = std::random_device{}();
  SCOPED_TRACE(seed);
  // 0 bytes, one byte, and more than zlib's 64 KiB window and our output buffer.
  for (const size_t size : {size_t{0}, size_t{1}, size_t{65535}, size_t{200000}}) {
    const std::string data = random_bytes(size, seed);
    FixtureTree dir;
    dir.file("/data.gz", make_gzip(data, 1700000000));
    const ToolResult test = run_tool({"gzip", "-t", dir.host("/data.gz")});
    EXPECT_EQ(test.exit_code, 0) << size << ": " << test.output;
    const ToolResult unpacked = run_tool({"gzip", "-dc", dir.host("/data.gz")});
    EXPECT_EQ(unpacked.exit_code, 0);
    EXPECT_EQ(unpacked.output.size(), data.size());
    EXPECT_TRUE(unpacked.output == data) << "size " << size;
  }
}

TEST(Gzip, ACorruptedCrcIsCaught) {
  require_tools();
  std::string gz = make_gzip("hello, gpucheck", 0);
  FixtureTree dir;
  dir.file("/good.gz", gz);
  EXPECT_EQ(run_tool({"gzip", "-t", dir.host("/good.gz")}).exit_code, 0);
  gz[gz.size() - 8] = static_cast<char>(gz[gz.size() - 8] ^ 0x01); // the trailer's CRC-32
  dir.file("/bad.gz", gz);
  EXPECT_NE(run_tool({"gzip", "-t", dir.host("/bad.gz")}).exit_code, 0);
}

TEST(Gzip, CompressesTextAndKeepsTheTimeInItsHeader) {
  // Report-like text: the stored blocks of before made it larger, zlib makes it far smaller.
  std::string text;
  for (int i = 0; i < 2000; ++i) {
    text += fmt::format("PASS  gpu.memory[GPU {}]  {} GiB free of 80\n", i % 8, 70 + i % 7);
  }
  const std::string gz = make_gzip(text, 1700000000);
  EXPECT_LT(gz.size() * 10, text.size()) << gz.size() << " of " << text.size();
  ASSERT_GE(gz.size(), 10u);
  EXPECT_EQ(gz.substr(0, 3), "\x1f\x8b\x08");
  EXPECT_EQ(gz.substr(4, 4), std::string("\x00\xf1\x53\x65", 4)); // 1700000000, little-endian
  EXPECT_EQ(gz[9], '\x03');                                       // OS: Unix
  EXPECT_EQ(make_gzip(text, 1700000000), gz) << "the same bytes in give the same bytes out";
}

TEST(Tar, TarExtractsEveryMemberWithItsContent) {
  require_tools();
  const unsigned seed = std::random_device{}();
  SCOPED_TRACE(seed);
  std::string long_name(100, 'f'); // the longest name ustar holds without a prefix
  long_name[40] = '/';
  const std::vector<ArchiveMember> members = {
      {"bundle/README.txt", "hello\n"},
      {"bundle/empty.txt", ""},
      {"bundle/sources/exactly-512.bin", random_bytes(512, seed)},
      {"bundle/sources/big.bin", random_bytes(70001, seed + 1)},
      {long_name, "a name of 100 bytes"}};
  FixtureTree dir;
  dir.file("/b.tar.gz", make_gzip(make_tar(members, 1700000000), 1700000000));
  dir.dir("/out");
  const ToolResult listing = run_tool({"tar", "-tvzf", dir.host("/b.tar.gz")});
  ASSERT_EQ(listing.exit_code, 0) << listing.output;
  EXPECT_NE(listing.output.find("-rw-r--r-- root/root"), std::string::npos) << listing.output;
  EXPECT_NE(listing.output.find("2023-11-1"), std::string::npos) << listing.output;
  const ToolResult extract =
      run_tool({"tar", "-xzf", dir.host("/b.tar.gz"), "-C", dir.host("/out")});
  ASSERT_EQ(extract.exit_code, 0) << extract.output;
  for (const ArchiveMember& member : members) {
    EXPECT_TRUE(read_file(dir.host("/out/" + member.name)) == member.data) << member.name;
  }
  // Python's tarfile (what a support engineer's script uses) reads every member back too.
  ASSERT_TRUE(tool_on_path("python3"));
  dir.dir("/py");
  const ToolResult python =
      run_tool({"python3", "-c",
                "import sys, tarfile\n"
                "with tarfile.open(sys.argv[1], 'r:gz') as t:\n"
                "    for m in t.getmembers():\n"
                "        assert m.isfile() and m.mode == 0o644 and m.uname == 'root', m\n"
                "    t.extractall(sys.argv[2])\n",
                dir.host("/b.tar.gz"), dir.host("/py")});
  ASSERT_EQ(python.exit_code, 0) << python.output;
  for (const ArchiveMember& member : members) {
    EXPECT_TRUE(read_file(dir.host("/py/" + member.name)) == member.data) << member.name;
  }
}

TEST(Tar, RefusesNamesUstarCannotHold) {
  EXPECT_THROW((void)make_tar({{std::string(101, 'x'), ""}}, 0), std::invalid_argument);
  EXPECT_THROW((void)make_tar({{"", "data"}}, 0), std::invalid_argument);
}

TEST(Tar, EndsWithTwoZeroBlocksAndPadsToBlocks) {
  const std::string tar = make_tar({{"a", "xyz"}}, 0);
  EXPECT_EQ(tar.size(), 512u * 4); // header, one data block, two zero blocks
  EXPECT_EQ(tar.substr(1024), std::string(1024, '\0'));
}

// Found by fuzz_archive: a clock past 2242 wrote 12 octal digits into the 11-digit field and over
// the checksum's first byte. Such a time is clamped, and the header stays a valid ustar header.
TEST(Tar, AFarFutureOrNegativeTimeIsClampedIntoItsField) {
  for (const int64_t mtime : {int64_t{1} << 40, INT64_MAX, int64_t{-5}}) {
    const std::string tar = make_tar({{"a", "xyz"}}, mtime);
    const std::string stamp = tar.substr(136, 12);
    EXPECT_EQ(stamp,
              mtime < 0 ? std::string("00000000000\0", 12) : std::string("77777777777\0", 12))
        << mtime;
    EXPECT_EQ(tar[148 + 6], '\0') << "the checksum field keeps its terminator";
  }
}

} // namespace
} // namespace gpucheck::testing
