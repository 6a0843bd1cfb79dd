#include <gtest/gtest.h>

#include "probes/collect.hpp"

namespace gpucheck::probes {
namespace {

GpuInfo nvml_gpu(int index, std::string bus_id, std::string uuid) {
  GpuInfo gpu;
  gpu.index = index;
  gpu.name = "NVML name " + std::to_string(index);
  gpu.pci_bus_id = std::move(bus_id);
  gpu.uuid = std::move(uuid);
  return gpu;
}

CudaDevice cuda_device(int ordinal, std::string bus_id, std::string uuid) {
  CudaDevice device;
  device.ordinal = ordinal;
  device.name = "CUDA name " + std::to_string(ordinal);
  device.pci_bus_id = std::move(bus_id);
  device.uuid = std::move(uuid);
  device.cc_major = 8;
  device.cc_minor = 6;
  device.sm_count = 84 + ordinal;
  device.total_memory_bytes = 1000U + static_cast<uint64_t>(ordinal);
  return device;
}

TEST(NormalizeBusId, AllSpellingsMeetInOneForm) {
  EXPECT_EQ(normalize_bus_id("00000000:3B:00.0"), "0000:3b:00.0");
  EXPECT_EQ(normalize_bus_id("0000:3B:00.0"), "0000:3b:00.0");
  EXPECT_EQ(normalize_bus_id("0000:3b:00.0"), "0000:3b:00.0");
  EXPECT_EQ(normalize_bus_id("3B:00.0"), "0000:3b:00.0");
  EXPECT_EQ(normalize_bus_id("00000001:0A:1F.7"), "0001:0a:1f.7");
  EXPECT_EQ(normalize_bus_id("0000:3B:00.1"), "0000:3b:00.1");
  EXPECT_EQ(normalize_bus_id(""), "");
  EXPECT_EQ(normalize_bus_id("Not A Bus"), "not a bus");
  EXPECT_EQ(normalize_bus_id("zz:yy:00.0"), "zz:yy:00.0");
}

TEST(MergeGpus, MatchesByBusIdAcrossSpellingsAndSetsOrdinals) {
  CudaDriverInfo cuda;
  // CUDA_VISIBLE_DEVICES=2,0: the driver's order differs from NVML's.
  cuda.devices = {cuda_device(0, "0000:AF:00.0", ""), cuda_device(1, "0000:3B:00.0", "")};
  const std::vector<GpuInfo> merged =
      merge_gpus({nvml_gpu(0, "0000:3B:00.0", "GPU-a"), nvml_gpu(1, "0000:5E:00.0", "GPU-b"),
                  nvml_gpu(2, "0000:AF:00.0", "GPU-c")},
                 cuda);
  ASSERT_EQ(merged.size(), 3U);
  EXPECT_EQ(merged[0].cuda_ordinal, 1);
  EXPECT_FALSE(merged[1].cuda_ordinal); // hidden from CUDA
  EXPECT_EQ(merged[2].cuda_ordinal, 0);
  EXPECT_EQ(merged[0].name, "NVML name 0"); // NVML's own values win
  EXPECT_EQ(merged[2].sm_count, 84);        // the driver API fills what NVML lacks
  EXPECT_EQ(merged[0].sm_count, 85);
  EXPECT_FALSE(merged[1].sm_count);
}

TEST(MergeGpus, FallsBackToUuidWhenBusIdsDoNotMatch) {
  CudaDriverInfo cuda;
  cuda.devices = {cuda_device(0, "", "gpu-B")};
  const std::vector<GpuInfo> merged = merge_gpus(
      {nvml_gpu(0, "0000:3B:00.0", "GPU-a"), nvml_gpu(1, "0000:5E:00.0", "GPU-b")}, cuda);
  ASSERT_EQ(merged.size(), 2U);
  EXPECT_FALSE(merged[0].cuda_ordinal);
  EXPECT_EQ(merged[1].cuda_ordinal, 0);
}

TEST(MergeGpus, DriverApiFillsOnlyMissingFacts) {
  GpuInfo gpu = nvml_gpu(0, "0000:3B:00.0", "GPU-a");
  gpu.cc_major = 9;
  gpu.cc_minor = 0;
  gpu.memory_total_bytes = 5;
  CudaDriverInfo cuda;
  cuda.devices = {cuda_device(0, "0000:3b:00.0", "GPU-a")};
  const std::vector<GpuInfo> merged = merge_gpus({gpu}, cuda);
  ASSERT_EQ(merged.size(), 1U);
  EXPECT_EQ(merged[0].cc_major, 9);
  EXPECT_EQ(merged[0].cc_minor, 0);
  EXPECT_EQ(merged[0].memory_total_bytes, 5U);
  EXPECT_EQ(merged[0].sm_count, 84);
}

TEST(MergeGpus, WithoutNvmlTheDriverApiDevicesBecomeGpus) {
  CudaDriverInfo cuda;
  cuda.devices = {cuda_device(0, "0000:3B:00.0", "GPU-a"), cuda_device(1, "0000:5E:00.0", "GPU-b")};
  const std::vector<GpuInfo> merged = merge_gpus({}, cuda);
  ASSERT_EQ(merged.size(), 2U);
  for (int i = 0; i < 2; ++i) {
    const GpuInfo& gpu = merged[static_cast<size_t>(i)];
    EXPECT_EQ(gpu.index, i);
    EXPECT_EQ(gpu.cuda_ordinal, i);
    EXPECT_EQ(gpu.name, "CUDA name " + std::to_string(i));
    EXPECT_EQ(gpu.uuid, cuda.devices[static_cast<size_t>(i)].uuid);
    EXPECT_EQ(gpu.pci_bus_id, cuda.devices[static_cast<size_t>(i)].pci_bus_id);
    EXPECT_EQ(gpu.cc_major, 8);
    EXPECT_EQ(gpu.cc_minor, 6);
    EXPECT_EQ(gpu.sm_count, 84 + i);
    EXPECT_EQ(gpu.memory_total_bytes, 1000U + static_cast<uint64_t>(i));
    EXPECT_FALSE(gpu.temperature_c);
  }
}

TEST(MergeGpus, UnmatchedDeviceIsAppendedAfterNvmlGpus) {
  CudaDriverInfo cuda;
  cuda.devices = {cuda_device(0, "0000:99:00.0", "GPU-z")};
  const std::vector<GpuInfo> merged = merge_gpus({nvml_gpu(0, "0000:3B:00.0", "GPU-a")}, cuda);
  ASSERT_EQ(merged.size(), 2U);
  EXPECT_FALSE(merged[0].cuda_ordinal);
  EXPECT_EQ(merged[1].index, 1);
  EXPECT_EQ(merged[1].cuda_ordinal, 0);
  EXPECT_EQ(merged[1].uuid, "GPU-z");
}

TEST(MergeGpus, NoDevicesLeavesNvmlUntouched) {
  const std::vector<GpuInfo> nvml{nvml_gpu(0, "0000:3B:00.0", "GPU-a")};
  EXPECT_EQ(merge_gpus(nvml, CudaDriverInfo{}), nvml);
}

} // namespace
} // namespace gpucheck::probes
