// The recorded snapshots in tests/snapshots/: they parse, round-trip exactly, are written in
// the canonical form gpucheck itself writes, and match the published schema.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <utility>
#include <vector>

#include "golden/scenarios.hpp"
#include "gpucheck/model/json_io.hpp"
#include "gpucheck/model/json_numbers.hpp"
#include "gpucheck/model/text.hpp"
#include "render/json.hpp"
#include "support/json_schema.hpp"

namespace gpucheck::testing {
namespace {

std::string snapshot_path(const std::string& name) {
  return std::string(GPUCHECK_TEST_DATA_DIR) + "/snapshots/" + name + ".json";
}

std::string read_snapshot_text(const std::string& name) {
  std::ifstream in(snapshot_path(name), std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

TEST(RecordedSnapshots, AtLeastFiveAreRecorded) {
  EXPECT_GE(recorded_snapshot_names().size(), 5u);
}

class RecordedSnapshot : public ::testing::TestWithParam<std::string> {};

TEST_P(RecordedSnapshot, ParseToJsonParseIsEqual) {
  Expected<SystemSnapshot> first = snapshot_from_text(read_snapshot_text(GetParam()));
  ASSERT_TRUE(first) << first.error().message;
  Expected<SystemSnapshot> second = snapshot_from_text(nlohmann::json(*first).dump());
  ASSERT_TRUE(second) << second.error().message;
  EXPECT_EQ(*first, *second);
}

TEST_P(RecordedSnapshot, IsWrittenAsGpucheckWritesIt) {
  const std::string text = read_snapshot_text(GetParam());
  Expected<SystemSnapshot> snapshot = snapshot_from_text(text);
  ASSERT_TRUE(snapshot) << snapshot.error().message;
  const std::string canonical = render::render_snapshot_json(*snapshot);
  const char* update = std::getenv("GPUCHECK_UPDATE_GOLDEN");
  if (update != nullptr && std::string(update) == "1") {
    // After a model change: keep every recorded fact, add the new keys with their defaults.
    std::ofstream out(snapshot_path(GetParam()), std::ios::binary);
    out << canonical;
    ASSERT_TRUE(out.good());
    return;
  }
  EXPECT_EQ(canonical, text) << "a key is missing, extra or out of order (after a model change, "
                                "GPUCHECK_UPDATE_GOLDEN=1 rewrites the recorded snapshots)";
}

TEST_P(RecordedSnapshot, MatchesTheSnapshotSchema) {
  const std::vector<std::string> violations = report_schema().validate(
      nlohmann::json::parse(read_snapshot_text(GetParam())), "#/$defs/SystemSnapshot");
  EXPECT_TRUE(violations.empty()) << describe(violations);
}

TEST_P(RecordedSnapshot, AReportWrappingItReadsBackTheSameSnapshot) {
  // --from-snapshot also accepts a whole report (gpucheck --json > file).
  const std::string text = read_snapshot_text(GetParam());
  Report report;
  report.snapshot = *snapshot_from_text(text);
  Expected<SystemSnapshot> again = snapshot_from_text(render::render_json(report));
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_EQ(*again, report.snapshot);
}

INSTANTIATE_TEST_SUITE_P(Files, RecordedSnapshot, ::testing::ValuesIn(recorded_snapshot_names()),
                         [](const ::testing::TestParamInfo<std::string>& param_info) {
                           return param_info.param;
                         });

// Found by fuzz_snapshot: 2.3e62 in an integer field was converted out of range (undefined
// behaviour). A fraction-or-exponent number that no snapshot holds is refused, naming where.
TEST(SnapshotInput, ANumberOutOfRangeIsAnErrorNamingItsPlace) {
  for (const char* value : {"2.28e62", "-1.5", "3e9"}) {
    const std::string text =
        std::string(R"({"format_version": 1, "host": {"cpu_count": )") + value + "}}";
    const Expected<SystemSnapshot> read = snapshot_from_text(text);
    ASSERT_FALSE(read) << value;
    EXPECT_NE(read.error().message.find("at $.host.cpu_count: a number out of range"),
              std::string::npos)
        << read.error().message;
  }
  // What snapshots do hold still reads: watts, seconds, a timeout.
  const Expected<SystemSnapshot> fine =
      snapshot_from_text(R"({"format_version": 1, "kernel_log": {"uptime_s": 123456.5}})");
  ASSERT_TRUE(fine) << fine.error().message;
  EXPECT_EQ(fine->kernel_log.uptime_s, 123456.5);
}

// Issue 34, item 8: an integer outside its field's range wrapped on the way in (GPU index 2^64-1
// showed as "GPU -1", temperature 2^63-1 as -1, a byte count of -1 as 16 EiB). Each is refused
// naming its place; the same fields in range read as written.
TEST(SnapshotInput, AnIntegerOutOfItsFieldsRangeIsAnErrorNamingItsPlace) {
  const std::string gpu_head = R"({"format_version": 1, "gpus": [{"index": 0, )";
  for (const auto& [field, value] :
       std::vector<std::pair<std::string, std::string>>{{"index", "18446744073709551615"},
                                                        {"temperature_c", "9223372036854775807"},
                                                        {"memory_total_bytes", "-1"},
                                                        {"sm_count", "4294967296"}}) {
    const std::string text =
        std::string(R"({"format_version": 1, "gpus": [{")") + field + "\": " + value + "}]}";
    const Expected<SystemSnapshot> read = snapshot_from_text(text);
    ASSERT_FALSE(read) << field << " " << value;
    EXPECT_NE(read.error().message.find("at $.gpus[0]." + field +
                                        ": a number out of range for its field"),
              std::string::npos)
        << read.error().message;
  }
  const Expected<SystemSnapshot> fine = snapshot_from_text(
      gpu_head + R"("temperature_c": 91, "memory_total_bytes": 150754820096}]})");
  ASSERT_TRUE(fine) << fine.error().message;
  EXPECT_EQ(fine->gpus.at(0).memory_total_bytes, 150754820096U);
}

// Issue 34, item 10: a node's snapshot lists at most SystemSnapshot::k_max_gpus GPUs; one more is
// refused naming the count (the replay's cost grows with the GPUs and their links).
TEST(SnapshotInput, MoreGpusThanANodeCanHoldAreRefused) {
  const auto with_gpus = [](size_t count) {
    nlohmann::json gpus = nlohmann::json::array();
    for (size_t i = 0; i < count; ++i) {
      gpus.push_back({{"index", i}, {"name", "NVIDIA H200"}});
    }
    return nlohmann::json{{"format_version", 1}, {"gpus", gpus}}.dump();
  };
  const Expected<SystemSnapshot> most = snapshot_from_text(with_gpus(SystemSnapshot::k_max_gpus));
  ASSERT_TRUE(most) << most.error().message;
  EXPECT_EQ(most->gpus.size(), SystemSnapshot::k_max_gpus);
  const Expected<SystemSnapshot> over =
      snapshot_from_text(with_gpus(SystemSnapshot::k_max_gpus + 1));
  ASSERT_FALSE(over);
  EXPECT_EQ(over.error().message,
            "snapshot lists 1025 GPUs; gpucheck reads at most 1024 for one node");
}

// Issue 34, item 9: a variable whose name says it holds a secret (CUDA_MPS_TOKEN) is hidden in
// the snapshot, so in every output; a replayed snapshot of an older gpucheck is hidden on reading.
TEST(SnapshotInput, SecretVariablesAreHidden) {
  const Expected<SystemSnapshot> read = snapshot_from_text(
      R"({"format_version": 1, "environment": {"variables": {"CUDA_MPS_TOKEN": "abc123secretvalue",
          "CUDA_VISIBLE_DEVICES": "0,1"}}})");
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_EQ(read->environment.variables.at("CUDA_MPS_TOKEN"), k_hidden_secret);
  EXPECT_EQ(read->environment.variables.at("CUDA_VISIBLE_DEVICES"), "0,1");
  for (const char* name : {"HF_TOKEN", "aws_secret_access_key", "DB_PASSWORD", "API_KEY",
                           "GOOGLE_APPLICATION_CREDENTIALS"}) {
    EXPECT_TRUE(is_secret_variable_name(name)) << name;
  }
  for (const char* name :
       {"CUDA_VISIBLE_DEVICES", "LD_LIBRARY_PATH", "NVIDIA_DRIVER_CAPABILITIES"}) {
    EXPECT_FALSE(is_secret_variable_name(name)) << name;
  }
}

} // namespace
} // namespace gpucheck::testing

