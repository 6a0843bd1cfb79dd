// The embedded compatibility data: valid against its schema, every entry sourced, [unverified]
// marks kept, fast to parse; and the validator's errors for broken --matrix files.

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <functional>
#include <limits>
#include <regex>
#include <sstream>

#include "compat/lookup.hpp"
#include "compat/matrix.hpp"
#include "compat/schema.hpp"

namespace gpucheck::compat {
namespace {

std::string read_source_file(const std::string& relative) {
  std::ifstream in(std::string(GPUCHECK_SOURCE_DIR) + "/" + relative, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

nlohmann::json embedded_json() {
  return nlohmann::json::parse(embedded_matrix_json());
}

/// The embedded text with one edit applied, parsed as a --matrix file would be.
Expected<Matrix> parse_edited(const std::function<void(nlohmann::json&)>& edit) {
  nlohmann::json j = embedded_json();
  edit(j);
  return parse_matrix(j.dump(), "edited.json");
}

std::string error_of(const Expected<Matrix>& m) {
  return m ? std::string("(no error)") : m.error().message;
}

TEST(CompatMatrix, EmbeddedBytesAreTheRepositoryFiles) {
  EXPECT_EQ(embedded_matrix_json(), read_source_file("data/compat/matrix.json"));
  EXPECT_EQ(embedded_matrix_schema_json(), read_source_file("data/compat/matrix.schema.json"));
}

TEST(CompatMatrix, EmbeddedDataValidatesAgainstItsSchema) {
  const std::vector<SchemaProblem> problems =
      validate_schema(embedded_json(), nlohmann::json::parse(embedded_matrix_schema_json()));
  for (const SchemaProblem& p : problems) {
    ADD_FAILURE() << p.path << ": " << p.message;
  }
  EXPECT_TRUE(problems.empty());
}

TEST(CompatMatrix, EmbeddedDataParsesWithAllChecks) {
  const Expected<Matrix> m = parse_matrix(embedded_matrix_json(), "embedded");
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->matrix_version, embedded_matrix().matrix_version);
  EXPECT_FALSE(m->matrix_version.empty());
}

TEST(CompatMatrix, EveryEntryHasAnHttpsSource) {
  const nlohmann::json j = embedded_json();
  int entries = 0;
  for (const auto& [key, value] : j.items()) {
    if (!value.is_array()) {
      continue;
    }
    for (size_t i = 0; i < value.size(); ++i) {
      ++entries;
      ASSERT_TRUE(value[i].contains("source")) << key << "[" << i << "]";
      const std::string source = value[i]["source"].get<std::string>();
      EXPECT_EQ(source.rfind("https://", 0), 0u) << key << "[" << i << "]: " << source;
    }
  }
  for (const nlohmann::json& package : j["forward_compat"]["packages"]) {
    ++entries;
    EXPECT_EQ(package["source"].get<std::string>().rfind("https://", 0), 0u);
  }
  EXPECT_GT(entries, 240);
}

TEST(CompatMatrix, CoversTheFactsSheet) {
  const Matrix& m = embedded_matrix();
  EXPECT_EQ(ga_release(m, Version({13, 0}))->linux_min_driver.text, "580.65.06");
  EXPECT_EQ(ga_release(m, Version({12, 0}))->linux_min_driver.text, "525.60.13");
  EXPECT_EQ(ga_release(m, Version({11, 8}))->linux_min_driver.text, "520.61.05");
  EXPECT_EQ(ga_release(m, Version({10, 0}))->linux_min_driver.text, "410.48");
  EXPECT_EQ(ga_release(m, Version({12, 7})), nullptr); // there is no CUDA 12.7
  EXPECT_EQ(mvc_for(m, 12)->linux_min_driver.text, "525.60.13");
  EXPECT_EQ(mvc_for(m, 11)->linux_min_driver.text, "450.80.02");
  EXPECT_EQ(mvc_for(m, 10), nullptr);
  EXPECT_EQ(cc_info(m, Version({7, 0}))->last_driver_branch, 580);
  EXPECT_EQ(cc_info(m, Version({3, 7}))->last_driver_branch, 470);
  EXPECT_EQ(newest_known_branch(m), 615);
  EXPECT_EQ(newest_known_cuda(m).str(), "13.4");
}

TEST(CompatMatrix, UnverifiedMarksAreKept) {
  const Matrix& m = embedded_matrix();
  EXPECT_TRUE(ga_release(m, Version({13, 0}))->windows_min_driver_unverified);
  EXPECT_TRUE(cc_info(m, Version({8, 8}))->provenance.unverified());
  const GpuProduct* b100 = gpu_by_name(m, "NVIDIA B100");
  ASSERT_NE(b100, nullptr);
  EXPECT_TRUE(b100->provenance.unverified());
  int unverified_cudnn = 0;
  for (const CudnnRelease& r : m.cudnn) {
    unverified_cudnn += r.provenance.unverified() ? 1 : 0;
  }
  EXPECT_EQ(unverified_cudnn, 3); // 8.6-8.8, 9.11-9.16, 9.18-9.27
  for (const PytorchWheel& w : m.pytorch) {
    if (w.version.str() == "2.6" || w.version.str() == "2.10") {
      EXPECT_TRUE(w.provenance.unverified()) << w.version.str() << " " << w.wheel;
      EXPECT_FALSE(w.archs) << "an unread arch list must stay unknown";
    }
  }
}

TEST(CompatMatrix, GpuNamesArePlaced) {
  const Matrix& m = embedded_matrix();
  const std::pair<const char*, const char*> k_names[] = {
      {"NVIDIA H200", "9.0"},
      {"NVIDIA H100 80GB HBM3", "9.0"},
      {"NVIDIA GH200 480GB", "9.0"},
      {"Tesla V100-SXM2-16GB", "7.0"},
      {"NVIDIA GeForce RTX 4090", "8.9"},
      {"NVIDIA A100-SXM4-80GB", "8.0"},
      {"NVIDIA A10", "8.6"},
      {"NVIDIA L40S", "8.9"},
      {"NVIDIA GB10", "12.1"},
      {"NVIDIA B200", "10.0"},
      {"NVIDIA RTX A6000", "8.6"},
      {"Tesla K80", "3.7"},
      {"Tesla T4", "7.5"},
      {"NVIDIA GeForce RTX 5090", "12.0"},
  };
  for (const auto& [name, cc] : k_names) {
    const GpuProduct* p = gpu_by_name(m, name);
    ASSERT_NE(p, nullptr) << name;
    EXPECT_EQ(p->cc.str(), cc) << name;
  }
  EXPECT_EQ(gpu_by_name(m, "NVIDIA GeForce RTX 4090")->gpu_class, "geforce");
  EXPECT_EQ(gpu_by_name(m, "NVIDIA H200")->gpu_class, "datacenter");
  EXPECT_EQ(gpu_by_name(m, "Quadro GV100")->cc.str(), "7.0");
  EXPECT_EQ(gpu_by_name(m, "Mystery Accelerator"), nullptr);
}

TEST(CompatMatrixErrors, BadJsonNamesTheFile) {
  const Expected<Matrix> m = parse_matrix("{\"matrix_version\": ", "broken.json");
  ASSERT_FALSE(m);
  EXPECT_NE(m.error().message.find("broken.json: not valid JSON"), std::string::npos)
      << m.error().message;
}

TEST(CompatMatrixErrors, WrongTypeNamesThePath) {
  const Expected<Matrix> m =
      parse_edited([](nlohmann::json& j) { j["cuda_releases"][3]["linux_min_driver"] = 580; });
  EXPECT_NE(error_of(m).find("edited.json: $.cuda_releases[3].linux_min_driver: expected"),
            std::string::npos)
      << error_of(m);
}

// An integer beyond int's range was truncated silently (branch 2^32 + 570 read as
// 570, a branch the matrix knows). It is an error naming the JSON path and the value.
TEST(CompatMatrixErrors, AnIntegerOutOfRangeIsAnErrorNotTruncated) {
  for (const nlohmann::json& value : {nlohmann::json(uint64_t{4294967296} + 570),
                                      nlohmann::json(uint64_t{18446744073709551615U})}) {
    const Expected<Matrix> m =
        parse_edited([&value](nlohmann::json& j) { j["driver_branches"][1]["branch"] = value; });
    EXPECT_NE(error_of(m).find("edited.json: $.driver_branches[1].branch: " + value.dump() +
                               " is out of range"),
              std::string::npos)
        << error_of(m);
  }
  // The healthy twin: the largest int is in range and read.
  const Expected<Matrix> fits = parse_edited([](nlohmann::json& j) {
    j["driver_branches"][1]["branch"] = std::numeric_limits<int>::max();
  });
  EXPECT_TRUE(fits) << error_of(fits);
}

TEST(CompatMatrixErrors, ImpossibleDriverVersion) {
  const Expected<Matrix> m =
      parse_edited([](nlohmann::json& j) { j["cuda_releases"][0]["linux_min_driver"] = "5.0"; });
  EXPECT_NE(error_of(m).find("$.cuda_releases[0].linux_min_driver"), std::string::npos)
      << error_of(m);
}

TEST(CompatMatrixErrors, MissingSource) {
  const Expected<Matrix> m = parse_edited([](nlohmann::json& j) { j["gpus"][2].erase("source"); });
  EXPECT_NE(error_of(m).find("$.gpus[2]: missing required member 'source'"), std::string::npos)
      << error_of(m);
}

TEST(CompatMatrixErrors, PlainHttpSourceRejected) {
  const Expected<Matrix> m =
      parse_edited([](nlohmann::json& j) { j["pytorch"][0]["source"] = "http://example.com/x"; });
  EXPECT_NE(error_of(m).find("$.pytorch[0].source"), std::string::npos) << error_of(m);
}

TEST(CompatMatrixErrors, UnknownStatusRejected) {
  const Expected<Matrix> m =
      parse_edited([](nlohmann::json& j) { j["cudnn"][0]["status"] = "probably"; });
  EXPECT_NE(error_of(m).find("$.cudnn[0].status"), std::string::npos) << error_of(m);
}

TEST(CompatMatrixErrors, RangeEndingBeforeItStarts) {
  const Expected<Matrix> m =
      parse_edited([](nlohmann::json& j) { j["cuda_targets"][0]["cuda_to"] = "8.0"; });
  EXPECT_NE(error_of(m).find("$.cuda_targets[0].cuda_to: range ends (8.0) before it starts (9.0)"),
            std::string::npos)
      << error_of(m);
}

TEST(CompatMatrixErrors, ReleaseListedTwice) {
  const Expected<Matrix> m =
      parse_edited([](nlohmann::json& j) { j["cuda_releases"].push_back(j["cuda_releases"][5]); });
  EXPECT_NE(error_of(m).find("is listed twice"), std::string::npos) << error_of(m);
}

TEST(CompatMatrixErrors, PciDeviceListedTwice) {
  const Expected<Matrix> m = parse_edited([](nlohmann::json& j) {
    j["pci_devices"]["devices"].push_back(j["pci_devices"]["devices"][3]);
  });
  EXPECT_NE(error_of(m).find("$.pci_devices.devices["), std::string::npos) << error_of(m);
  EXPECT_NE(error_of(m).find("is listed twice"), std::string::npos) << error_of(m);
}

TEST(CompatMatrixErrors, PciDeviceIdNotFourHexDigits) {
  const Expected<Matrix> m =
      parse_edited([](nlohmann::json& j) { j["pci_devices"]["devices"][0]["id"] = "0x2335"; });
  EXPECT_NE(error_of(m).find("$.pci_devices.devices[0].id"), std::string::npos) << error_of(m);
}

TEST(CompatMatrix, PciDevicesAreOptionalAndLookedUpBySysfsOrNvmlId) {
  const Expected<Matrix> without = parse_edited([](nlohmann::json& j) { j.erase("pci_devices"); });
  ASSERT_TRUE(without.has_value()) << error_of(without);
  EXPECT_FALSE(without.value().pci_devices);
  EXPECT_EQ(pci_device_name(without.value(), "0x2335"), nullptr);
  const Matrix& m = embedded_matrix();
  ASSERT_TRUE(m.pci_devices);
  EXPECT_EQ(m.pci_devices->driver.text, "595.45.04");
  for (const char* id : {"0x2335", "0x233510DE", "2335"}) {
    const PciDeviceName* h200 = pci_device_name(m, id);
    ASSERT_NE(h200, nullptr) << id;
    EXPECT_EQ(h200->name, "NVIDIA H200") << id;
  }
  EXPECT_EQ(pci_device_name(m, "0x1db1"), nullptr); // V100: older than Turing, not listed
  // Every listed GPU is Turing or later by the matrix's own name patterns, where one matches.
  for (const PciDeviceName& device : m.pci_devices->devices) {
    if (const GpuProduct* product = gpu_by_name(m, device.name)) {
      EXPECT_GE(product->cc, *Version::parse("7.5")) << device.name;
    }
  }
}

TEST(CompatMatrixErrors, LaterUpdateNeedingAnOlderDriver) {
  // 13.2 Update 2 (index 5) made to need less than 13.2 Update 1.
  const Expected<Matrix> m = parse_edited(
      [](nlohmann::json& j) { j["cuda_releases"][5]["linux_min_driver"] = "595.50.01"; });
  EXPECT_NE(error_of(m).find("$.cuda_releases[6].linux_min_driver"), std::string::npos)
      << error_of(m);
}

TEST(CompatMatrixErrors, WheelNotMatchingItsCuda) {
  const Expected<Matrix> m =
      parse_edited([](nlohmann::json& j) { j["pytorch"][0]["cuda"] = "11.8"; });
  EXPECT_NE(error_of(m).find("$.pytorch[0].wheel"), std::string::npos) << error_of(m);
}

TEST(CompatMatrixErrors, UnknownMemberRejected) {
  const Expected<Matrix> m =
      parse_edited([](nlohmann::json& j) { j["jax"][0]["colour"] = "green"; });
  EXPECT_NE(error_of(m).find("$.jax[0].colour: member not allowed here"), std::string::npos)
      << error_of(m);
}

TEST(CompatMatrixErrors, MissingFileNamesIt) {
  const Expected<Matrix> m = load_matrix_file("/nonexistent/matrix.json");
  ASSERT_FALSE(m);
  EXPECT_NE(m.error().message.find("/nonexistent/matrix.json"), std::string::npos);
}

TEST(CompatMatrixErrors, ValidFileLoads) {
  const std::string path = ::testing::TempDir() + "/gpucheck_matrix_ok.json";
  {
    nlohmann::json j = embedded_json();
    j["matrix_version"] = "2099.1.1";
    std::ofstream(path) << j.dump();
  }
  const Expected<Matrix> m = load_matrix_file(path);
  ASSERT_TRUE(m) << m.error().message;
  EXPECT_EQ(m->matrix_version, "2099.1.1");
  EXPECT_EQ(m->origin, path);
  std::remove(path.c_str());
}

TEST(SchemaValidator, ReportsTypeEnumRequiredAndPattern) {
  const nlohmann::json schema = nlohmann::json::parse(R"({
    "type": "object", "required": ["a"], "additionalProperties": false,
    "properties": {"a": {"$ref": "#/$defs/v"}, "b": {"enum": ["x", "y"]},
                   "c": {"type": "array", "minItems": 2, "items": {"type": "integer", "minimum": 3}}},
    "$defs": {"v": {"type": ["string", "null"], "pattern": "^[0-9]+$"}}})");
  EXPECT_TRUE(
      validate_schema(nlohmann::json::parse(R"({"a": "12", "b": "x", "c": [3, 4]})"), schema)
          .empty());
  EXPECT_TRUE(validate_schema(nlohmann::json::parse(R"({"a": null})"), schema).empty());
  const auto problems =
      validate_schema(nlohmann::json::parse(R"({"a": "1x", "b": "z", "c": [1], "d": 0})"), schema);
  ASSERT_EQ(problems.size(), 5u);
  EXPECT_EQ(problems[0].path, "$.a");
  EXPECT_EQ(problems[1].path, "$.b");
  EXPECT_EQ(problems[2].path, "$.c");
  EXPECT_EQ(problems[3].path, "$.c[0]");
  EXPECT_EQ(problems[4].path, "$.d");
  const auto missing = validate_schema(nlohmann::json::object(), schema);
  ASSERT_EQ(missing.size(), 1u);
  EXPECT_EQ(missing[0].message, "missing required member 'a'");
}

} // namespace
} // namespace gpucheck::compat

namespace gpucheck::compat {
namespace {

TEST(CompatMatrix, EveryGpuPatternCompiles) {
  for (const GpuProduct& gpu : embedded_matrix().gpus) {
    EXPECT_NO_THROW(std::regex(gpu.pattern, std::regex::ECMAScript | std::regex::icase))
        << gpu.pattern;
  }
}

TEST(CompatMatrix, NameLookupFollowsTheMatrixItIsGiven) {
  Matrix edited = embedded_matrix();
  EXPECT_EQ(gpu_by_name(edited, "NVIDIA H200")->cc.str(), "9.0");
  edited.gpus.front().pattern = "H200";
  edited.gpus.front().cc = Version({12, 0});
  EXPECT_EQ(gpu_by_name(edited, "NVIDIA H200")->cc.str(), "12.0");
}

} // namespace
} // namespace gpucheck::compat
