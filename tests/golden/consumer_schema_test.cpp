// docs/report.consumer.schema.json (made by scripts/make-consumer-schema.py from the exact
// docs/report.schema.json): it accepts what a later gpucheck of the same schema_version may add
// and rejects what would break a consumer (docs/report-format.md, "schema_version policy").
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <functional>

#include "golden/scenarios.hpp"
#include "support/json_schema.hpp"

namespace gpucheck::testing {
namespace {

using nlohmann::json;

const JsonSchema& strict() {
  return report_schema();
}

const JsonSchema& consumer() {
  return consumer_report_schema();
}

/// A golden report with GPUs, failing results and findings (tests/golden/degraded_hw.json).
json degraded_report() {
  std::ifstream in(std::string(GPUCHECK_TEST_DATA_DIR) + "/golden/degraded_hw.json");
  return json::parse(in);
}

/// The first result with a finding; the golden report has one.
json& first_finding(json& report) {
  for (json& result : report["results"]) {
    if (!result["findings"].empty()) {
      return result["findings"][0];
    }
  }
  throw std::runtime_error("degraded_hw.json has no finding");
}

TEST(ConsumerSchema, EveryGoldenReportAndRecordedSnapshotValidatesAgainstBoth) {
  for (const Scenario& scenario : golden_scenarios()) {
    std::ifstream in(std::string(GPUCHECK_TEST_DATA_DIR) + "/golden/" + scenario.name + ".json");
    const json report = json::parse(in);
    EXPECT_EQ(strict().validate(report), std::vector<std::string>{}) << scenario.name;
    EXPECT_EQ(consumer().validate(report), std::vector<std::string>{}) << scenario.name;
  }
  for (const std::string& name : recorded_snapshot_names()) {
    std::ifstream in(std::string(GPUCHECK_TEST_DATA_DIR) + "/snapshots/" + name + ".json");
    const json snapshot = json::parse(in);
    EXPECT_EQ(strict().validate(snapshot, "#/$defs/SystemSnapshot"), std::vector<std::string>{});
    EXPECT_EQ(consumer().validate(snapshot, "#/$defs/SystemSnapshot"), std::vector<std::string>{})
        << name;
  }
}

struct Change {
  const char* what;
  std::function<void(json&)> apply;
  const char* place; // where the strict schema says the violation is
};

TEST(ConsumerSchema, AcceptsUnknownKeysThatTheStrictSchemaRejects) {
  const Change changes[] = {
      {"top level",
       [](json& r) {
         r["attestation"] = {{"signed", true}};
       },
       "(root)"},
      {"a result", [](json& r) { r["results"][0]["retries"] = 2; }, "/results/0"},
      {"a finding", [](json& r) { first_finding(r)["doc_url"] = "https://example.org"; },
       "/results/2/findings/0"},
      {"a GPU", [](json& r) { r["snapshot"]["gpus"][1]["board_id"] = 7; }, "/snapshot/gpus/1"},
      {"the summary", [](json& r) { r["summary"]["ignored"] = 1; }, "/summary"},
  };
  for (const Change& change : changes) {
    json report = degraded_report();
    change.apply(report);
    const std::vector<std::string> rejected = strict().validate(report);
    ASSERT_EQ(rejected.size(), 1u) << change.what << "\n" << describe(rejected);
    EXPECT_NE(rejected[0].find("was unexpected"), std::string::npos) << rejected[0];
    EXPECT_EQ(rejected[0].rfind(change.place, 0), 0u) << change.what << ": " << rejected[0];
    EXPECT_EQ(consumer().validate(report), std::vector<std::string>{}) << change.what;
  }
}

TEST(ConsumerSchema, AcceptsUnknownValuesOfOpenSetsThatTheStrictSchemaRejects) {
  const Change changes[] = {
      {"mode", [](json& r) { r["context"]["mode"] = "burn_in"; }, "/context/mode"},
      {"container kind",
       [](json& r) { r["snapshot"]["environment"]["container"]["kind"] = "apptainer"; },
       "/snapshot/environment/container/kind"},
      {"kernel module flavor", [](json& r) { r["snapshot"]["kernel_module"]["flavor"] = "grid"; },
       "/snapshot/kernel_module/flavor"},
      {"a new finding code", [](json& r) { first_finding(r)["code"] = "gpu.future_code"; }, ""},
      {"a new check id", [](json& r) { r["results"][0]["check_id"] = "gpu.future_check"; }, ""},
  };
  for (const Change& change : changes) {
    json report = degraded_report();
    change.apply(report);
    const std::vector<std::string> rejected = strict().validate(report);
    // A new code or check id is valid even for the strict schema: neither is an enum.
    if (std::string(change.place).empty()) {
      EXPECT_EQ(rejected, std::vector<std::string>{}) << change.what;
    } else {
      ASSERT_EQ(rejected.size(), 1u) << change.what << "\n" << describe(rejected);
      EXPECT_EQ(rejected[0].rfind(std::string(change.place) + ": ", 0), 0u) << rejected[0];
      EXPECT_NE(rejected[0].find("is not one of"), std::string::npos) << rejected[0];
    }
    EXPECT_EQ(consumer().validate(report), std::vector<std::string>{}) << change.what;
  }
}

TEST(ConsumerSchema, RejectsWhatBreaksAConsumerLikeTheStrictSchema) {
  const Change changes[] = {
      {"missing top-level key", [](json& r) { r.erase("summary"); }, "(root)"},
      {"missing result key", [](json& r) { r["results"][0].erase("status"); }, "/results/0"},
      {"missing finding key", [](json& r) { first_finding(r).erase("severity"); }, "/results/"},
      {"missing GPU key", [](json& r) { r["snapshot"]["gpus"][0].erase("uuid"); },
       "/snapshot/gpus/0"},
      {"wrong type", [](json& r) { r["results"][0]["duration_ms"] = "12"; },
       "/results/0/duration_ms"},
      {"wrong type in a GPU", [](json& r) { r["snapshot"]["gpus"][0]["index"] = "0"; },
       "/snapshot/gpus/0/index"},
      {"null where never null", [](json& r) { r["results"][0]["title"] = nullptr; },
       "/results/0/title"},
      {"new status (closed set)", [](json& r) { r["results"][0]["status"] = "ok"; },
       "/results/0/status"},
      {"new severity (closed set)", [](json& r) { first_finding(r)["severity"] = "critical"; },
       "/results/"},
      {"new verdict (closed set)", [](json& r) { r["summary"]["overall"] = "skip"; },
       "/summary/overall"},
      {"another schema_version", [](json& r) { r["context"]["schema_version"] = 2; },
       "/context/schema_version"},
      {"malformed finding code", [](json& r) { first_finding(r)["code"] = "Not A Code"; },
       "/results/"},
      {"malformed time", [](json& r) { r["context"]["generated_at"] = "yesterday"; },
       "/context/generated_at"},
  };
  for (const Change& change : changes) {
    json report = degraded_report();
    change.apply(report);
    for (const JsonSchema* schema : {&strict(), &consumer()}) {
      const std::vector<std::string> rejected = schema->validate(report);
      ASSERT_EQ(rejected.size(), 1u) << change.what << "\n" << describe(rejected);
      EXPECT_EQ(rejected[0].rfind(change.place, 0), 0u) << change.what << ": " << rejected[0];
    }
  }
}

} // namespace
} // namespace gpucheck::testing
