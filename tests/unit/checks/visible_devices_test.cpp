#include "checks/rules/visible_devices.hpp"

#include <gtest/gtest.h>

namespace gpucheck::checks {
namespace {

const std::vector<VisibleGpuRef> k_four = {
    {0, "GPU-aaaa1111-0000-0000-0000-000000000000", false},
    {1, "GPU-bbbb2222-0000-0000-0000-000000000000", false},
    {2, "GPU-aaaa3333-0000-0000-0000-000000000000", true},
    {3, "GPU-cccc4444-0000-0000-0000-000000000000", false},
};

struct Row {
  std::string value;
  std::size_t accepted;
  std::optional<std::size_t> first_invalid;
};

TEST(VisibleDevices, Forms) {
  const Row rows[] = {
      {"", 0, std::nullopt},
      {"   ", 0, std::nullopt},
      {"0", 1, std::nullopt},
      {"0,1,2,3", 4, std::nullopt},
      {" 1 , 3 ", 2, std::nullopt},
      {"-1", 0, 0},
      {"0,2,-1,1", 2, 2},
      {"4", 0, 0},
      {"1,7", 1, 1},
      {"NoDevFiles", 0, 0},
      {"GPU-bbbb", 1, std::nullopt},
      {"gpu-BBBB2222", 1, std::nullopt},
      {"GPU-aaaa", 0, 0},
      {"GPU-dddd", 0, 0},
      {"MIG-0f1e2d3c-aaaa-bbbb-cccc-000000000000", 1, std::nullopt},
      {"0,", 1, 1},
      {"0,abc,1", 1, 1},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.value);
    const VisibleDevices parsed = parse_visible_devices(row.value, k_four, true);
    EXPECT_EQ(parsed.accepted_count(), row.accepted);
    EXPECT_EQ(parsed.first_invalid, row.first_invalid);
  }
}

TEST(VisibleDevices, EntriesAfterTheFirstInvalidAreIgnored) {
  const VisibleDevices parsed = parse_visible_devices("0,2,-1,1", k_four, true);
  ASSERT_EQ(parsed.entries.size(), 4U);
  EXPECT_TRUE(parsed.entries[0].accepted);
  EXPECT_EQ(parsed.entries[1].ordinal, 2);
  EXPECT_FALSE(parsed.entries[2].accepted);
  EXPECT_EQ(parsed.entries[2].problem, "a negative index hides every device from here on");
  EXPECT_FALSE(parsed.entries[3].accepted);
  EXPECT_EQ(parsed.entries[3].kind, VisibleEntryKind::index);
  EXPECT_EQ(parsed.entries[3].problem, "ignored: CUDA stops at the first invalid entry");
}

TEST(VisibleDevices, UuidPrefixResolvesToOneGpu) {
  const VisibleDevices parsed = parse_visible_devices("GPU-cccc", k_four, true);
  ASSERT_EQ(parsed.entries.size(), 1U);
  EXPECT_EQ(parsed.entries[0].kind, VisibleEntryKind::gpu_uuid);
  EXPECT_EQ(parsed.entries[0].nvml_index, 3);
  const VisibleDevices ambiguous = parse_visible_devices("GPU-aaaa", k_four, true);
  EXPECT_EQ(ambiguous.entries[0].problem, "the UUID prefix matches 2 GPUs");
}

TEST(VisibleDevices, MigNeedsAMigGpu) {
  std::vector<VisibleGpuRef> no_mig = k_four;
  for (VisibleGpuRef& gpu : no_mig) {
    gpu.mig_enabled = false;
  }
  const VisibleDevices parsed = parse_visible_devices("MIG-1234", no_mig, true);
  EXPECT_EQ(parsed.first_invalid, 0U);
  EXPECT_EQ(parsed.entries[0].problem, "a MIG device id, but no GPU has MIG enabled");
}

TEST(VisibleDevices, WithoutGpuListOnlyTheFormIsChecked) {
  EXPECT_EQ(parse_visible_devices("7,GPU-zzzz", {}, false).accepted_count(), 2U);
  EXPECT_EQ(parse_visible_devices("7,-1", {}, false).first_invalid, 1U);
  EXPECT_EQ(parse_visible_devices("7", {}, true).first_invalid, 0U);
}

} // namespace
} // namespace gpucheck::checks
