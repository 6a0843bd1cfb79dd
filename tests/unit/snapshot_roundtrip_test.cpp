// The recorded snapshots in tests/snapshots/: they parse, round-trip exactly, are written in
// the canonical form gpucheck itself writes, and match the published schema.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "golden/scenarios.hpp"
#include "gpucheck/model/json_io.hpp"
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

} // namespace
} // namespace gpucheck::testing
