#include "platform/gpu/kernel_image.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <set>
#include <string>

#include "kernel_build.hpp"

namespace gpucheck::platform::gpu {
namespace {

std::string run_command(const std::string& command) {
  std::string output;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) {
    return output;
  }
  std::array<char, 4096> buffer{};
  size_t n = 0;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) {
    output.append(buffer.data(), n);
  }
  ::pclose(pipe);
  return output;
}

/// sm_NN targets the build's nvcc lists (plain ones: the fatbin carries no sm_90a variants).
std::set<int> toolkit_archs() {
  std::set<int> archs;
  const std::string listing =
      run_command(fmt::format("{} --list-gpu-code", kernel_build::k_nvcc_path));
  size_t pos = 0;
  while ((pos = listing.find("sm_", pos)) != std::string::npos) {
    pos += 3;
    size_t end = pos;
    while (end < listing.size() && std::isdigit(static_cast<unsigned char>(listing[end])) != 0) {
      ++end;
    }
    const bool plain =
        end == listing.size() || std::isspace(static_cast<unsigned char>(listing[end])) != 0;
    if (end > pos && plain) {
      archs.insert(std::stoi(listing.substr(pos, end - pos)));
    }
    pos = end;
  }
  return archs;
}

TEST(KernelImage, EmbeddedFatbinHasSassForEveryToolkitArchAndLowestPtx) {
  if (!kernel_build::k_kernels_built) {
    GTEST_SKIP() << "built without nvcc: no kernels embedded";
  }
  const std::set<int> expected = toolkit_archs();
  ASSERT_FALSE(expected.empty()) << "nvcc --list-gpu-code gave nothing";
  auto entries = parse_fatbin(embedded_fatbin());
  ASSERT_TRUE(entries) << entries.error().message;
  std::set<int> sass;
  std::set<int> ptx;
  for (const FatbinEntry& entry : *entries) {
    EXPECT_FALSE(entry.compressed) << to_string(entry) << " is compressed";
    (entry.kind == FatbinEntry::Kind::sass ? sass : ptx).insert(entry.arch);
  }
  EXPECT_EQ(sass, expected);
  EXPECT_EQ(ptx, std::set<int>{*expected.begin()});
  EXPECT_EQ(kernel_build::k_ptx_arch, *expected.begin());
}

TEST(KernelImage, CuobjdumpListsTheSameImagesInTheBinary) {
  const char* candidates[] = {"/usr/local/cuda/bin/cuobjdump", "/usr/bin/cuobjdump"};
  std::string tool;
  for (const char* candidate : candidates) {
    if (std::filesystem::exists(candidate)) {
      tool = candidate;
    }
  }
  if (tool.empty() || !kernel_build::k_kernels_built) {
    GTEST_SKIP() << "no cuobjdump on this machine (the toolkit package lacks it)";
  }
  const std::string listing = run_command(tool + " --list-elf --list-ptx " +
                                          std::filesystem::read_symlink("/proc/self/exe").string());
  auto entries = parse_fatbin(embedded_fatbin());
  ASSERT_TRUE(entries);
  for (const FatbinEntry& entry : *entries) {
    const std::string name = entry.kind == FatbinEntry::Kind::sass
                                 ? "." + to_string(entry) + ".cubin"
                                 : fmt::format(".sm_{}.ptx", entry.arch);
    EXPECT_NE(listing.find(name), std::string::npos) << name << " missing from:\n" << listing;
  }
}

std::vector<std::byte> synthetic_fatbin(const std::vector<std::pair<uint16_t, uint32_t>>& items,
                                        uint64_t flags = 0) {
  std::vector<std::byte> image(16);
  const auto put = [&](size_t offset, auto value) {
    std::memcpy(image.data() + offset, &value, sizeof value);
  };
  for (const auto& [kind, arch] : items) {
    const size_t at = image.size();
    image.resize(at + 64 + 32);
    put(at, kind);
    put(at + 4, uint32_t{64});
    put(at + 8, uint64_t{32});
    put(at + 24, uint16_t{0});
    put(at + 26, static_cast<uint16_t>(kind == 1 ? 9 : 0));
    put(at + 28, arch);
    put(at + 40, flags);
  }
  put(0, uint32_t{0xBA55ED50u});
  put(4, uint16_t{1});
  put(6, uint16_t{16});
  put(8, uint64_t{image.size() - 16});
  return image;
}

TEST(KernelImage, ParsesEntriesInOrder) {
  const auto image = synthetic_fatbin({{1, 75}, {2, 75}, {2, 90}});
  auto entries = parse_fatbin(image);
  ASSERT_TRUE(entries) << entries.error().message;
  ASSERT_EQ(entries->size(), 3U);
  EXPECT_EQ(to_string((*entries)[0]), "compute_75");
  EXPECT_EQ((*entries)[0].ptx_isa_major, 9);
  EXPECT_EQ(to_string((*entries)[2]), "sm_90");
  EXPECT_FALSE((*entries)[1].compressed);
}

TEST(KernelImage, SeesCompressedEntries) {
  auto entries = parse_fatbin(synthetic_fatbin({{2, 80}}, 0x2011));
  ASSERT_TRUE(entries);
  EXPECT_TRUE((*entries)[0].compressed);
}

TEST(KernelImage, RejectsBadMagicTruncationAndOverruns) {
  auto image = synthetic_fatbin({{2, 80}});
  auto bad_magic = image;
  bad_magic[0] = std::byte{0};
  EXPECT_FALSE(parse_fatbin(bad_magic));
  EXPECT_FALSE(parse_fatbin(std::span(image).first(10)));
  auto overrun = image;
  const uint64_t huge = 1 << 20;
  std::memcpy(overrun.data() + 16 + 8, &huge, sizeof huge);
  EXPECT_FALSE(parse_fatbin(overrun));
  auto bad_kind = image;
  const uint16_t kind = 7;
  std::memcpy(bad_kind.data() + 16, &kind, sizeof kind);
  EXPECT_FALSE(parse_fatbin(bad_kind));
}

TEST(KernelImage, RouteIsSassPtxJitOrNone) {
  const std::vector<FatbinEntry> entries = {{FatbinEntry::Kind::ptx, 75, 9, 0, false},
                                            {FatbinEntry::Kind::sass, 90, 0, 0, false}};
  EXPECT_EQ(image_route(entries, 9, 0), "sass");
  EXPECT_EQ(image_route(entries, 8, 6), "ptx-jit");
  EXPECT_EQ(image_route(entries, 7, 0), "none");
  EXPECT_EQ(image_route({}, 9, 0), "none");
}

} // namespace
} // namespace gpucheck::platform::gpu
