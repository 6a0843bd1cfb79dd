#include "protocol/census.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "protocol/messages.hpp"
#include "support/fixture_tree.hpp"

namespace gpucheck::protocol {
namespace {

using gpucheck::testing::FixtureTree;

std::vector<HostGpu> three() {
  return {{"0000:18:00.0", "GPU-aaaa1111-0000"},
          {"0000:28:00.0", "GPU-bbbb2222-0000"},
          {"0000:38:00.0", "GPU-bbbb3333-0000"}};
}

TEST(ProtocolCensus, DriverGpusComeFromProcInPciOrderWithTheirUuids) {
  FixtureTree tree;
  tree.file("/proc/driver/nvidia/gpus/0000:3B:00.0/information",
            "Model: \t\t NVIDIA H200\nIRQ:   \t\t 41\nGPU UUID: \t GPU-123e1095-1ac7\n");
  tree.file("/proc/driver/nvidia/gpus/0000:1a:00.0/information", "Model: \t\t NVIDIA H200\n");
  const std::vector<HostGpu> gpus = driver_gpus(tree.root());
  ASSERT_EQ(gpus.size(), 2U);
  EXPECT_EQ(gpus[0].bus_id, "0000:1a:00.0");
  EXPECT_EQ(gpus[0].uuid, "");
  EXPECT_EQ(gpus[1].bus_id, "0000:3b:00.0");
  EXPECT_EQ(gpus[1].uuid, "GPU-123e1095-1ac7");
  EXPECT_TRUE(driver_gpus(tree.root() + "/nowhere").empty());
  EXPECT_FALSE(gpus[1].mig);
}

TEST(ProtocolCensus, AGpuSplitIntoMigInstancesIsMarked) {
  FixtureTree tree;
  tree.file("/proc/driver/nvidia/gpus/0000:3b:00.0/information",
            "Model: \t\t NVIDIA H100\nGPU UUID: \t GPU-aaaa\nDevice Minor: \t 2\n");
  tree.file("/proc/driver/nvidia/gpus/0000:4b:00.0/information",
            "Model: \t\t NVIDIA H100\nGPU UUID: \t GPU-bbbb\nDevice Minor: \t 3\n");
  tree.file("/proc/driver/nvidia/capabilities/gpu2/mig/gi1/access", "DeviceFileMinor: 21\n");
  tree.dir("/proc/driver/nvidia/capabilities/gpu3/mig");
  const std::vector<HostGpu> gpus = driver_gpus(tree.root());
  ASSERT_EQ(gpus.size(), 2U);
  EXPECT_TRUE(gpus[0].mig);
  EXPECT_FALSE(gpus[1].mig); // MIG mode on, no instance yet
}

TEST(ProtocolCensus, EachChildSeesItsGpuByUuid) {
  std::vector<VisibleGpu> v = visible_gpus(three(), std::nullopt);
  ASSERT_EQ(v.size(), 3U);
  EXPECT_EQ(v[1].visible_devices, "GPU-bbbb2222-0000");
  // Indices, in the list's order; CUDA stops at the first bad entry.
  v = visible_gpus(three(), "2,0,7,1");
  ASSERT_EQ(v.size(), 2U);
  EXPECT_EQ(v[0].gpu.bus_id, "0000:38:00.0");
  EXPECT_EQ(v[1].gpu.bus_id, "0000:18:00.0");
  // A unique UUID prefix; an ambiguous one stops the list.
  v = visible_gpus(three(), "GPU-aaaa,GPU-bbbb");
  ASSERT_EQ(v.size(), 1U);
  EXPECT_EQ(v[0].visible_devices, "GPU-aaaa1111-0000");
  // MIG instances pass through as they are.
  v = visible_gpus(three(), "MIG-0f00-1234");
  ASSERT_EQ(v.size(), 1U);
  EXPECT_EQ(v[0].visible_devices, "MIG-0f00-1234");
  EXPECT_EQ(v[0].gpu.bus_id, "");
  EXPECT_TRUE(visible_gpus(three(), "").empty());
  EXPECT_TRUE(visible_gpus(three(), "-1").empty());
  EXPECT_EQ(visible_gpus(three(), "1,1").size(), 1U);
}

TEST(ProtocolCensus, RoundTrip) {
  Census census;
  CensusGpu gpu;
  gpu.uuid = "GPU-1";
  gpu.bus_id = "0000:3b:00.0";
  gpu.free_bytes = 1234;
  gpu.total_bytes = 5678;
  gpu.processes = {{42, "python3", 999}, {43, "", std::nullopt}};
  census.gpus.push_back(gpu);
  const Census back = census_from_json(census_to_json(census));
  ASSERT_EQ(back.gpus.size(), 1U);
  EXPECT_EQ(back.gpus[0].uuid, "GPU-1");
  EXPECT_EQ(back.gpus[0].free_bytes, 1234U);
  EXPECT_EQ(back.gpus[0].total_bytes, 5678U);
  ASSERT_EQ(back.gpus[0].processes.size(), 2U);
  EXPECT_EQ(back.gpus[0].processes[0].name, "python3");
  EXPECT_EQ(back.gpus[0].processes[0].used_bytes, 999U);
  EXPECT_FALSE(back.gpus[0].processes[1].used_bytes);
  EXPECT_EQ(describe_processes(back.gpus[0].processes), "42 (python3), 43");
  EXPECT_NE(back.find(HostGpu{"0000:3B:00.0", ""}), nullptr);
  EXPECT_NE(back.find(HostGpu{"", "GPU-1"}), nullptr);
  EXPECT_EQ(back.find(HostGpu{"0000:99:00.0", "GPU-2"}), nullptr);
}

TEST(ProtocolCensus, GarbageGivesAnErrorNotAnException) {
  for (const nlohmann::json& bad :
       {nlohmann::json(nullptr), nlohmann::json("text"), nlohmann::json::array({1, 2}),
        nlohmann::json{{"gpus", "x"}},
        nlohmann::json{{"gpus", {{{"free_bytes", "lots"}, {"processes", 7}}}}}}) {
    const Census census = census_from_json(bad);
    if (census.gpus.empty()) {
      EXPECT_FALSE(census.error.empty()) << bad.dump();
    } else {
      EXPECT_FALSE(census.gpus[0].free_bytes);
      EXPECT_TRUE(census.gpus[0].processes.empty());
    }
  }
}

TEST(EngineMessages, OneVocabularyBothWays) {
  for (const GateMessage m :
       {GateMessage::setup, GateMessage::go, GateMessage::resume, GateMessage::stop,
        GateMessage::context_built, GateMessage::ready, GateMessage::paused, GateMessage::done}) {
    EXPECT_EQ(parse_gate_message(static_cast<char>(m)), m);
    EXPECT_NE(to_string(m), "unknown");
  }
  EXPECT_FALSE(parse_gate_message('Z'));
  EXPECT_FALSE(parse_gate_message('\0'));
  EXPECT_TRUE(sent_by_parent(GateMessage::go));
  EXPECT_TRUE(sent_by_parent(GateMessage::stop));
  EXPECT_FALSE(gate::stop_requested()); // no channel: never
  EXPECT_FALSE(sent_by_parent(GateMessage::done));
  // Not scheduled (no control channel): the child's side returns at once.
  EXPECT_FALSE(gate::scheduled());
  EXPECT_FALSE(gate::await_setup());
  gate::ready_and_wait();
  gate::done();
}

} // namespace
} // namespace gpucheck::protocol
