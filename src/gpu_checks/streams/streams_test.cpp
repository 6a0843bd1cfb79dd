// gpu.streams: its typed judge, its payload as the child writes it, and its place in the run
// (first of the checks of their own folders: after compute in each GPU's child, after gpu.cudnn
// in the report, as before it had a folder).
#include <gtest/gtest.h>

#include <algorithm>

#include "engine/plan.hpp"
#include "gpu_checks/registry.hpp"
#include "gpu_checks/streams/streams.hpp"
#include "gpucheck/registry.hpp"

namespace gpucheck::gpu_checks::streams {
namespace {

ChildReport replayed(uint64_t mismatches) {
  ChildReport child;
  child.envelope.verify = {
      {std::string(k_verify_kind), "graph replays", 1024, mismatches, 0, "", ""}};
  return child;
}

TEST(Streams, AWrongReplayIsSaidInTheSummary) {
  checks::GpuTarget gpu;
  const checks::Judgement j = judge(gpu, Payload{{0, -5, -5, 0}, 0.0125}, replayed(3));
  EXPECT_TRUE(j.findings.empty()); // the mismatch itself is the common verification finding
  EXPECT_EQ(j.summary,
            "GPU 0: stream priorities 0..-5, event-timed kernel 12.5 us, graph replay WRONG");
}

TEST(Streams, ThePayloadKeepsItsKeys) {
  // What bench/compare.py and older reports' readers know: the keys did not change with the move.
  EXPECT_EQ(nlohmann::json(Payload{{0, -5, -5, 0}, 0.0125}),
            nlohmann::json::parse(R"({"priorities": {"least": 0, "greatest": -5,
                "high_stream": -5, "low_stream": 0}, "event_ms": 0.0125})"));
  const Expected<Payload> missing = read_payload<Payload>(nlohmann::json::parse(
      R"({"priorities": {"least": 0, "greatest": -5, "high_stream": -5}, "event_ms": 1})"));
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().message, "low_stream is missing");
}

TEST(Streams, RunsWhereItRanBeforeItHadAFolder) {
  const std::vector<engine::Work> group = engine::child_groups(engine::all_works()).front();
  ASSERT_GE(group.size(), 2U);
  EXPECT_EQ(engine::work_name(group[0]), "compute");
  EXPECT_EQ(engine::work_name(group[1]), "streams");
  const std::span<const CheckDef> checks = all_checks();
  const auto at = [&checks](std::string_view id) {
    return std::find_if(checks.begin(), checks.end(),
                        [id](const CheckDef& c) { return c.info.id == id; }) -
           checks.begin();
  };
  EXPECT_EQ(at("gpu.streams"), at("gpu.cudnn") + 1);
  EXPECT_EQ(at("gpu.p2p"), at("gpu.memory_pool") + 1);
}

} // namespace
} // namespace gpucheck::gpu_checks::streams
