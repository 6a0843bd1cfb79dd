// The envelope every GPU check child writes and every judge reads (engine/payloads.hpp): the same
// code on both sides, so a renamed key fails here rather than passing every GPU-less test.

#include "engine/payloads.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace gpucheck::engine {
namespace {

ChildEnvelope everything_set() {
  ChildEnvelope envelope;
  envelope.failure = PayloadFailure{"device-local copies",        "cuMemcpyDtoDAsync", 700,
                                    "CUDA_ERROR_ILLEGAL_ADDRESS", "illegal address",   "it failed"};
  envelope.metrics = {{"h2d_gbps", 55.3, "GB/s", "pinned"}, {"d2d_gbps", 2099.7, "GB/s", ""}};
  envelope.verify = {{"copy", "pinned host->device", 1 << 24, 3, 17, "0x1", "0x2"},
                     {"compute", "fma", 1 << 20, 0, 0, "", ""}};
  return envelope;
}

TEST(EnginePayloads, RoundTripKeepsEveryField) {
  const ChildEnvelope envelope = everything_set();
  nlohmann::json out = {{"device", {{"cc", "9.0"}}}}; // the child's own keys stay
  write_envelope(envelope, out);
  EXPECT_EQ(out["device"]["cc"], "9.0");
  const Expected<ChildEnvelope> back = read_envelope(nlohmann::json::parse(out.dump()));
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back.value(), envelope);
  // Without a failure, and with a failure that named no call.
  ChildEnvelope quiet = everything_set();
  quiet.failure.reset();
  write_envelope(quiet, out);
  EXPECT_FALSE(out.contains("failure"));
  EXPECT_EQ(read_envelope(out).value(), quiet);
  quiet.failure = PayloadFailure{"arguments", "", 0, "", "", "bad device ordinal"};
  write_envelope(quiet, out);
  EXPECT_EQ(read_envelope(out).value(), quiet);
}

TEST(EnginePayloads, EveryRenamedOrRetypedKeyIsAnErrorNamingIt) {
  nlohmann::json good = nlohmann::json::object();
  write_envelope(everything_set(), good);
  // Each key of each part, removed and retyped, in turn.
  const std::vector<std::pair<std::string, std::string>> keys{
      {"metrics", "name"},    {"metrics", "value"},     {"metrics", "unit"},
      {"metrics", "note"},    {"verify", "kind"},       {"verify", "what"},
      {"verify", "checked"},  {"verify", "mismatches"}, {"verify", "first_index"},
      {"verify", "got"},      {"verify", "want"},       {"failure", "stage"},
      {"failure", "message"}, {"failure", "code"},      {"failure", "name"},
      {"failure", "text"}};
  for (const auto& [part, key] : keys) {
    for (const bool retype : {false, true}) {
      nlohmann::json bad = good;
      nlohmann::json& holder = part == "failure" ? bad[part] : bad[part][0];
      if (retype) {
        holder[key] = nlohmann::json::array();
      } else {
        holder.erase(key);
      }
      const Expected<ChildEnvelope> read = read_envelope(bad);
      ASSERT_FALSE(read) << part << "." << key << (retype ? " retyped" : " removed");
      EXPECT_NE(read.error().message.find(key), std::string::npos) << read.error().message;
    }
  }
}

TEST(EnginePayloads, GarbageIsAnErrorNotAnException) {
  for (const nlohmann::json& bad :
       {nlohmann::json(nullptr), nlohmann::json(42), nlohmann::json::array(),
        nlohmann::json{{"metrics", "x"}, {"verify", nlohmann::json::array()}},
        nlohmann::json{{"metrics", {1}}, {"verify", nlohmann::json::array()}},
        nlohmann::json{{"metrics", nlohmann::json::array()}, {"verify", {"x"}}},
        nlohmann::json{{"metrics", nlohmann::json::array()},
                       {"verify", nlohmann::json::array()},
                       {"failure", 3}},
        nlohmann::json{{"metrics", {{{"name", "x"}, {"value", -1.5}, {"unit", "u"}}}},
                       {"verify", nlohmann::json::array()}}}) {
    EXPECT_FALSE(read_envelope(bad)) << bad.dump();
  }
  // A negative count is not a count.
  nlohmann::json out = nlohmann::json::object();
  write_envelope(everything_set(), out);
  out["verify"][0]["mismatches"] = -1;
  EXPECT_FALSE(read_envelope(out));
}

} // namespace
} // namespace gpucheck::engine
