#include "render/json.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <set>

#include "golden/scenarios.hpp"
#include "gpucheck/model/json_io.hpp"
#include "support/json_schema.hpp"

namespace gpucheck::render {
namespace {

using nlohmann::json;
using testing::report_schema;

ChildFailure failure() {
  return ChildFailure{ChildFailureKind::signal, 11, "SIGSEGV", 0, 0.0, "killed by SIGSEGV",
                      "Segmentation fault"};
}

/// A report in which every optional is set and every list has an entry: every key the model can
/// emit appears, so validating it proves the schema lists them all.
Report every_field_set() {
  Report report;
  report.context = {1, "0.1.0", "2026-11-21T12:00:00Z", "standard", "2026.11.1", {"--json"}};
  SystemSnapshot& s = report.snapshot;
  s.collected_at = "2026-11-21T11:59:58Z";
  s.host = {"node", "Ubuntu 24.04.3 LTS", "6.8.0", "x86_64", "2.39", "Xeon", 16, 137438953472u};
  s.environment.variables = {{"CUDA_VISIBLE_DEVICES", "0"}};
  s.environment.container = {"docker", {"/.dockerenv exists"}};
  s.environment.wsl = true;
  s.environment.wsl_details = WslInfo{"5.15.167.4-microsoft-standard-WSL2",
                                      true,
                                      {WslFile{"/usr/lib/wsl/lib/libcuda.so.1", true, false}},
                                      {"cuda-drivers"}};
  s.environment.shm = ShmInfo{67108864u, 67000000u, "mounts", true};
  s.kernel_module = {true,
                     "580.159.04",
                     "open",
                     "NVRM version: ...",
                     true,
                     true,
                     false,
                     {DeviceNode{"/dev/nvidiactl", true, true, true, 438u}},
                     {PciDevice{"0000:1b:00.0", "0x2335", "0x030200", "nvidia", "32.0 GT/s PCIe",
                                16, "32.0 GT/s PCIe", 16, 0}}};
  s.kernel_module.pci_devices[0].runtime_status = "active";
  s.kernel_module.pci_devices[0].power_state = "D0";
  s.kernel_module.pci_devices[0].config_all_ones = false;
  s.kernel_module.running_kernel = "6.8.0";
  s.kernel_module.module_files = {"/lib/modules/6.8.0/updates/dkms/nvidia.ko.zst"};
  s.kernel_module.other_kernels_with_module = {"6.5.0"};
  s.kernel_module.secure_boot = true;
  s.kernel_module.lockdown = "integrity";
  s.kernel_module.modprobe_blacklist = {"/etc/modprobe.d/x.conf: blacklist nvidia"};
  const LibraryLoad load{"libx.so.1",        true,  "", "/lib/libx.so.1",
                         "/lib/libx.so.1.2", "1.2", 12, {"xMissing"}};
  s.nvml = {load,
            0,
            "SUCCESS",
            "580.159.04",
            13000,
            13000,
            "13.580.159.04",
            1,
            {NvmlHandleFailure{1, 15, "GPU_IS_LOST"}},
            failure()};
  s.cuda = {
      load,
      13000,
      0,
      "CUDA_SUCCESS",
      "no error",
      1,
      {CudaDevice{0, "NVIDIA H200", "GPU-1", "0000:1B:00.0", 9, 0, 132, 150754820096u, false}},
      failure()};
  GpuInfo gpu;
  gpu.cuda_ordinal = 0;
  gpu.name = "NVIDIA H200";
  gpu.pci_device_id = "0x233510DE";
  gpu.cc_major = 9;
  gpu.cc_minor = 0;
  gpu.sm_count = 132;
  gpu.memory_total_bytes = 150754820096u;
  gpu.memory_used_bytes = 1;
  gpu.memory_free_bytes = 2;
  gpu.pcie_gen_current = gpu.pcie_gen_max = 5;
  gpu.pcie_width_current = gpu.pcie_width_max = 16;
  gpu.persistence_mode = true;
  gpu.compute_mode = "default";
  gpu.mig_enabled = gpu.mig_pending = false;
  gpu.mig_instance_count = 0;
  gpu.ecc_enabled = true;
  gpu.ecc_uncorrected_volatile = gpu.ecc_corrected_volatile = gpu.ecc_uncorrected_aggregate = 0;
  gpu.retired_pages_sbe = gpu.retired_pages_dbe = 0;
  gpu.retired_pages_pending = false;
  gpu.remapped_rows_correctable = gpu.remapped_rows_uncorrectable = 0;
  gpu.remapped_rows_pending = gpu.remapped_rows_failure = false;
  gpu.clock_event_reasons = 1;
  gpu.temperature_c = 30;
  gpu.power_w = 70.5;
  gpu.power_limit_w = 700.0;
  gpu.sm_clock_mhz = 345;
  gpu.sm_clock_max_mhz = 1980;
  gpu.numa_node = 0;
  gpu.processes = {GpuProcess{42, 1024u, "python3"}};
  gpu.display_mode = gpu.display_active = gpu.kernel_exec_timeout = false;
  s.gpus = {gpu};
  LibraryFamily cudnn{
      "cudnn",
      load,
      {LibraryCopy{"/a", "/b", "pip", "9.19.0", true, false, "9.19.0", 13000}},
      CudnnDetails{13000, 1210, {CudnnSublibrary{"libcudnn_graph.so.9", true, "/a/g", "", 0}}},
      failure()};
  s.libraries = {cudnn};
  s.toolkit = {"/usr/local/cuda/bin/nvcc",
               "13.0.88",
               "/usr/local/cuda",
               "/usr/local/cuda",
               {ToolkitInstall{"/usr/local/cuda-13.0", "13.0.2"}}};
  s.kernel_log = {"kmsg",
                  true,
                  "",
                  3600.5,
                  false,
                  12,
                  {KernelLogEvent{"xid", 79, "0000:1b:00.0", "", 12.5, "NVRM: Xid ..."}}};
  s.probe_issues = {ProbeIssue{"nvml", "slow"}};
  CheckResult result;
  result.check_id = "gpu.ecc";
  result.title = "ECC";
  result.status = Status::warn;
  result.summary = "one";
  result.gpu_index = 0;
  result.findings = {Finding{"gpu.ecc_corrected", Severity::warn, "m", "r", 0}};
  result.metrics = {Metric{"h2d_gbps", 55.5, "GB/s", "median of 20"}};
  result.duration = std::chrono::milliseconds(12);
  report.results = {result};
  report.summary = summarize(report.results);
  report.root_causes = {
      RootCause{"gpu.ecc_corrected", "gpu.ecc", 0, "m", "r", {ResultRef{"gpu.ecc", 0}}}};
  return report;
}

/// A default report: every optional null, every list empty.
Report every_optional_null() {
  Report report;
  report.context.generated_at = "2026-11-21T12:00:00Z";
  report.context.mode = "replay";
  report.snapshot.gpus = {GpuInfo{}};
  report.snapshot.libraries = {LibraryFamily{}};
  return report;
}

TEST(JsonRenderer, IsTheModelsJsonWithSortedKeysTwoSpacesAndANewline) {
  const Report report = every_field_set();
  const std::string text = render_json(report);
  EXPECT_EQ(text, json(report).dump(2) + "\n");
  EXPECT_EQ(text.rfind("{\n  \"context\": {\n", 0), 0u) << text.substr(0, 40);
  const size_t context = text.find("\n  \"context\"");
  const size_t results = text.find("\n  \"results\"");
  const size_t snapshot = text.find("\n  \"snapshot\"");
  const size_t summary = text.find("\n  \"summary\"");
  EXPECT_LT(context, results);
  EXPECT_LT(results, snapshot);
  EXPECT_LT(snapshot, summary);
}

TEST(JsonRenderer, RoundTripsToAnEqualReport) {
  for (const Report& report : {every_field_set(), every_optional_null()}) {
    EXPECT_EQ(json::parse(render_json(report)).get<Report>(), report);
  }
}

TEST(JsonRenderer, EveryFieldSetValidatesAgainstThePublishedSchema) {
  const std::vector<std::string> violations =
      report_schema().validate(json::parse(render_json(every_field_set())));
  EXPECT_TRUE(violations.empty()) << testing::describe(violations);
}

TEST(JsonRenderer, EveryOptionalNullValidatesAgainstThePublishedSchema) {
  const std::vector<std::string> violations =
      report_schema().validate(json::parse(render_json(every_optional_null())));
  EXPECT_TRUE(violations.empty()) << testing::describe(violations);
}

TEST(JsonRenderer, SnapshotAloneValidatesAgainstItsDefinition) {
  const std::string text = render_snapshot_json(every_field_set().snapshot);
  EXPECT_EQ(text, json(every_field_set().snapshot).dump(2) + "\n");
  const std::vector<std::string> violations =
      report_schema().validate(json::parse(text), "#/$defs/SystemSnapshot");
  EXPECT_TRUE(violations.empty()) << testing::describe(violations);
}

TEST(JsonRenderer, SchemaCatchesADroppedOrAddedKey) {
  json doc = json::parse(render_json(every_field_set()));
  doc["snapshot"]["gpus"][0].erase("ecc_enabled");
  doc["results"][0]["findings"][0]["hint"] = "new";
  const std::vector<std::string> violations = report_schema().validate(doc);
  ASSERT_EQ(violations.size(), 2u) << testing::describe(violations);
  // Sorted by place: "results" before "snapshot".
  EXPECT_EQ(violations[0],
            "/results/0/findings/0: Additional properties are not allowed ('hint' was unexpected)");
  EXPECT_EQ(violations[1], "/snapshot/gpus/0: 'ecc_enabled' is a required property");
}

TEST(JsonRenderer, SchemaRejectsValuesOutsideTheClosedSets) {
  json doc = json::parse(render_json(every_field_set()));
  doc["results"][0]["status"] = "ok";
  doc["results"][0]["findings"][0]["severity"] = "critical";
  doc["summary"]["overall"] = "skip"; // skip never becomes the verdict
  doc["context"]["generated_at"] = "yesterday";
  EXPECT_EQ(report_schema().validate(doc).size(), 4u)
      << testing::describe(report_schema().validate(doc));
}

TEST(ReportSchema, EveryObjectRequiresAllItsPropertiesAndNoOthers) {
  const json schema = [] {
    std::ifstream in(std::string(GPUCHECK_SOURCE_DIR) + "/docs/report.schema.json");
    return json::parse(in);
  }();
  std::vector<std::pair<std::string, json>> objects{{"(root)", schema}};
  for (const auto& [name, def] : schema["$defs"].items()) {
    objects.emplace_back(name, def);
  }
  for (const auto& [name, def] : objects) {
    ASSERT_TRUE(def.contains("properties")) << name;
    std::set<std::string> properties;
    for (const auto& [key, value] : def["properties"].items()) {
      properties.insert(key);
    }
    const std::set<std::string> required(def["required"].begin(), def["required"].end());
    EXPECT_EQ(required, properties) << name;
    EXPECT_EQ(def["additionalProperties"], json(false)) << name;
  }
}

TEST(ReportSchema, SchemaVersionMatchesTheModel) {
  std::ifstream in(std::string(GPUCHECK_SOURCE_DIR) + "/docs/report.schema.json");
  const json schema = json::parse(in);
  EXPECT_EQ(schema["$defs"]["ReportContext"]["properties"]["schema_version"]["const"],
            ReportContext::k_schema_version);
  EXPECT_EQ(schema["$defs"]["SystemSnapshot"]["properties"]["format_version"]["const"],
            SystemSnapshot::k_format_version);
}

} // namespace
} // namespace gpucheck::render
