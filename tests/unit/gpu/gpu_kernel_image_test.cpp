#include "gpu/kernel_image.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <set>
#include <sstream>
#include <string>

#include "gpucheck/model/stack_versions.hpp"
#include "kernel_build.hpp"

namespace gpucheck::gpu {
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

// ---- The run-time choice of an image ----

/// An image as this build's toolkits make them (cmake/Kernels.cmake): SASS for `sass`, PTX for
/// `ptx_arch` of ISA isa_major.isa_minor.
KernelImage synthetic_image(const std::string& toolkit, int version, const std::vector<int>& sass,
                            int ptx_arch, int isa_major, int isa_minor) {
  KernelImage image;
  image.toolkit = toolkit;
  image.toolkit_version = version;
  for (int arch : sass) {
    image.entries.push_back({FatbinEntry::Kind::sass, arch, 0, 0, false});
  }
  image.entries.push_back({FatbinEntry::Kind::ptx, ptx_arch, isa_major, isa_minor, false});
  return image;
}

/// The three images of a build with every toolkit: CUDA 13.0 (nvcc), 12.9 and 11.8 (NVRTC).
std::vector<KernelImage> fleet_images() {
  return {synthetic_image("13.0", 13000, {75, 80, 86, 87, 88, 89, 90, 100, 103, 110, 120, 121}, 75,
                          9, 0),
          synthetic_image(
              "12.9", 12090,
              {50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86, 87, 89, 90, 100, 101, 103, 120, 121}, 50,
              8, 0),
          synthetic_image("11.8", 11080, {50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86, 87, 89, 90},
                          50, 7, 4)};
}

/// "cuda12.9/sass cuda11.8/sass": the candidates in order.
std::string order(const ImageChoice& choice, const std::vector<KernelImage>& images) {
  std::string out;
  for (const ImageCandidate& c : choice.candidates) {
    out += (out.empty() ? "" : " ") + images.at(c.image).name() + "/" + c.route;
  }
  return out;
}

struct ChoiceCase {
  const char* what;
  int driver;
  int cc_major;
  int cc_minor;
  const char* expected; ///< order(); "" when none fits
};

TEST(KernelImageChoice, PicksByDriverBranchAndComputeCapability) {
  const std::vector<KernelImage> images = fleet_images();
  const ChoiceCase cases[] = {
      {"R470 (CUDA 11.4), Maxwell", 11040, 5, 0, "cuda11.8/sass"},
      {"R470, A100", 11040, 8, 0, "cuda11.8/sass"},
      {"R470, A10 (sm_86)", 11040, 8, 6, "cuda11.8/sass"},
      {"R470, Kepler K80", 11040, 3, 7, ""},
      {"R520 (CUDA 11.8), H100", 11080, 9, 0, "cuda11.8/sass"},
      {"R450 (CUDA 11.0), V100: SASS by minor-version compatibility", 11000, 7, 0, "cuda11.8/sass"},
      {"R525 (CUDA 12.0), L4", 12000, 8, 9, "cuda12.9/sass cuda11.8/sass"},
      {"R535 (CUDA 12.2), H100", 12020, 9, 0, "cuda12.9/sass cuda11.8/sass"},
      {"R550 (CUDA 12.4), Pascal P100", 12040, 6, 0, "cuda12.9/sass cuda11.8/sass"},
      {"R570 (CUDA 12.8), H100 (the h100x8 snapshot)", 12080, 9, 0, "cuda12.9/sass cuda11.8/sass"},
      {"R570, Blackwell B200", 12080, 10, 0, "cuda12.9/sass cuda11.8/ptx-jit"},
      {"R570, Blackwell RTX 5090", 12080, 12, 0, "cuda12.9/sass cuda11.8/ptx-jit"},
      {"R580 (CUDA 13.0), H100", 13000, 9, 0, "cuda13.0/sass cuda12.9/sass cuda11.8/sass"},
      {"R580, B200", 13000, 10, 0, "cuda13.0/sass cuda12.9/sass cuda11.8/ptx-jit"},
      {"R580, GB10 (sm_121)", 13000, 12, 1, "cuda13.0/sass cuda12.9/sass cuda11.8/ptx-jit"},
      {"R580, Maxwell (CUDA 13 has no sm_52)", 13000, 5, 2, "cuda12.9/sass cuda11.8/sass"},
      {"R580, Volta V100 (CUDA 13 has no sm_70)", 13000, 7, 0, "cuda12.9/sass cuda11.8/sass"},
      {"R580, a GPU newer than every toolkit", 13000, 13, 0,
       "cuda13.0/ptx-jit cuda12.9/ptx-jit cuda11.8/ptx-jit"},
      {"R580, Kepler", 13000, 3, 5, ""},
      {"R440 (CUDA 10.2), V100: no image's toolkit major", 10020, 7, 0, ""},
      {"driver version unknown, H100", 0, 9, 0, "cuda13.0/sass cuda12.9/sass cuda11.8/sass"},
  };
  for (const ChoiceCase& c : cases) {
    SCOPED_TRACE(c.what);
    const ImageChoice choice = choose_images(images, c.driver, c.cc_major, c.cc_minor);
    EXPECT_EQ(order(choice, images), c.expected);
    if (choice.candidates.empty()) {
      EXPECT_FALSE(choice.none_reason.empty());
      EXPECT_NE(choice.none_reason.find(fmt::format("sm_{}{}", c.cc_major, c.cc_minor)),
                std::string::npos)
          << choice.none_reason;
    } else {
      EXPECT_TRUE(choice.none_reason.empty());
      EXPECT_NE(
          choice.candidates.front().why.find(images.at(choice.candidates.front().image).name()),
          std::string::npos);
    }
  }
}

TEST(KernelImageChoice, ReasonsNameWhatWasPassedOverAndWhy) {
  const std::vector<KernelImage> images = fleet_images();
  const ImageChoice r535 = choose_images(images, 12020, 9, 0);
  ASSERT_FALSE(r535.candidates.empty());
  const std::string& why = r535.candidates.front().why;
  EXPECT_NE(why.find("driver 12020 (CUDA 12.2)"), std::string::npos) << why;
  EXPECT_NE(why.find("passed over: cuda13.0: its SASS sm_90 needs a CUDA 13 driver"),
            std::string::npos)
      << why;
  const ImageChoice kepler = choose_images(images, 13000, 3, 7);
  EXPECT_NE(kepler.none_reason.find("older than Maxwell"), std::string::npos) << kepler.none_reason;
  const ImageChoice old_driver = choose_images(images, 10020, 7, 0);
  EXPECT_NE(old_driver.none_reason.find("cuda11.8: its SASS sm_70 needs a CUDA 11 driver"),
            std::string::npos)
      << old_driver.none_reason;
  EXPECT_EQ(choose_images({}, 13000, 9, 0).none_reason, "this gpucheck carries no kernel images");
}

TEST(KernelImageChoice, ForcedPtxJitLeavesOnlyPtxTheDriverCanCompile) {
  const std::vector<KernelImage> images = fleet_images();
  EXPECT_EQ(order(choose_images(images, 13000, 9, 0, true), images),
            "cuda13.0/ptx-jit cuda12.9/ptx-jit cuda11.8/ptx-jit");
  // A CUDA 12.2 driver cannot JIT ISA 9.0; the 12.9 image's PTX is lowered to ISA 8.0 (CUDA 12.0).
  EXPECT_EQ(order(choose_images(images, 12020, 9, 0, true), images),
            "cuda12.9/ptx-jit cuda11.8/ptx-jit");
  // R470 JITs ISA 7.4 and nothing newer.
  EXPECT_EQ(order(choose_images(images, 11040, 8, 0, true), images), "cuda11.8/ptx-jit");
  EXPECT_EQ(order(choose_images(images, 11030, 8, 0, true), images), "");
  const ImageChoice jit = choose_images(images, 13000, 9, 0, true);
  EXPECT_NE(jit.candidates.front().why.find("CUDA_FORCE_PTX_JIT=1"), std::string::npos);
}

TEST(KernelImageChoice, AnImageNamedByTheEnvironmentIsTriedEvenWhereItDoesNotFit) {
  const std::vector<KernelImage> images = fleet_images();
  EXPECT_EQ(order(choose_images(images, 13000, 9, 0, false, "cuda11.8"), images), "cuda11.8/sass");
  const ImageChoice forced = choose_images(images, 12020, 9, 0, false, "cuda13.0");
  EXPECT_EQ(order(forced, images), "cuda13.0/sass");
  EXPECT_NE(forced.candidates.front().why.find("GPUCHECK_KERNEL_IMAGE=cuda13.0"),
            std::string::npos);
  const ImageChoice unknown = choose_images(images, 13000, 9, 0, false, "cuda10.2");
  EXPECT_TRUE(unknown.candidates.empty());
  EXPECT_NE(unknown.none_reason.find("names no image"), std::string::npos);
}

TEST(KernelImageChoice, PtxIsaVersionsMapToTheDriversThatJitThem) {
  EXPECT_EQ(ptx_isa_min_driver(7, 4), 11040); // R470
  EXPECT_EQ(ptx_isa_min_driver(7, 8), 11080);
  EXPECT_EQ(ptx_isa_min_driver(8, 0), 12000);
  EXPECT_EQ(ptx_isa_min_driver(8, 5), 12050);
  EXPECT_EQ(ptx_isa_min_driver(8, 7), 12080);
  EXPECT_EQ(ptx_isa_min_driver(8, 8), 12090);
  EXPECT_EQ(ptx_isa_min_driver(9, 0), 13000);
  EXPECT_EQ(cuda_version_text(12020), "12.2");
  EXPECT_EQ(cuda_version_text(13000), "13.0");
}

// ---- The images this binary carries ----

/// The SASS architectures each generation of GPU reports, Maxwell to Blackwell (x86_64 hosts and
/// the Arm boards of the same architectures).
const std::vector<int> k_fleet_archs = {50, 52, 53, 60, 61,  62,  70,  72,  75, 80,
                                        86, 87, 89, 90, 100, 101, 103, 120, 121};

std::set<int> csv_ints(const std::string& csv) {
  std::set<int> out;
  std::stringstream in(csv);
  std::string item;
  while (std::getline(in, item, ',')) {
    out.insert(std::stoi(item));
  }
  return out;
}

TEST(KernelImage, ListsEveryEmbeddedImageAndCoversEveryDriverBranchFromMaxwellOn) {
  if (!kernel_build::k_kernels_built) {
    GTEST_SKIP() << "built without nvcc: no kernels embedded";
  }
  const std::vector<KernelImage>& images = embedded_images();
  ASSERT_FALSE(images.empty());
  EXPECT_EQ(images.front().toolkit, kernel_build::k_toolkit_release);
  // The table (docs/building.md shows it): every image, every entry.
  std::string table = "image      toolkit  entries\n";
  for (size_t slot = 0, i = 0; slot < kernel_build::k_image_toolkits.size(); ++slot) {
    const std::string toolkit = kernel_build::k_image_toolkits.at(slot);
    if (toolkit.empty()) {
      continue;
    }
    ASSERT_LT(i, images.size());
    const KernelImage& image = images.at(i++);
    SCOPED_TRACE(image.name());
    EXPECT_EQ(image.toolkit, toolkit);
    ASSERT_FALSE(image.entries.empty()) << "the fatbin does not parse";
    std::set<int> sass;
    std::vector<FatbinEntry> ptx;
    std::string row;
    for (const FatbinEntry& e : image.entries) {
      EXPECT_FALSE(e.compressed) << to_string(e);
      row += " " + to_string(e);
      if (e.kind == FatbinEntry::Kind::sass) {
        sass.insert(e.arch);
      } else {
        row += fmt::format("(ISA {}.{})", e.ptx_isa_major, e.ptx_isa_minor);
        ptx.push_back(e);
      }
    }
    table += fmt::format("{:<10} {:<8}{}\n", image.name(), image.toolkit, row);
    EXPECT_EQ(sass, csv_ints(kernel_build::k_image_sass_archs.at(slot)));
    ASSERT_EQ(ptx.size(), 1U);
    EXPECT_EQ(ptx[0].arch, *sass.begin()) << "PTX for the lowest architecture";
    EXPECT_EQ(fmt::format("{}.{}", ptx[0].ptx_isa_major, ptx[0].ptx_isa_minor),
              kernel_build::k_image_ptx_isa.at(slot));
  }
  std::printf("%s", table.c_str());
  if (images.size() < 3) {
    GTEST_SKIP() << "only " << images.size()
                 << " kernel image(s) embedded (the CUDA 12.9 and 11.8 compilers were not "
                    "installed: scripts/install-deps.sh); older drivers are not covered";
  }
  // Coverage: on R470 (CUDA 11.4) every GPU from sm_50 to sm_90 runs SASS, and the PTX R470 can
  // JIT exists; on R535 and R570 every GPU up to Blackwell runs SASS; on R580 too.
  for (int arch : k_fleet_archs) {
    SCOPED_TRACE(arch);
    for (int driver : {11040, 12020, 12080, 13000}) {
      if (driver < 12000 && arch > 90) {
        continue; // R470-R520 do not know Blackwell
      }
      const ImageChoice choice = choose_images(images, driver, arch / 10, arch % 10);
      ASSERT_FALSE(choice.candidates.empty()) << driver << ": " << choice.none_reason;
      EXPECT_EQ(choice.candidates.front().route, "sass") << driver;
    }
  }
  const ImageChoice r470_jit = choose_images(images, 11040, 5, 0, true);
  ASSERT_FALSE(r470_jit.candidates.empty()) << r470_jit.none_reason;
  EXPECT_EQ(images.at(r470_jit.candidates.front().image).name(), "cuda11.8");
}

} // namespace
} // namespace gpucheck::gpu