namespace gpucheck::testing {
namespace {

// A child's payload is read with the snapshot's number checks (found by fuzz_child_output,
// 2026-11-28: 4.4e28 in a CUDA device's int field was converted without a check, undefined
// behaviour); the same payload with its numbers in range reads.
TEST(ChildPayloadNumbers, OutOfRangeNumbersAreErrorsNamingThePlace) {
  nlohmann::json payload = {{"driver_version", 13000}, {"devices", {{{"ordinal", 0}}}}};
  EXPECT_TRUE(read_model_numbers_checked<CudaDriverInfo>(payload).has_value());
  payload["devices"][0]["ordinal"] = 4.44444e28;
  Expected<CudaDriverInfo> huge = read_model_numbers_checked<CudaDriverInfo>(payload);
  ASSERT_FALSE(huge.has_value());
  EXPECT_EQ(huge.error().message, "at $.devices[0].ordinal: a number out of range");
  payload["devices"][0]["ordinal"] = 1ULL << 40;
  Expected<CudaDriverInfo> wraps = read_model_numbers_checked<CudaDriverInfo>(payload);
  ASSERT_FALSE(wraps.has_value());
  EXPECT_EQ(wraps.error().message, "at $.devices[0].ordinal: a number out of range for its field");
}

} // namespace
} // namespace gpucheck::testing
