// End-to-end scenarios: the real gpucheck binary against the fake libcuda, NVML and cuDNN built by
// the suite (tests/fakes) and a fixture system root, each asserting the exact finding codes of
// warn severity or worse, the exit code, and that the JSON validates against the published schema.

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "cli/run_binary.hpp"
#include "kernel_build.hpp"
#include "support/fixture_tree.hpp"
#include "support/json_schema.hpp"
#include "support/root_safety_notes.hpp"
#include "support/sanitizer.hpp"
#include "support/text_and_processes.hpp"
#include "unit/python_fixture.hpp"

namespace gpucheck::testing {
namespace {

namespace fs = std::filesystem;

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

/// Bus id of fake GPU n (tests/fakes/README.md: XX = 0x18 + 0x10 n).
std::string fake_bdf(int n) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "0000:%02x:00.0", 0x18 + 0x10 * n);
  return buffer;
}

/// A healthy machine's /proc, /sys and /dev for `gpus` GPUs on driver `version`.
void healthy_root(FixtureTree& tree, int gpus, const std::string& version = "580.95.05") {
  tree.file("/proc/driver/nvidia/version",
            "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  " + version +
                "  Release Build  (dvs-builder@U22)  Mon Oct  6 00:00:00 UTC 2025\n"
                "GCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n");
  tree.file("/sys/module/nvidia/version", version + "\n");
  tree.dir("/sys/module/nvidia_uvm");
  tree.file("/dev/nvidiactl", "", 0666);
  tree.file("/dev/nvidia-uvm", "", 0666);
  tree.file("/dev/nvidia-uvm-tools", "", 0666);
  tree.dir("/sys/bus/pci/drivers/nvidia");
  for (int i = 0; i < gpus; ++i) {
    tree.file("/dev/nvidia" + std::to_string(i), "", 0666);
    // The UUID the fake driver gives GPU i: the GPU engine names each child's GPU by it.
    tree.file("/proc/driver/nvidia/gpus/" + fake_bdf(i) + "/information",
              fmt::format("Model: \t\t NVIDIA H100 80GB HBM3\nGPU UUID: \t "
                          "GPU-fa4e000{0}-1111-2222-3333-00000000000{0}\n",
                          i));
    const std::string dev = "/sys/bus/pci/devices/" + fake_bdf(i);
    tree.file(dev + "/vendor", "0x10de\n");
    tree.file(dev + "/device", "0x2330\n");
    tree.file(dev + "/class", "0x030200\n");
    tree.file(dev + "/current_link_speed", "32.0 GT/s PCIe\n");
    tree.file(dev + "/max_link_speed", "32.0 GT/s PCIe\n");
    tree.file(dev + "/current_link_width", "16\n");
    tree.file(dev + "/max_link_width", "16\n");
    tree.file(dev + "/numa_node", "0\n");
    tree.symlink(dev + "/driver", "../../../bus/pci/drivers/nvidia");
  }
}

/// The fake libcuda answers 801 to cuDevicePrimaryCtxRetain: every GPU check has exactly one
/// result, for GPU 0, naming the failed call instead of passing without work.
void each_gpu_check_names_the_context_failure_on_gpu_0(const nlohmann::json& r) {
  for (const char* id : {"gpu.compute", "gpu.bandwidth", "gpu.streams"}) {
    std::vector<const nlohmann::json*> results;
    for (const auto& candidate : r["results"]) {
      if (candidate["check_id"] == id) {
        results.push_back(&candidate);
      }
    }
    ASSERT_EQ(results.size(), 1U) << id;
    EXPECT_NE((*results[0])["status"], "pass") << id;
    EXPECT_EQ((*results[0])["gpu_index"], 0) << id;
  }
}

/// Copy one fake library (its real file) to `to` as a plain file, as WSL mounts the Windows
/// driver's libraries.
void copy_fake_file(const std::string& from_name, const std::string& to) {
  fs::create_directories(fs::path(to).parent_path());
  fs::copy_file(fs::canonical(fs::path(GPUCHECK_FAKE_LIB_DIR) / from_name), to,
                fs::copy_options::overwrite_existing);
}

/// A dpkg status file listing these packages as installed.
std::string dpkg_status(const std::vector<std::string>& packages) {
  std::string text;
  for (const std::string& name : packages) {
    text += "Package: " + name + "\nStatus: install ok installed\nVersion: 1.0\n\n";
  }
  // A removed package (config files left) is not installed.
  text += "Package: nvidia-driver-535\nStatus: deinstall ok config-files\nVersion: 535\n\n";
  return text;
}

/// A healthy WSL2 machine (F17): a microsoft-standard-WSL2 kernel, /dev/dxg, the Windows
/// driver's libcuda and NVML as plain files in /usr/lib/wsl/lib (in the loader cache), no
/// /proc/driver/nvidia, no /dev/nvidia*, the CUDA toolkit installed alone.
void wsl_root(FixtureTree& tree) {
  tree.file("/proc/sys/kernel/osrelease", "5.15.167.4-microsoft-standard-WSL2\n");
  tree.file("/proc/version", "Linux version 5.15.167.4-microsoft-standard-WSL2 (root@f9c826d3017f) "
                             "(gcc (GCC) 11.2.0) #1 SMP Tue Nov 5 00:21:55 UTC 2024\n");
  tree.file("/dev/dxg", "", 0666);
  for (const char* name : {"libcuda.so", "libcuda.so.1", "libcuda.so.1.1"}) {
    copy_fake_file("libcuda.so.1", tree.host(std::string("/usr/lib/wsl/lib/") + name));
  }
  copy_fake_file("libnvidia-ml.so.1", tree.host("/usr/lib/wsl/lib/libnvidia-ml.so.1"));
  tree.file("/etc/ld.so.cache.txt",
            "3 libs found in cache `/etc/ld.so.cache'\n"
            "\tlibnvidia-ml.so.1 (libc6,x86-64) => /usr/lib/wsl/lib/libnvidia-ml.so.1\n"
            "\tlibcuda.so.1 (libc6,x86-64) => /usr/lib/wsl/lib/libcuda.so.1\n"
            "\tlibcuda.so (libc6,x86-64) => /usr/lib/wsl/lib/libcuda.so\n");
  tree.file("/var/lib/dpkg/status", dpkg_status({"cuda-toolkit-12-8", "libc6"}));
}

/// The result of a check, or nullptr.
const nlohmann::json* result_with(const nlohmann::json& report, const std::string& id) {
  for (const auto& result : report["results"]) {
    if (result["check_id"] == id) {
      return &result;
    }
  }
  return nullptr;
}

/// The first finding with this code anywhere in the report, or nullptr.
const nlohmann::json* finding_with(const nlohmann::json& report, const std::string& code) {
  for (const auto& result : report["results"]) {
    for (const auto& finding : result["findings"]) {
      if (finding["code"] == code) {
        return &finding;
      }
    }
  }
  return nullptr;
}

/// Asserts that the finding `code` exists and that its remedy contains `fix`.
void remedy_names(const nlohmann::json& report, const std::string& code, const std::string& fix) {
  const nlohmann::json* finding = finding_with(report, code);
  ASSERT_NE(finding, nullptr) << code;
  EXPECT_NE((*finding)["remedy"].get<std::string>().find(fix), std::string::npos)
      << code << ": " << (*finding)["remedy"];
}

struct Scenario {
  std::string name;
  std::string fake;                       ///< FAKE_GPU_SCENARIO contents
  std::function<void(FixtureTree&)> root; ///< builds the system root
  std::map<std::string, std::string> env; ///< extra environment
  std::vector<std::string> args;          ///< extra arguments
  bool fake_libraries = true;             ///< fakes on LD_LIBRARY_PATH
  std::string lib_subdir;                 ///< e.g. "stubs": put this first
  std::set<std::string> codes;            ///< warn-or-worse finding codes, exactly
  int exit_code = 0;
  std::function<void(const nlohmann::json&)> extra; ///< further assertions
  bool standard_run = false;                        ///< run the GPU checks too
  /// Library directory: a copy of the fakes without the files whose names start with these.
  std::vector<std::string> drop_libraries;
  /// More scenario lines that need the fixture root's host path (per-directory keys).
  std::function<std::string(const std::string& root)> fake_for_root;
  /// Hide the build machine's own libraries in /etc/ld.so.cache from the probes (a real cuDNN).
  bool hide_loader_cache = false;
  /// A directory of the fixture root (system path) put first on LD_LIBRARY_PATH.
  std::string tree_lib_dir_first;
  /// A signal sent to gpucheck this many milliseconds after it started (Ctrl-C, SIGTERM).
  std::optional<std::pair<int, int>> signal_after;
};

/// Copy the fake libraries (files and links) into `to`, leaving out names with these prefixes.
void copy_fakes(const std::string& to, const std::vector<std::string>& drop) {
  fs::create_directories(to);
  for (const fs::directory_entry& entry : fs::directory_iterator(GPUCHECK_FAKE_LIB_DIR)) {
    const std::string name = entry.path().filename().string();
    bool dropped = false;
    for (const std::string& prefix : drop) {
      dropped = dropped || name.starts_with(prefix);
    }
    if (dropped || entry.is_directory()) {
      continue;
    }
    fs::copy(entry.path(), fs::path(to) / name, fs::copy_options::copy_symlinks);
  }
}

struct Outcome {
  int exit_code = -1;
  nlohmann::json report;
  std::set<std::string> codes;
  std::string err;
};

Outcome run_scenario(const Scenario& s) {
  FixtureTree tree;
  if (s.root) {
    s.root(tree);
  }
  const std::string scenario_file =
      tree.root() + "/../" + fs::path(tree.root()).filename().string() + ".scenario";
  std::ofstream(scenario_file) << s.fake << (s.fake_for_root ? s.fake_for_root(tree.root()) : "");
  std::map<std::string, std::string> env{
      {"PATH", "/usr/bin:/bin"},
      {"HOME", tree.root()},
      {"SOURCE_DATE_EPOCH", "1790000000"},
      {"GPUCHECK_SYSROOT", tree.root()},
      {"FAKE_GPU_SCENARIO", scenario_file},
  };
  std::string lib_path;
  if (!s.drop_libraries.empty()) {
    lib_path = tree.root() + "/fake-libs";
    copy_fakes(lib_path, s.drop_libraries);
  } else if (s.fake_libraries) {
    lib_path = std::string(GPUCHECK_FAKE_LIB_DIR);
    if (!s.lib_subdir.empty()) {
      lib_path = std::string(GPUCHECK_FAKE_LIB_DIR) + "/" + s.lib_subdir + ":" + lib_path;
    }
  } else {
    lib_path = tree.root() + "/empty";
  }
  if (!s.tree_lib_dir_first.empty()) {
    lib_path = tree.host(s.tree_lib_dir_first) + ":" + lib_path;
  }
  env["LD_LIBRARY_PATH"] = lib_path;
  if (s.hide_loader_cache) {
    env["GPUCHECK_TEST_INHIBIT_LD_CACHE"] = "1";
  }
  for (const auto& [k, v] : s.env) {
    env[k] = v;
  }
  // Probes and passive checks: the fakes create no real context, so the GPU work is --quick'd
  // away except where a scenario asks for the standard run.
  std::vector<std::string> args{"--json"};
  if (!s.standard_run) {
    args.emplace_back("--quick");
  }
  args.insert(args.end(), s.args.begin(), s.args.end());
  const cli_test::RunResult run = cli_test::run_gpucheck(
      {.args = args, .env = env, .inherit_env = false, .signal_after = s.signal_after});
  std::filesystem::remove(scenario_file);

  Outcome outcome;
  outcome.exit_code = run.exit_code;
  outcome.err = run.err;
  outcome.report = nlohmann::json::parse(run.out, nullptr, false);
  if (!outcome.report.is_discarded()) {
    for (const auto& result : outcome.report["results"]) {
      for (const auto& finding : result["findings"]) {
        if (finding["severity"] != "info") {
          outcome.codes.insert(finding["code"].get<std::string>());
        }
      }
    }
  }
  return outcome;
}

class ScenarioTest : public ::testing::TestWithParam<Scenario> {};

TEST_P(ScenarioTest, ReportsExactlyTheExpectedFindings) {
  const Scenario& s = GetParam();
  const Outcome outcome = run_scenario(s);
  ASSERT_FALSE(outcome.report.is_discarded()) << "stdout is not JSON; stderr:\n" << outcome.err;
  const std::vector<std::string> problems = report_schema().validate(outcome.report);
  EXPECT_TRUE(problems.empty()) << "schema: " << describe(problems);
  EXPECT_EQ(outcome.codes, s.codes) << "report:\n" << outcome.report["results"].dump(1);
  EXPECT_EQ(outcome.exit_code, s.exit_code) << outcome.err;
  if (s.extra) {
    s.extra(outcome.report);
  }
}

const nlohmann::json* result_of(const nlohmann::json& report, const std::string& id) {
  for (const auto& result : report["results"]) {
    if (result["check_id"] == id) {
      return &result;
    }
  }
  return nullptr;
}

/// A driver that supports CUDA 12.2 (R535) as libcuda and NVML report it. The fake libraries' file
/// names and /proc stay at 580.95.05, so that no version mismatch is reported beside it.
const std::string k_r535 = "cuda.driver_version=12020\nnvml.cuda_driver_version_kernel=12020\n";

/// Code -> message of the info findings of check `id`.
std::map<std::string, std::string> info_findings(const nlohmann::json& report,
                                                 const std::string& id) {
  std::map<std::string, std::string> out;
  for (const auto& result : report["results"]) {
    if (result["check_id"] != id) {
      continue;
    }
    for (const auto& finding : result["findings"]) {
      if (finding["severity"] == "info") {
        out[finding["code"].get<std::string>()] = finding["message"].get<std::string>();
      }
    }
  }
  return out;
}

std::vector<Scenario> scenarios() {
  std::vector<Scenario> list;
  list.push_back({.name = "healthy_single_gpu",
                  .root = [](FixtureTree& t) { healthy_root(t, 1); },
                  .codes = {},
                  .exit_code = 0,
                  .extra =
                      [](const nlohmann::json& r) {
                        ASSERT_EQ(r["snapshot"]["gpus"].size(), 1u);
                        EXPECT_EQ(r["snapshot"]["gpus"][0]["cuda_ordinal"], 0);
                        EXPECT_EQ(r["snapshot"]["kernel_module"]["version"], "580.95.05");
                      }});
  list.push_back({.name = "standard_run_where_no_context_can_be_created",
                  .fake = "",
                  .root = [](FixtureTree& t) { healthy_root(t, 1); },
                  .codes = {"gpu.context_failed"},
                  .exit_code = 1,
                  .extra = &each_gpu_check_names_the_context_failure_on_gpu_0,
                  .standard_run = true});
  // Issue 35 item 2: CUDA cannot open GPU 0 (CUDA_ERROR_DEVICE_UNAVAILABLE) though nothing
  // holds it exclusively: the GPU is lost, named by its address; its twin in exclusive-process
  // mode is a context failure the compute mode explains, never a lost GPU.
  list.push_back({.name = "standard_run_where_cuda_finds_the_gpu_unavailable",
                  .fake = "gpu.0.context_rc=46\n",
                  .root = [](FixtureTree& t) { healthy_root(t, 1); },
                  .codes = {"gpu.lost"},
                  .exit_code = 1,
                  .extra =
                      [](const nlohmann::json& r) {
                        for (const auto& result : r["results"]) {
                          if (result["check_id"] == "gpu.compute") {
                            const std::string message = result["findings"][0]["message"];
                            EXPECT_NE(message.find("is lost: CUDA's cuDevicePrimaryCtxRetain"),
                                      std::string::npos)
                                << message;
                          }
                        }
                      },
                  .standard_run = true});
  list.push_back({.name = "standard_run_on_an_exclusive_gpu_that_cuda_finds_unavailable",
                  .fake = "gpu.0.context_rc=46\ngpu.0.compute_mode=3\n",
                  .root = [](FixtureTree& t) { healthy_root(t, 1); },
                  .codes = {"gpu.context_failed", "gpu.compute_exclusive"},
                  .exit_code = 1,
                  .standard_run = true});
  // The long level (--level long): its checks run after the standard ones in the GPU engine and
  // meet the same context failure; a GPU that another process uses is left out of it (a skip
  // naming the process and --force, never a warning) unless --force.
  const auto long_results = [](const nlohmann::json& r, const std::string& status,
                               const std::string& says) {
    EXPECT_EQ(r["context"]["mode"], "long");
    for (const char* id : {"gpu.memtest", "gpu.burn"}) {
      const nlohmann::json* result = result_of(r, id);
      ASSERT_NE(result, nullptr) << id;
      EXPECT_EQ((*result)["status"], status) << id << ": " << (*result)["summary"];
      EXPECT_NE((*result)["summary"].get<std::string>().find(says), std::string::npos)
          << id << ": " << (*result)["summary"];
    }
  };
  list.push_back(
      {.name = "long_level_where_no_context_can_be_created",
       .root = [](FixtureTree& t) { healthy_root(t, 1); },
       .args = {"--level", "long", "--duration", "1"},
       .codes = {"gpu.context_failed"},
       .exit_code = 1,
       .extra = [long_results](const nlohmann::json& r) { long_results(r, "fail", "context"); },
       .standard_run = true});
  list.push_back(
      {.name = "long_level_leaves_out_a_gpu_another_process_uses",
       .fake = "gpu.0.compute_processes=4242:1000000000\n",
       .root = [](FixtureTree& t) { healthy_root(t, 1); },
       .args = {"--level", "long", "--duration", "1"},
       .codes = {"gpu.context_failed"},
       .exit_code = 1,
       .extra = [long_results](const nlohmann::json& r) { long_results(r, "skip", "--force"); },
       .standard_run = true});
  list.push_back(
      {.name = "long_level_forced_on_a_gpu_another_process_uses",
       .fake = "gpu.0.compute_processes=4242:1000000000\n",
       .root = [](FixtureTree& t) { healthy_root(t, 1); },
       .args = {"--level", "long", "--duration", "1", "--force"},
       .codes = {"gpu.context_failed"},
       .exit_code = 1,
       .extra = [long_results](const nlohmann::json& r) { long_results(r, "fail", "context"); },
       .standard_run = true});
  // Two GPUs: gpu.bandwidth also copies on both at once (copies_together, in the same child);
  // the context failure both parts meet is reported once per GPU.
  list.push_back({.name = "standard_run_on_two_gpus_where_no_context_can_be_created",
                  .fake = "gpu.count=2\n",
                  .root = [](FixtureTree& t) { healthy_root(t, 2); },
                  .codes = {"gpu.context_failed"},
                  .exit_code = 1,
                  .extra =
                      [](const nlohmann::json& r) {
                        int bandwidth_results = 0;
                        for (const auto& result : r["results"]) {
                          if (result["check_id"] != "gpu.bandwidth") {
                            continue;
                          }
                          ++bandwidth_results;
                          int context_findings = 0;
                          for (const auto& finding : result["findings"]) {
                            context_findings += finding["code"] == "gpu.context_failed" ? 1 : 0;
                          }
                          EXPECT_EQ(context_findings, 1) << result.dump(1);
                        }
                        EXPECT_EQ(bandwidth_results, 2);
                      },
                  .standard_run = true});
  // Busy nodes: gpucheck never fails a GPU because others use it (the engine issue).
  list.push_back(
      {.name = "standard_run_on_a_gpu_98_percent_held_by_another_process",
       .fake = "gpu.0.memory_used=84181359001\ngpu.0.compute_processes=4242:84181359001\n",
       .root = [](FixtureTree& t) { healthy_root(t, 1); },
       .codes = {"gpu.busy_not_tested"},
       .exit_code = 0,
       .extra =
           [](const nlohmann::json& r) {
             for (const auto& result : r["results"]) {
               if (result["check_id"] == "gpu.compute") {
                 EXPECT_EQ(result["status"], "warn");
                 EXPECT_NE(result["findings"][0]["message"].get<std::string>().find("4242"),
                           std::string::npos)
                     << result.dump();
               }
             }
           },
       .standard_run = true});
  list.push_back({.name = "standard_run_out_of_memory_beside_two_other_processes",
                  .fake = "gpu.0.context_rc=2\n"
                          "gpu.0.memory_used=3000000000\n"
                          "gpu.0.compute_processes=4242:1000000000,4343:2000000000\n",
                  .root = [](FixtureTree& t) { healthy_root(t, 1); },
                  .codes = {"gpu.busy_not_tested"},
                  .exit_code = 0,
                  .standard_run = true});
  // Its twin: the same out-of-memory answer on a GPU nobody else uses is a broken GPU.
  // Kernel images (docs/engine.md "Kernel images"): the fake driver gives a token context and
  // loads a fatbin by the real driver's rule (tests/fakes/README.md), then answers 801 to the
  // first allocation, so each run ends in the same gpu.cuda_call_failed; what differs is which
  // image loaded. An R535 node with an H100 must not fail gpu.kernel_load_failed.
  if (kernel_build::k_image_toolkits[1][0] != '\0') {
    list.push_back({.name = "standard_run_on_r535_loads_the_cuda_12_kernel_image",
                    .fake = k_r535 + "gpu.0.context_rc=0\n",
                    .root = [](FixtureTree& t) { healthy_root(t, 1); },
                    .codes = {"gpu.cuda_call_failed"},
                    .exit_code = 1,
                    .extra =
                        [](const nlohmann::json& r) {
                          const auto info = info_findings(r, "gpu.compute");
                          ASSERT_TRUE(info.contains("gpu.kernel_image_fallback")) << r.dump(1);
                          const std::string message = info.at("gpu.kernel_image_fallback");
                          EXPECT_NE(message.find("CUDA 12.9 image (sass)"), std::string::npos)
                              << message;
                          EXPECT_NE(message.find("driver 12020 (CUDA 12.2)"), std::string::npos)
                              << message;
                        },
                    .standard_run = true});
    // Its failing twin: the CUDA 13 image alone (GPUCHECK_KERNEL_IMAGE), which R535 rejects.
    list.push_back({.name = "standard_run_on_r535_with_only_the_cuda_13_image_fails_to_load",
                    .fake = k_r535 + "gpu.0.context_rc=0\n",
                    .root = [](FixtureTree& t) { healthy_root(t, 1); },
                    .env = {{"GPUCHECK_KERNEL_IMAGE", "cuda13.0"}},
                    .codes = {"gpu.kernel_load_failed", "gpu.cuda_call_failed"},
                    .exit_code = 1,
                    .standard_run = true});
  }
  // The healthy twin on R580: the newest image loads, no fallback.
  list.push_back(
      {.name = "standard_run_on_r580_loads_the_newest_kernel_image",
       .fake = "gpu.0.context_rc=0\n",
       .root = [](FixtureTree& t) { healthy_root(t, 1); },
       .codes = {"gpu.cuda_call_failed"},
       .exit_code = 1,
       .extra =
           [](const nlohmann::json& r) {
             EXPECT_FALSE(info_findings(r, "gpu.compute").contains("gpu.kernel_image_fallback"))
                 << r.dump(1);
           },
       .standard_run = true});
  // A Kepler GPU (sm_37) has no image at all: the kernel checks skip with the reason, the
  // copies still run (and meet the fake's 801). The compatibility checks say, rightly, that R580
  // dropped Kepler; gpucheck's own build is not one of the findings.
  list.push_back(
      {.name = "standard_run_on_a_kepler_gpu_skips_the_kernel_checks",
       .fake = "gpu.0.context_rc=0\ngpu.0.cc=3.7\ngpu.0.name=Tesla K80\n",
       .root = [](FixtureTree& t) { healthy_root(t, 1); },
       .codes = {"compat.cudnn_arch_unconfirmed", "compat.gpu_arch_removed",
                 "compat.gpu_dropped_by_driver", "gpu.cuda_call_failed"},
       .exit_code = 1,
       .extra =
           [](const nlohmann::json& r) {
             for (const auto& result : r["results"]) {
               if (result["check_id"] == "gpu.compute" || result["check_id"] == "gpu.streams") {
                 EXPECT_EQ(result["status"], "skip") << result.dump();
                 EXPECT_NE(result["summary"].get<std::string>().find("older than Maxwell"),
                           std::string::npos)
                     << result.dump();
               }
             }
           },
       .standard_run = true});
  list.push_back({.name = "standard_run_out_of_memory_on_an_idle_gpu",
                  .fake = "gpu.0.context_rc=2\n",
                  .root = [](FixtureTree& t) { healthy_root(t, 1); },
                  .codes = {"gpu.context_failed"},
                  .exit_code = 1,
                  .extra = &each_gpu_check_names_the_context_failure_on_gpu_0,
                  .standard_run = true});
  list.push_back({.name = "standard_run_where_the_driver_shows_fewer_gpus_than_proc",
                  .fake = "",
                  .root =
                      [](FixtureTree& t) {
                        // /proc lists two GPUs, the driver enumerates one: the GPU work started
                        // ahead on the guess of two must still judge exactly GPU 0.
                        healthy_root(t, 1);
                        t.file("/proc/driver/nvidia/gpus/" + fake_bdf(1) + "/information",
                               "Model: \t\t NVIDIA H100 80GB HBM3\n");
                      },
                  .codes = {"gpu.context_failed"},
                  .exit_code = 1,
                  .extra = &each_gpu_check_names_the_context_failure_on_gpu_0,
                  .standard_run = true});
  list.push_back(
      {.name = "eight_healthy_gpus",
       .fake = "gpu.count=8\n",
       .root = [](FixtureTree& t) { healthy_root(t, 8); },
       .codes = {},
       .exit_code = 0,
       .extra = [](const nlohmann::json& r) { EXPECT_EQ(r["snapshot"]["gpus"].size(), 8u); }});
  list.push_back({.name = "no_driver_at_all",
                  .root = [](FixtureTree& t) { t.dir("/proc"); },
                  .fake_libraries = false,
                  .codes = {"driver.missing"},
                  .exit_code = 1,
                  .extra =
                      [](const nlohmann::json& r) {
                        ASSERT_EQ(r["root_causes"].size(), 1u) << r["root_causes"].dump(1);
                        EXPECT_EQ(r["root_causes"][0]["code"], "driver.missing");
                        std::set<std::string> explained;
                        for (const auto& ref : r["root_causes"][0]["explains"]) {
                          explained.insert(ref["check_id"].get<std::string>());
                        }
                        for (const char* id : {"driver.nvml", "cuda.init", "gpu.ecc"}) {
                          EXPECT_TRUE(explained.contains(id)) << id;
                        }
                        EXPECT_FALSE(explained.contains("env.container"));
                      }});
  list.push_back({.name = "libraries_without_kernel_module",
                  .fake = "nvml.init_rc=9\ncuda.init_rc=100\n",
                  .root =
                      [](FixtureTree& t) {
                        // The GPU is on the bus but no driver is bound (DKMS not rebuilt).
                        const std::string dev = "/sys/bus/pci/devices/" + fake_bdf(0);
                        t.file(dev + "/vendor", "0x10de\n").file(dev + "/class", "0x030200\n");
                        t.file(dev + "/device", "0x2330\n");
                      },
                  .codes = {"driver.module_not_loaded", "nvml.driver_not_loaded", "cuda.no_device"},
                  .exit_code = 1});
  list.push_back(
      {.name = "nvml_version_mismatch_after_upgrade",
       .fake = "nvml.init_rc=18\ncuda.init_rc=803\n",
       .root = [](FixtureTree& t) { healthy_root(t, 1, "535.129.03"); },
       // The module still running is 535: too old for the CUDA 13 runtime as well.
       .codes = {"driver.version_mismatch", "cuda.system_driver_mismatch", "compat.driver_too_old"},
       .exit_code = 1,
       .extra =
           [](const nlohmann::json& r) {
             ASSERT_EQ(r["root_causes"].size(), 1u) << r["root_causes"].dump(1);
             EXPECT_EQ(r["root_causes"][0]["code"], "driver.version_mismatch");
             std::set<std::string> explained;
             for (const auto& ref : r["root_causes"][0]["explains"]) {
               explained.insert(ref["check_id"].get<std::string>());
             }
             EXPECT_TRUE(explained.contains("cuda.init")) << r["root_causes"].dump(1);
             EXPECT_TRUE(explained.contains("driver.nvml")) << r["root_causes"].dump(1);
             EXPECT_FALSE(explained.contains("compat.driver_runtime"));
           }});
  list.push_back({.name = "cuinit_999",
                  .fake = "cuda.init_rc=999\n",
                  .root = [](FixtureTree& t) { healthy_root(t, 1); },
                  .codes = {"cuda.unknown_error"},
                  .exit_code = 1});
  list.push_back({.name = "toolkit_stub_libcuda_on_path",
                  .root = [](FixtureTree& t) { healthy_root(t, 1); },
                  .lib_subdir = "stubs",
                  .codes = {"cuda.stub_library"},
                  .exit_code = 1});
  list.push_back({.name = "cuda_visible_devices_hides_all",
                  .root = [](FixtureTree& t) { healthy_root(t, 2); },
                  .env = {{"CUDA_VISIBLE_DEVICES", "-1"}},
                  .codes = {"env.visible_devices_hides_all", "cuda.no_device"},
                  .exit_code = 1,
                  .extra =
                      [](const nlohmann::json& r) {
                        ASSERT_EQ(r["root_causes"].size(), 1u) << r["root_causes"].dump(1);
                        EXPECT_EQ(r["root_causes"][0]["code"], "env.visible_devices_hides_all");
                        EXPECT_EQ(r["root_causes"][0]["explains"][0]["check_id"], "cuda.init");
                      }});
  list.push_back({.name = "cuda_visible_devices_names_none",
                  .fake = "gpu.count=2\n",
                  .root = [](FixtureTree& t) { healthy_root(t, 2); },
                  .env = {{"CUDA_VISIBLE_DEVICES", "4"}},
                  .codes = {"env.visible_devices_no_match", "cuda.no_device"},
                  .exit_code = 1});
  list.push_back({.name = "cudnn_absent",
                  .root = [](FixtureTree& t) { healthy_root(t, 1); },
                  .codes = {"lib.cudnn_missing"},
                  .exit_code = 0,
                  .drop_libraries = {"libcudnn"},
                  .hide_loader_cache = true});
  list.push_back({.name = "cudnn_graph_sublibrary_missing",
                  .root = [](FixtureTree& t) { healthy_root(t, 1); },
                  .codes = {"lib.cudnn_sublibrary_failed"},
                  .exit_code = 1,
                  .extra =
                      [](const nlohmann::json& r) {
                        const nlohmann::json* result = result_of(r, "lib.cudnn");
                        ASSERT_NE(result, nullptr);
                        EXPECT_NE((*result)["findings"][0]["message"].get<std::string>().find(
                                      "libcudnn_graph.so.9"),
                                  std::string::npos);
                      },
                  .drop_libraries = {"libcudnn_graph"},
                  .hide_loader_cache = true});
  list.push_back(
      {.name = "cudnn_aborts_the_process",
       .fake = "cudnn.version_crash=1\n",
       .root = [](FixtureTree& t) { healthy_root(t, 1); },
       .codes = {"lib.cudnn_probe_crashed"},
       .exit_code = 1,
       .extra =
           [](const nlohmann::json& r) {
             EXPECT_EQ(r["snapshot"]["libraries"][3]["failure"]["signal_name"], "SIGABRT")
                 << r["snapshot"]["libraries"].dump(1);
           },
       .hide_loader_cache = true});
  // Two cuDNN copies, the system one (9.14) loaded: a newer copy the loader could also pick
  // (a toolkit directory) is a warning; one private to a Python environment (PyTorch's wheel, as
  // on the GPU machine) is a note only.
  for (const bool in_venv : {false, true}) {
    const std::string newer_dir = in_venv
                                      ? "/opt/venv/lib/python3.12/site-packages/nvidia/cudnn/lib"
                                      : "/usr/local/cuda-13.0/lib64";
    list.push_back(
        {.name =
             in_venv ? "two_cudnn_copies_newer_one_in_a_venv" : "two_cudnn_copies_older_one_loaded",
         .root =
             [newer_dir](FixtureTree& t) {
               healthy_root(t, 1);
               t.file("/opt/venv/pyvenv.cfg", "home = /usr/bin\n");
               copy_fakes(t.host("/usr/lib/x86_64-linux-gnu"),
                          {"libcuda.", "libnvidia", "libcudart", "libcublas", "libnccl"});
               copy_fakes(t.host(newer_dir),
                          {"libcuda.", "libnvidia", "libcublas", "libcudart", "libnccl"});
               t.file(
                   "/etc/ld.so.cache.txt",
                   "1 libs found in cache `/etc/ld.so.cache'\n"
                   "\tlibcudnn.so.9 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libcudnn.so.9\n");
             },
         .env = {{"PATH", "/opt/venv/bin:/usr/bin:/bin"}},
         .codes = in_venv ? std::set<std::string>{}
                          : std::set<std::string>{"lib.cudnn_older_copy_loaded"},
         .exit_code = 0,
         .extra =
             [](const nlohmann::json& r) {
               const nlohmann::json* result = result_of(r, "lib.cudnn_copies");
               ASSERT_NE(result, nullptr);
               ASSERT_EQ((*result)["findings"].size(), 1u) << (*result).dump(1);
               EXPECT_EQ((*result)["findings"][0]["code"], "lib.cudnn_older_copy_loaded");
               // Each copy says its own version: the selected one through the main cuDNN
               // child, the other through a child of its own.
               std::map<std::string, std::string> reported;
               for (const auto& family : r["snapshot"]["libraries"]) {
                 if (family["family"] == "cudnn") {
                   for (const auto& copy : family["copies"]) {
                     if (copy.contains("reported_version") &&
                         copy["reported_version"].is_string()) {
                       reported[copy["selected"].get<bool>() ? "selected" : "other"] =
                           copy["reported_version"].get<std::string>();
                     }
                   }
                 }
               }
               EXPECT_EQ(reported["selected"], "9.14.0");
               EXPECT_EQ(reported["other"], "9.19.0");
             },
         .drop_libraries = {},
         .fake_for_root =
             [newer_dir](const std::string& root) {
               // The system copy reports 9.14.0, the other 9.19.0.
               return "cudnn.version@" + root + "/usr/lib/x86_64-linux-gnu=91400\n" +
                      "cudnn.version@" + root + newer_dir + "=91900\n";
             },
         .hide_loader_cache = true,
         .tree_lib_dir_first = "/usr/lib/x86_64-linux-gnu"});
  }
  list.push_back({.name = "uncorrected_ecc_errors",
                  .fake = "gpu.0.ecc_uncorrected_volatile=3\n",
                  .root = [](FixtureTree& t) { healthy_root(t, 1); },
                  .codes = {"gpu.ecc_uncorrected"},
                  .exit_code = 1});
  list.push_back({.name = "row_remap_pending",
                  .fake = "gpu.count=8\ngpu.5.remapped_pending=1\ngpu.5.remapped_unc=1\n",
                  .root = [](FixtureTree& t) { healthy_root(t, 8); },
                  .codes = {"gpu.row_remap_pending"},
                  .exit_code = 0,
                  .extra =
                      [](const nlohmann::json& r) {
                        bool found = false;
                        for (const auto& result : r["results"]) {
                          for (const auto& f : result["findings"]) {
                            if (f["code"] == "gpu.row_remap_pending") {
                              EXPECT_EQ(f["gpu_index"], 5);
                              found = true;
                            }
                          }
                        }
                        EXPECT_TRUE(found);
                      }});
  list.push_back({.name = "pcie_x4_of_x16",
                  .fake = "gpu.0.pcie_width=4\ngpu.0.pcie_gen=1\n",
                  .root = [](FixtureTree& t) { healthy_root(t, 1); },
                  .codes = {"gpu.pcie_width_degraded"},
                  .exit_code = 0});
  list.push_back({.name = "device_node_missing",
                  .root =
                      [](FixtureTree& t) {
                        healthy_root(t, 1);
                        t.remove("/dev/nvidia-uvm");
                      },
                  .codes = {"env.device_node_missing"},
                  .exit_code = 1});
  list.push_back({.name = "mig_enabled_without_instances",
                  .fake = "gpu.0.mig_mode=1\n",
                  .root = [](FixtureTree& t) { healthy_root(t, 1); },
                  .codes = {"gpu.mig_no_instance"},
                  .exit_code = 1});
  list.push_back({.name = "cuinit_crashes",
                  .fake = "cuda.init_crash=1\n",
                  .root = [](FixtureTree& t) { healthy_root(t, 1); },
                  .codes = {"probe.crashed"},
                  .exit_code = 1,
                  .extra =
                      [](const nlohmann::json& r) {
                        const nlohmann::json* result = result_of(r, "cuda.init");
                        ASSERT_NE(result, nullptr);
                        EXPECT_EQ((*result)["status"], "error");
                        EXPECT_NE(
                            (*result)["findings"][0]["message"].get<std::string>().find("SIGABRT"),
                            std::string::npos);
                      }});
  list.push_back({.name = "nvml_hangs",
                  .fake = "nvml.init_hang=1\n",
                  .root = [](FixtureTree& t) { healthy_root(t, 1); },
                  .args = {"--probe-timeout", "1"},
                  .codes = {"probe.timed_out"},
                  .exit_code = 1,
                  .extra =
                      [](const nlohmann::json& r) {
                        EXPECT_EQ(r["snapshot"]["nvml"]["failure"]["kind"], "timeout");
                      }});
  // Hybrid graphics (F42): an Intel GPU beside the NVIDIA one. Ubuntu's PRIME profile 'intel'
  // switched the NVIDIA GPU off (no driver bound to it); the healthy twin runs the on-demand
  // profile, its GPU asleep between uses with the nvidia driver bound; a server's BMC display
  // (ASPEED) is no integrated GPU.
  const auto display = [](FixtureTree& t, const std::string& bdf, const std::string& vendor) {
    t.file("/sys/bus/pci/devices/" + bdf + "/vendor", vendor + "\n");
    t.file("/sys/bus/pci/devices/" + bdf + "/class", "0x030000\n");
  };
  list.push_back({.name = "hybrid_laptop_prime_intel_profile",
                  .root =
                      [display](FixtureTree& t) {
                        display(t, "0000:00:02.0", "0x8086");
                        const std::string dev = "/sys/bus/pci/devices/" + fake_bdf(0);
                        t.file(dev + "/vendor", "0x10de\n");
                        t.file(dev + "/class", "0x030200\n");
                        t.file(dev + "/power/runtime_status", "suspended\n");
                        t.file("/etc/prime-discrete", "off\n");
                      },
                  .args = {"--only", "env.hybrid_graphics"},
                  .codes = {"env.dgpu_switched_off"},
                  .exit_code = 1,
                  .extra =
                      [](const nlohmann::json& r) {
                        remedy_names(r, "env.dgpu_switched_off", "prime-select nvidia");
                        const nlohmann::json* f = finding_with(r, "env.dgpu_switched_off");
                        ASSERT_NE(f, nullptr);
                        EXPECT_NE((*f)["message"].get<std::string>().find("0000:00:02.0 (Intel)"),
                                  std::string::npos);
                      }});
  list.push_back(
      {.name = "hybrid_laptop_on_demand_gpu_asleep",
       .root =
           [display](FixtureTree& t) {
             healthy_root(t, 1);
             display(t, "0000:00:02.0", "0x8086");
             t.file("/sys/bus/pci/devices/" + fake_bdf(0) + "/power/runtime_status", "suspended\n");
             t.file("/etc/prime-discrete", "on-demand\n");
           },
       .args = {"--only", "env.hybrid_graphics"},
       .codes = {},
       .exit_code = 0,
       .extra =
           [](const nlohmann::json& r) {
             const nlohmann::json* result = result_of(r, "env.hybrid_graphics");
             ASSERT_NE(result, nullptr);
             EXPECT_EQ((*result)["status"], "pass");
             EXPECT_NE((*result)["summary"].get<std::string>().find("wakes"), std::string::npos);
           }});
  list.push_back({.name = "server_bmc_display_is_not_hybrid",
                  .root =
                      [display](FixtureTree& t) {
                        healthy_root(t, 1);
                        display(t, "0000:02:00.0", "0x1a03");
                      },
                  .args = {"--only", "env.hybrid_graphics"},
                  .codes = {},
                  .exit_code = 0,
                  .extra =
                      [](const nlohmann::json& r) {
                        const nlohmann::json* result = result_of(r, "env.hybrid_graphics");
                        ASSERT_NE(result, nullptr);
                        EXPECT_EQ((*result)["status"], "skip");
                      }});
  // Ctrl-C or SIGTERM while a probe hangs: the report of what ran is still complete (the hung
  // probe is named when its deadline passes), then exit 128 + the signal. The twin without a
  // signal is nvml_hangs above (exit 1).
  // The hung probe is cut short at the signal (not run to its deadline):
  // its check is a skip saying so, and the snapshot's probe issues name it.
  // SIGHUP (the terminal went away) and SIGQUIT are handled the same way.
  for (const auto& [signo, code] : {std::pair{SIGINT, 130}, std::pair{SIGTERM, 143},
                                    std::pair{SIGHUP, 129}, std::pair{SIGQUIT, 131}}) {
    const std::string name = signo == SIGINT    ? "SIGINT"
                             : signo == SIGTERM ? "SIGTERM"
                             : signo == SIGHUP  ? "SIGHUP"
                                                : "SIGQUIT";
    list.push_back(
        {.name = signo == SIGINT ? "nvml_hangs_and_ctrl_c" : "nvml_hangs_and_" + lower(name),
         .fake = "nvml.init_hang=1\n",
         .root = [](FixtureTree& t) { healthy_root(t, 1); },
         // Under a sanitizer gpucheck reaches the hung probe later: the signal comes later, and
         // still before the probe's deadline.
         .args = {"--probe-timeout", std::to_string(2 * k_sanitizer_slowdown)},
         .codes = {},
         .exit_code = code,
         .extra =
             [name](const nlohmann::json& r) {
               const nlohmann::json* nvml = result_of(r, "driver.nvml");
               ASSERT_NE(nvml, nullptr);
               EXPECT_EQ((*nvml)["status"], "skip") << nvml->dump();
               EXPECT_NE((*nvml)["summary"].get<std::string>().find("cut short"), std::string::npos)
                   << nvml->dump();
               bool named = false;
               for (const auto& issue : r["snapshot"]["probe_issues"]) {
                 const std::string message = issue["message"].get<std::string>();
                 named = named || (issue["probe"] == "interrupted" &&
                                   message.find(name) != std::string::npos &&
                                   message.find("nvml probe") != std::string::npos);
               }
               EXPECT_TRUE(named) << r["snapshot"]["probe_issues"].dump(1);
             },
         .signal_after = std::pair{signo, 500 * k_sanitizer_slowdown}});
  }
  // Python frameworks (docs/frameworks.md): a venv on PATH inside the fixture root, read from its
  // files (no interpreter runs under a sysroot).
  list.push_back({.name = "pytorch_venv_fits_the_gpu",
                  .root =
                      [](FixtureTree& t) {
                        healthy_root(t, 1);
                        const std::string site = make_venv(t);
                        make_torch(t, site, "2.11.0+cu130", "13.0");
                        make_cu13_wheels(t, site);
                      },
                  .env = {{"PATH", "/opt/torch/.venv/bin:/usr/bin:/bin"}},
                  .codes = {},
                  .exit_code = 0,
                  .extra =
                      [](const nlohmann::json& r) {
                        const nlohmann::json* result = result_of(r, "fw.pytorch");
                        ASSERT_NE(result, nullptr);
                        EXPECT_EQ((*result)["status"], "pass") << result->dump();
                        const auto& env = r["snapshot"]["python_environments"].at(0);
                        EXPECT_EQ(env["prefix"], "/opt/torch/.venv");
                        EXPECT_EQ(env["source"], "layout");
                        const auto& torch = env["frameworks"].at(0);
                        EXPECT_EQ(torch["cuda"], "13.0");
                        bool cudnn = false;
                        for (const auto& lib : torch["libraries"]) {
                          if (lib["family"] == "cudnn") {
                            cudnn = true;
                            EXPECT_EQ(lib["version"], "9.19.0");
                            EXPECT_EQ(lib["via"], "preload");
                          }
                        }
                        EXPECT_TRUE(cudnn);
                      }});
  list.push_back({.name = "cpu_only_pytorch_and_tensorflow",
                  .root =
                      [](FixtureTree& t) {
                        healthy_root(t, 1);
                        const std::string site = make_venv(t);
                        make_torch(t, site, "2.11.0+cpu", std::nullopt);
                        make_dist(t, site, "tensorflow-cpu", "2.18.0");
                      },
                  .env = {{"PATH", "/opt/torch/.venv/bin:/usr/bin:/bin"}},
                  .codes = {"fw.cpu_only_build"},
                  .exit_code = 0,
                  .extra =
                      [](const nlohmann::json& r) {
                        for (const char* id : {"fw.pytorch", "fw.tensorflow"}) {
                          const nlohmann::json* result = result_of(r, id);
                          ASSERT_NE(result, nullptr) << id;
                          EXPECT_EQ((*result)["status"], "warn") << id;
                        }
                        EXPECT_EQ(result_of(r, "fw.import")->at("status"), "skip");
                      }});
  // ONNX Runtime, TensorRT and CuPy (F37): the libraries their GPU parts need, resolved as the
  // loader would inside the fixture root; each failure with its healthy twin.
  const std::vector<std::string> ort_needs{"libcublasLt.so.12", "libcublas.so.12", "libcudnn.so.9",
                                           "libcudart.so.12"};
  auto system_cuda12 = [](FixtureTree& t, std::string& cache, bool cudart) {
    for (const auto& [soname, version] :
         std::vector<std::pair<std::string, std::string>>{{"libcublasLt.so.12", "12.6.4.1"},
                                                          {"libcublas.so.12", "12.6.4.1"},
                                                          {"libcudnn.so.9", "9.5.1"},
                                                          {"libnvrtc.so.12", "12.6.85"},
                                                          {"libcudart.so.12", "12.6.77"}}) {
      if (cudart || soname != "libcudart.so.12") {
        make_system_library(t, cache, "/usr/local/cuda-12.6/lib64", soname, version);
      }
    }
  };
  for (const char* variant : {"nowhere", "only_in_wheels", "on_loader_path"}) {
    const std::string v = variant;
    list.push_back(
        {.name = "onnxruntime_gpu_cuda12_libraries_" + v,
         .root =
             [v, ort_needs, system_cuda12](FixtureTree& t) {
               healthy_root(t, 1);
               const std::string site = make_venv(t);
               make_onnxruntime_gpu(t, site, "1.20.1", ort_needs);
               std::string cache;
               if (v != "nowhere") {
                 make_ort_cu12_wheels(t, site);
               }
               if (v == "on_loader_path") {
                 system_cuda12(t, cache, true);
               }
             },
         .env = {{"PATH", "/opt/torch/.venv/bin:/usr/bin:/bin"}},
         .args = {"--only", "fw.onnxruntime"},
         .codes = v == "nowhere"          ? std::set<std::string>{"fw.gpu_libraries_missing"}
                  : v == "only_in_wheels" ? std::set<std::string>{"fw.gpu_libraries_off_path"}
                                          : std::set<std::string>{},
         .exit_code = v == "nowhere" ? 1 : 0,
         .extra =
             [v](const nlohmann::json& r) {
               const nlohmann::json* result = result_of(r, "fw.onnxruntime");
               ASSERT_NE(result, nullptr);
               const std::string summary = (*result)["summary"].get<std::string>();
               if (v == "nowhere") {
                 remedy_names(r, "fw.gpu_libraries_missing", "nvidia-cudnn-cu12");
                 const nlohmann::json* f = finding_with(r, "fw.gpu_libraries_missing");
                 EXPECT_NE((*f)["message"].get<std::string>().find(
                               "needs CUDA 12 and cuDNN 9; the loader does not find "
                               "libcublasLt.so.12, libcublas.so.12, libcudnn.so.9"),
                           std::string::npos)
                     << (*f)["message"];
               } else if (v == "only_in_wheels") {
                 remedy_names(r, "fw.gpu_libraries_off_path", "onnxruntime.preload_dlls()");
                 remedy_names(r, "fw.gpu_libraries_off_path", "import torch");
                 const auto& fw = r["snapshot"]["python_environments"].at(0)["frameworks"].at(0);
                 EXPECT_EQ(fw["name"], "onnxruntime");
                 EXPECT_EQ(fw["libraries"].at(2)["elsewhere"].at(0),
                           k_site + "/nvidia/cudnn/lib/libcudnn.so.9");
               } else {
                 EXPECT_EQ((*result)["status"], "pass") << summary;
                 EXPECT_NE(summary.find("cudnn 9.5.1 (ldconfig)"), std::string::npos) << summary;
               }
             }});
  }
  for (const bool cudart : {false, true}) {
    list.push_back({.name = cudart ? "cupy_cuda12x_healthy" : "cupy_cuda12x_without_cudart",
                    .root =
                        [cudart, system_cuda12](FixtureTree& t) {
                          healthy_root(t, 1);
                          const std::string site = make_venv(t);
                          make_dist(t, site, "cupy-cuda12x", "13.3.0");
                          std::string cache;
                          system_cuda12(t, cache, cudart);
                        },
                    .env = {{"PATH", "/opt/torch/.venv/bin:/usr/bin:/bin"}},
                    .args = {"--only", "fw.cupy"},
                    .codes = cudart ? std::set<std::string>{}
                                    : std::set<std::string>{"fw.gpu_libraries_missing"},
                    .exit_code = cudart ? 0 : 1,
                    .extra =
                        [cudart](const nlohmann::json& r) {
                          const nlohmann::json* result = result_of(r, "fw.cupy");
                          ASSERT_NE(result, nullptr);
                          EXPECT_EQ((*result)["status"], cudart ? "pass" : "fail");
                          if (!cudart) {
                            remedy_names(r, "fw.gpu_libraries_missing", "cupy-cuda12x[ctk]");
                            const nlohmann::json* f = finding_with(r, "fw.gpu_libraries_missing");
                            EXPECT_NE((*f)["message"].get<std::string>().find(
                                          "the loader does not find libcudart.so.12 ("),
                                      std::string::npos)
                                << (*f)["message"];
                          }
                        }});
  }
  for (const bool present : {false, true}) {
    list.push_back(
        {.name = present ? "tensorrt_libnvinfer_healthy" : "tensorrt_libnvinfer_needs_absent_cudnn",
         .root =
             [present, system_cuda12](FixtureTree& t) {
               healthy_root(t, 1);
               const std::string site = make_venv(t);
               make_tensorrt(t, site, "tensorrt-cu12", "10.7.0",
                             {"libcudart.so.12", "libcublasLt.so.12", "libcudnn.so.9"});
               std::string cache;
               if (present) {
                 system_cuda12(t, cache, true);
               }
             },
         .env = {{"PATH", "/opt/torch/.venv/bin:/usr/bin:/bin"}},
         .args = {"--only", "fw.tensorrt"},
         .codes =
             present ? std::set<std::string>{} : std::set<std::string>{"fw.gpu_libraries_missing"},
         .exit_code = present ? 0 : 1,
         .extra =
             [present](const nlohmann::json& r) {
               const nlohmann::json* result = result_of(r, "fw.tensorrt");
               ASSERT_NE(result, nullptr);
               EXPECT_EQ((*result)["status"], present ? "pass" : "fail");
               if (!present) {
                 remedy_names(r, "fw.gpu_libraries_missing", "nvidia-cudnn-cu12");
                 const nlohmann::json* f = finding_with(r, "fw.gpu_libraries_missing");
                 EXPECT_NE((*f)["message"].get<std::string>().find("needs CUDA 12 and cuDNN 9"),
                           std::string::npos)
                     << (*f)["message"];
               }
             }});
  }
  // WSL2 (F17): no kernel module, no /dev/nvidia*, and a pass.
  list.push_back({.name = "wsl2_healthy",
                  .root = &wsl_root,
                  .codes = {},
                  .exit_code = 0,
                  .extra =
                      [](const nlohmann::json& r) {
                        const nlohmann::json* module = result_with(r, "driver.kernel_module");
                        ASSERT_NE(module, nullptr);
                        EXPECT_EQ((*module)["status"], "pass");
                        EXPECT_NE((*module)["summary"].get<std::string>().find(
                                      "WSL2: the Windows driver serves the GPU"),
                                  std::string::npos);
                        const nlohmann::json* wsl = result_with(r, "env.wsl");
                        ASSERT_NE(wsl, nullptr);
                        EXPECT_EQ((*wsl)["status"], "pass");
                        // The harmless ldconfig warning is explained as a note.
                        ASSERT_NE(finding_with(r, "env.wsl_ldconfig_warning"), nullptr);
                        EXPECT_EQ(r["snapshot"]["environment"]["wsl_details"]["dxg"], true);
                      },
                  .tree_lib_dir_first = "/usr/lib/wsl/lib"});
  list.push_back(
      {.name = "wsl2_linux_driver_installed_inside",
       .root =
           [](FixtureTree& t) {
             wsl_root(t);
             copy_fake_file("libcuda.so.1",
                            t.host("/usr/lib/x86_64-linux-gnu/libcuda.so.580.95.05"));
             t.symlink("/usr/lib/x86_64-linux-gnu/libcuda.so.1", "libcuda.so.580.95.05");
             copy_fake_file("libnvidia-ml.so.1",
                            t.host("/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.580.95.05"));
             t.symlink("/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1", "libnvidia-ml.so.580.95.05");
             t.file("/var/lib/dpkg/status", dpkg_status({"cuda-drivers", "libnvidia-compute-580"}));
           },
       .codes = {"env.wsl_linux_driver_library", "env.wsl_linux_driver_package"},
       .exit_code = 1,
       .extra =
           [](const nlohmann::json& r) {
             remedy_names(r, "env.wsl_linux_driver_library", "sudo apt remove");
             remedy_names(r, "env.wsl_linux_driver_package",
                          "sudo apt remove --purge cuda-drivers libnvidia-compute-580");
             EXPECT_EQ(result_with(r, "driver.kernel_module")->at("status"), "pass");
           },
       .tree_lib_dir_first = "/usr/lib/x86_64-linux-gnu"});
  list.push_back({.name = "wsl2_toolkit_through_the_cuda_meta_package",
                  .root =
                      [](FixtureTree& t) {
                        wsl_root(t);
                        t.file("/var/lib/dpkg/status", dpkg_status({"cuda", "cuda-toolkit-12-8"}));
                      },
                  .codes = {"env.wsl_cuda_meta_package"},
                  .exit_code = 0,
                  .extra =
                      [](const nlohmann::json& r) {
                        remedy_names(r, "env.wsl_cuda_meta_package", "cuda-toolkit-X-Y");
                      },
                  .tree_lib_dir_first = "/usr/lib/wsl/lib"});
  list.push_back({.name = "wsl2_without_dxg_and_nvml",
                  .root =
                      [](FixtureTree& t) {
                        wsl_root(t);
                        t.remove("/dev/dxg");
                        t.remove("/usr/lib/wsl/lib/libnvidia-ml.so.1");
                      },
                  .codes = {"env.wsl_file_missing"},
                  .exit_code = 1,
                  .extra =
                      [](const nlohmann::json& r) {
                        remedy_names(r, "env.wsl_file_missing", "wsl --update");
                        int missing = 0;
                        for (const auto& f : result_with(r, "env.wsl")->at("findings")) {
                          missing += f["code"] == "env.wsl_file_missing" ? 1 : 0;
                        }
                        EXPECT_EQ(missing, 2);
                      },
                  .drop_libraries = {"libnvidia-ml"},
                  .tree_lib_dir_first = "/usr/lib/wsl/lib"});
  // A GPU that fell off the bus (F22): NVML counts two GPUs but answers GPU_IS_LOST (15) for
  // the second, CUDA lists one, its config space reads all ones.
  auto config_space = [](FixtureTree& t, int gpu, bool lost) {
    std::string bytes(64, '\0');
    if (lost) {
      bytes.assign(64, static_cast<char>(0xff));
    } else {
      bytes[0] = static_cast<char>(0xde);
      bytes[1] = 0x10;
      bytes[2] = 0x30;
      bytes[3] = 0x23;
    }
    t.file("/sys/bus/pci/devices/" + fake_bdf(gpu) + "/config", bytes);
  };
  list.push_back(
      {.name = "gpu_fell_off_the_bus",
       .fake = "gpu.count=2\ngpu.1.handle_rc=15\ngpu.1.cuda=0\n",
       .root =
           [config_space](FixtureTree& t) {
             healthy_root(t, 2);
             config_space(t, 0, false);
             config_space(t, 1, true);
             t.file("/proc/uptime", "7200.00 1000.00\n");
             t.file("/dev/kmsg", "4,812,7100000000,-;NVRM: Xid (PCI:0000:28:00): 79, "
                                 "pid='<unknown>', name=<unknown>, GPU has fallen off "
                                 "the bus.\n");
           },
       .codes = {"gpu.lost", "log.xid_fatal"},
       .exit_code = 1,
       .extra =
           [](const nlohmann::json& r) {
             const nlohmann::json* lost = finding_with(r, "gpu.lost");
             ASSERT_NE(lost, nullptr);
             EXPECT_EQ((*lost)["gpu_index"], 1);
             const std::string message = (*lost)["message"].get<std::string>();
             EXPECT_NE(message.find(fake_bdf(1)), std::string::npos) << message;
             EXPECT_NE(message.find("GPU_IS_LOST"), std::string::npos) << message;
             EXPECT_NE(message.find("0xffffffff"), std::string::npos) << message;
             EXPECT_NE(message.find("CUDA sees 1 of NVML's 2"), std::string::npos) << message;
             remedy_names(r, "gpu.lost", "reseat");
             remedy_names(r, "gpu.lost", "RMA");
             EXPECT_NE(message.find("Xid 79"), std::string::npos) << message;
             const nlohmann::json* xid = finding_with(r, "log.xid_fatal");
             ASSERT_NE(xid, nullptr);
             EXPECT_EQ((*xid)["gpu_index"], 1);
             remedy_names(r, "log.xid_fatal", "https://docs.nvidia.com/deploy/xid-errors/");
             // The lost GPU is the root cause; the kernel log's Xid its consequence.
             ASSERT_EQ(r["root_causes"].size(), 1u) << r["root_causes"].dump(1);
             EXPECT_EQ(r["root_causes"][0]["code"], "gpu.lost");
             EXPECT_EQ(r["root_causes"][0]["gpu_index"], 1);
             EXPECT_EQ(r["root_causes"][0]["explains"][0]["check_id"], "driver.kernel_log");
           }});
  // Lost after NVML gave its handle (issue 35): every query answers GPU_IS_LOST, as nvidia-smi's
  // "ERR!". It read as a GPU with no name and its checks skipped, exit 0; now it is lost, named
  // by its PCI address. The twin is two_gpus_answering_on_the_bus.
  list.push_back(
      {.name = "gpu_lost_after_its_handle",
       .fake = "gpu.count=2\ngpu.1.lost_after_handle=1\ngpu.1.cuda=0\n",
       .root =
           [config_space](FixtureTree& t) {
             healthy_root(t, 2);
             config_space(t, 0, false);
             config_space(t, 1, true);
           },
       .codes = {"gpu.lost"},
       .exit_code = 1,
       .extra =
           [](const nlohmann::json& r) {
             const nlohmann::json* lost = finding_with(r, "gpu.lost");
             ASSERT_NE(lost, nullptr);
             EXPECT_EQ((*lost)["gpu_index"], 1);
             const std::string message = (*lost)["message"].get<std::string>();
             EXPECT_NE(message.find("GPU 1 at " + fake_bdf(1)), std::string::npos) << message;
             EXPECT_NE(message.find("NVML gave its handle, then nvmlDeviceGetName returned "
                                    "GPU_IS_LOST (15)"),
                       std::string::npos)
                 << message;
             EXPECT_EQ(r["snapshot"]["gpus"].size(), 1u) << "the lost GPU is listed as a GPU";
             const auto& failure = r["snapshot"]["nvml"]["handle_failures"].at(0);
             EXPECT_EQ(failure["call"], "nvmlDeviceGetName");
           }});
  list.push_back(
      {.name = "two_gpus_answering_on_the_bus",
       .fake = "gpu.count=2\n",
       .root =
           [config_space](FixtureTree& t) {
             healthy_root(t, 2);
             config_space(t, 0, false);
             config_space(t, 1, false);
           },
       .codes = {},
       .exit_code = 0,
       .extra =
           [](const nlohmann::json& r) {
             EXPECT_EQ(r["snapshot"]["kernel_module"]["pci_devices"][1]["config_all_ones"], false);
           }});
  // The kernel log (F22, F24, F39): Xids decoded and weighed, attributed to GPUs by address.
  auto kmsg = [](FixtureTree& t, const std::string& records) {
    t.file("/proc/uptime", "7200.00 1000.00\n");
    t.file("/dev/kmsg", "6,1,0,-;Linux version 6.8.0-45-generic\n" + records);
  };
  list.push_back({.name = "kernel_log_clean",
                  .root =
                      [kmsg](FixtureTree& t) {
                        healthy_root(t, 1);
                        kmsg(t, "6,2,1000000,-;NVRM: loading NVIDIA UNIX Open Kernel Module\n");
                      },
                  .codes = {},
                  .exit_code = 0,
                  .extra =
                      [](const nlohmann::json& r) {
                        EXPECT_EQ(result_with(r, "driver.kernel_log")->at("status"), "pass");
                        EXPECT_EQ(r["snapshot"]["kernel_log"]["records_read"], 2);
                      }});
  list.push_back(
      {.name = "kernel_log_application_xids_are_notes",
       .root =
           [kmsg](FixtureTree& t) {
             healthy_root(t, 1);
             kmsg(t, "4,2,7000000000,-;NVRM: Xid (PCI:0000:18:00): 13, pid=42, name=python, "
                     "Graphics Exception: ESR 0x514648=0x1000000e\n"
                     "4,3,7001000000,-;NVRM: Xid (PCI:0000:18:00): 43, pid=42, name=python, Ch 8\n"
                     "3,4,7002000000,-;pcieport 0000:00:01.0: AER: Corrected error received: "
                     "0000:18:00.0\n");
           },
       .codes = {},
       .exit_code = 0,
       .extra =
           [](const nlohmann::json& r) {
             const nlohmann::json* log = result_with(r, "driver.kernel_log");
             ASSERT_NE(log, nullptr);
             EXPECT_EQ((*log)["status"], "pass");
             std::set<std::string> codes;
             for (const auto& f : (*log)["findings"]) {
               codes.insert(f["code"].get<std::string>());
               EXPECT_EQ(f["gpu_index"], 0);
             }
             EXPECT_EQ(codes,
                       (std::set<std::string>{"log.xid_application", "log.pcie_aer_corrected"}));
             remedy_names(r, "log.xid_application", "compute-sanitizer");
           }});
  // A fatal PCIe error that only the root port reports, in the form kernels print since the
  // 2025 AER logging rework ("error message received from", "Uncorrectable"): it read as nothing
  // before. Its twin: a correctable one in the same form, a note.
  for (const bool fatal : {true, false}) {
    list.push_back(
        {.name = fatal ? "kernel_log_fatal_aer_in_the_reworked_form"
                       : "kernel_log_correctable_aer_in_the_reworked_form",
         .root =
             [kmsg, fatal](FixtureTree& t) {
               healthy_root(t, 1);
               kmsg(t, std::string("3,2,7000000000,-;pcieport 0000:00:01.0: AER: ") +
                           (fatal ? "Uncorrectable (Fatal)" : "Correctable") +
                           " error message received from 0000:18:00.0\n");
             },
         .codes = fatal ? std::set<std::string>{"log.pcie_aer_fatal"} : std::set<std::string>{},
         .exit_code = fatal ? 1 : 0,
         .extra =
             [fatal](const nlohmann::json& r) {
               const nlohmann::json* log = result_with(r, "driver.kernel_log");
               ASSERT_NE(log, nullptr);
               ASSERT_EQ((*log)["findings"].size(), 1u) << log->dump();
               EXPECT_EQ((*log)["findings"][0]["code"],
                         fatal ? "log.pcie_aer_fatal" : "log.pcie_aer_corrected");
               EXPECT_EQ((*log)["findings"][0]["gpu_index"], 0);
             }});
  }
  list.push_back(
      {.name = "kernel_log_uncontained_ecc_error",
       .root =
           [kmsg](FixtureTree& t) {
             healthy_root(t, 1);
             kmsg(t, "4,2,7000000000,-;NVRM: Xid (PCI:0000:18:00): 95, pid=42, "
                     "name=python, Uncontained: FBHUB. RST: Yes, D-RST: No\n");
           },
       .codes = {"log.xid_fatal"},
       .exit_code = 1,
       .extra =
           [](const nlohmann::json& r) {
             remedy_names(r, "log.xid_fatal", "reset the GPU");
             const std::string message =
                 finding_with(r, "log.xid_fatal")->at("message").get<std::string>();
             EXPECT_NE(message.find("ROBUST_CHANNEL_UNCONTAINED_ERROR"), std::string::npos)
                 << message;
             EXPECT_NE(message.find("GPU 0 (0000:18:00.0)"), std::string::npos) << message;
           }});
  // /dev/shm in a container (F38): Docker's default 64 MiB with two GPUs and NCCL; its twin has
  // --shm-size=16g.
  for (const bool small : {true, false}) {
    list.push_back(
        {.name =
             small ? "container_shm_64_mib_with_two_gpus" : "container_shm_16_gib_with_two_gpus",
         .fake = "gpu.count=2\n",
         .root =
             [small](FixtureTree& t) {
               healthy_root(t, 2);
               t.file("/.dockerenv").dir("/dev/shm");
               t.file("/proc/self/mounts",
                      std::string("overlay / overlay rw 0 0\nshm /dev/shm tmpfs "
                                  "rw,nosuid,nodev,noexec,relatime,size=") +
                          (small ? "65536k" : "16777216k") + " 0 0\n");
             },
         .env = {{"NVIDIA_DRIVER_CAPABILITIES", "compute,utility"}},
         .codes = small ? std::set<std::string>{"env.shm_small"} : std::set<std::string>{},
         .exit_code = 0,
         .extra =
             [small](const nlohmann::json& r) {
               EXPECT_EQ(result_with(r, "env.shm")->at("status"), small ? "warn" : "pass");
               if (small) {
                 remedy_names(r, "env.shm_small", "--shm-size");
                 remedy_names(r, "env.shm_small", "--ipc=host");
               }
             }});
  }
  // A GPU that drives a display (F40); healthy_single_gpu is its twin.
  list.push_back({.name = "display_watchdog",
                  .fake = "gpu.0.exec_timeout=1\ngpu.0.display_active=1\ngpu.0.display_mode=1\n",
                  .root = [](FixtureTree& t) { healthy_root(t, 1); },
                  .codes = {"gpu.display_watchdog"},
                  .exit_code = 0,
                  .extra =
                      [](const nlohmann::json& r) {
                        remedy_names(r, "gpu.display_watchdog", "without a display");
                        EXPECT_EQ(r["snapshot"]["gpus"][0]["kernel_exec_timeout"], true);
                        EXPECT_EQ(r["snapshot"]["gpus"][0]["display_active"], true);
                      }});
  return list;
}

INSTANTIATE_TEST_SUITE_P(EndToEnd, ScenarioTest, ::testing::ValuesIn(scenarios()),
                         [](const ::testing::TestParamInfo<Scenario>& param) {
                           return param.param.name;
                         });

} // namespace
} // namespace gpucheck::testing

namespace gpucheck::testing {
namespace {

// The CI machine as it is (no driver; the CUDA toolkit and cuDNN installed): the default run
// reports the driver missing, finds cuDNN and the CUDA runtime with paths and versions, exits 1.
TEST(ThisMachine, DefaultRunWithoutDriverFindsTheLibraries) {
  if (fs::exists("/proc/driver/nvidia/version")) {
    GTEST_SKIP() << "this machine has an NVIDIA driver; the case is a machine without one";
  }
  if (!fs::exists("/usr/local/cuda/lib64/libcudnn.so.9") ||
      !fs::exists("/usr/local/cuda/lib64/libcudart.so.13")) {
    GTEST_SKIP() << "no CUDA 13 toolkit with cuDNN 9 under /usr/local/cuda on this machine";
  }
  const cli_test::RunResult run =
      cli_test::run_gpucheck({.args = {"--json"},
                              .env = {{"PATH", "/usr/local/cuda/bin:/usr/bin:/bin"}, {"HOME", "/"}},
                              .inherit_env = false});
  EXPECT_EQ(run.exit_code, 1) << run.err;
  const nlohmann::json report = nlohmann::json::parse(run.out, nullptr, false);
  ASSERT_FALSE(report.is_discarded()) << run.err;
  std::set<std::string> codes;
  for (const auto& result : report["results"]) {
    for (const auto& finding : result["findings"]) {
      codes.insert(finding["code"].get<std::string>());
    }
  }
  EXPECT_TRUE(codes.contains("driver.missing"));
  for (const char* family : {"cudnn", "cudart"}) {
    bool seen = false;
    for (const auto& lib : report["snapshot"]["libraries"]) {
      if (lib["family"] != family) {
        continue;
      }
      seen = true;
      EXPECT_TRUE(lib["load"]["loaded"].get<bool>()) << family;
      EXPECT_FALSE(lib["load"]["version"].get<std::string>().empty()) << family;
      EXPECT_TRUE(fs::exists(lib["load"]["real_path"].get<std::string>())) << family;
    }
    EXPECT_TRUE(seen) << family;
  }
}

} // namespace
} // namespace gpucheck::testing

namespace gpucheck::testing {
namespace {

/// A fake python3 (a shell script) for the real binary at `bin` (default: the venv's own): it
/// answers the query script with the venv at /venv, and does `on_import` for an import script.
/// Every run leaves /ran (a marker file) behind.
std::string fake_python_venv(FixtureTree& tree, const std::string& on_import,
                             const std::string& bin = "/venv/bin") {
  const std::string site = make_venv(tree, "/venv");
  make_torch(tree, site, "2.11.0+cu130", "13.0");
  make_cu13_wheels(tree, site);
  const std::string prefix = tree.host("/venv");
  tree.file(bin + "/python3",
            "#!/bin/sh\n: > '" + tree.host("/ran") + "'\ncase \"$5\" in\n  *'import torch'*) " +
                on_import + " ;;\n  *) echo '{\"version\": \"3.12.3\", \"prefix\": \"" + prefix +
                "\", \"site_packages\": [\"" + tree.host(site) + "\"]}' >&3 ;;\nesac\n",
            0755);
  return tree.host(bin + "/python3");
}

cli_test::RunResult run_import(const std::string& python) {
  return cli_test::run_gpucheck(
      {.args = {"--json", "--quick", "--import", "--only", "fw", "--python", python},
       .env = {{"PATH", "/nonexistent"}, {"HOME", "/nonexistent"}},
       .inherit_env = false});
}

const nlohmann::json* import_result(const nlohmann::json& report) {
  for (const auto& result : report["results"]) {
    if (result["check_id"] == "fw.import") {
      return &result;
    }
  }
  return nullptr;
}

TEST(FrameworkImport, CrashingInterpreterIsAFindingNotOurCrash) {
  FixtureTree tree;
  const std::string python =
      fake_python_venv(tree, "echo 'Fatal Python error: Segmentation fault' >&2; kill -SEGV $$");
  const cli_test::RunResult run = run_import(python);
  const nlohmann::json report = nlohmann::json::parse(run.out, nullptr, false);
  ASSERT_FALSE(report.is_discarded()) << run.err;
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_EQ(report_schema().validate(report), std::vector<std::string>{});
  const auto& env = report["snapshot"]["python_environments"].at(0);
  EXPECT_EQ(env["source"], "layout"); // read from its files; only the import ran it
  EXPECT_EQ(env["frameworks"].at(0)["name"], "pytorch");
  const nlohmann::json* result = import_result(report);
  ASSERT_NE(result, nullptr);
  EXPECT_EQ((*result)["status"], "fail");
  EXPECT_EQ((*result)["findings"].at(0)["code"], "fw.import_crashed");
  EXPECT_NE((*result)["findings"][0]["message"].get<std::string>().find("SIGSEGV"),
            std::string::npos);
}

TEST(FrameworkImport, WorkingImportReportsTheGpuAndTheTime) {
  FixtureTree tree;
  const std::string python =
      fake_python_venv(tree, "echo '{\"version\": \"2.11.0+cu130\", \"gpu_available\": true, "
                             "\"device_count\": 1, \"arch_list\": [\"sm_90\"], \"op_ok\": true, "
                             "\"seconds\": 1.25}' >&3");
  const cli_test::RunResult run = run_import(python);
  const nlohmann::json report = nlohmann::json::parse(run.out, nullptr, false);
  ASSERT_FALSE(report.is_discarded()) << run.err;
  const nlohmann::json* result = import_result(report);
  ASSERT_NE(result, nullptr);
  EXPECT_TRUE((*result)["findings"].empty()) << result->dump();
  EXPECT_EQ((*result)["metrics"].at(0)["value"], 1.25);
  EXPECT_EQ(report["snapshot"]["python_environments"][0]["imports"][0]["arch_list"],
            nlohmann::json::array({"sm_90"}));
}

// --quick without interpreters (docs/frameworks.md): a venv on PATH is read from its files; its
// interpreter runs only for --import, or when its files cannot say what it would.
TEST(PythonFiles, PlainRunStartsNoInterpreterAndImportDoes) {
  FixtureTree tree;
  const std::string python = fake_python_venv(tree, "echo '{\"version\": \"2.11.0+cu130\"}' >&3");
  const std::map<std::string, std::string> env{{"PATH", tree.host("/venv/bin")},
                                               {"HOME", "/nonexistent"}};
  const cli_test::RunResult plain = cli_test::run_gpucheck(
      {.args = {"--json", "--quick", "--only", "fw"}, .env = env, .inherit_env = false});
  const nlohmann::json report = nlohmann::json::parse(plain.out, nullptr, false);
  ASSERT_FALSE(report.is_discarded()) << plain.err;
  EXPECT_FALSE(fs::exists(tree.host("/ran"))) << "a plain run started the interpreter";
  const auto& venv = report["snapshot"]["python_environments"].at(0);
  EXPECT_EQ(venv["interpreter"], python);
  EXPECT_EQ(venv["source"], "layout");
  EXPECT_EQ(venv["kind"], "venv");
  EXPECT_EQ(venv["version"], "3.12.3");
  EXPECT_EQ(venv["query_failure"], nullptr);
  EXPECT_EQ(venv["frameworks"].at(0)["name"], "pytorch");

  const cli_test::RunResult with_import =
      cli_test::run_gpucheck({.args = {"--json", "--quick", "--only", "fw", "--import"},
                              .env = env,
                              .inherit_env = false});
  EXPECT_TRUE(fs::exists(tree.host("/ran"))) << "--import did not run the interpreter";
  const nlohmann::json imported = nlohmann::json::parse(with_import.out, nullptr, false);
  ASSERT_FALSE(imported.is_discarded()) << with_import.err;
  EXPECT_EQ(imported["snapshot"]["python_environments"][0]["imports"].at(0)["version"],
            "2.11.0+cu130");
}

TEST(PythonFiles, InterpreterWhoseFilesCannotSayIsAsked) {
  FixtureTree tree;
  // A wrapper outside the venv (like pyenv's shims): no pyvenv.cfg, no standard library near it.
  const std::string python = fake_python_venv(tree, "exit 1", "/shims");
  const cli_test::RunResult run =
      cli_test::run_gpucheck({.args = {"--json", "--quick", "--only", "fw", "--python", python},
                              .env = {{"PATH", "/nonexistent"}, {"HOME", "/nonexistent"}},
                              .inherit_env = false});
  const nlohmann::json report = nlohmann::json::parse(run.out, nullptr, false);
  ASSERT_FALSE(report.is_discarded()) << run.err;
  EXPECT_TRUE(fs::exists(tree.host("/ran")));
  const auto& env = report["snapshot"]["python_environments"].at(0);
  EXPECT_EQ(env["source"], "interpreter");
  EXPECT_EQ(env["prefix"], tree.host("/venv"));
  EXPECT_EQ(env["frameworks"].at(0)["name"], "pytorch");
}

// Issue 34: a pyenv shim on PATH was run as root, and ran `bash` from PATH. The shim is read,
// never run: the interpreter it would pick (from pyenv's version file) is asked instead; with
// a version it cannot resolve ("system"), nothing is run and the report says so.
TEST(PythonFiles, AVersionManagersShimIsResolvedNotRun) {
  FixtureTree tree;
  fake_python_venv(tree, "exit 1", "/pyenv/versions/3.11.9/bin");
  tree.file("/pyenv/shims/python3",
            "#!/bin/sh\n: > '" + tree.host("/ran-shim") + "'\nexec pyenv exec python3 \"$@\"\n",
            0755);
  for (const char* version : {"3.11.9", "system"}) {
    SCOPED_TRACE(version);
    tree.file("/pyenv/version", std::string(version) + "\n");
    fs::remove(tree.host("/ran"));
    const cli_test::RunResult run =
        cli_test::run_gpucheck({.args = {"--json", "--quick", "--only", "fw"},
                                .env = {{"PATH", tree.host("/pyenv/shims") + ":/usr/bin:/bin"},
                                        {"HOME", "/nonexistent"},
                                        {"GPUCHECK_TEST_TREAT_AS_ROOT", "1"}},
                                .inherit_env = false});
    const nlohmann::json report = nlohmann::json::parse(run.out, nullptr, false);
    ASSERT_FALSE(report.is_discarded()) << run.err;
    EXPECT_FALSE(fs::exists(tree.host("/ran-shim"))) << "the shim ran";
    const std::string notes = report["snapshot"]["probe_issues"].dump();
    if (std::string_view(version) == "system") {
      EXPECT_FALSE(fs::exists(tree.host("/ran")));
      EXPECT_NE(notes.find("a version manager's shim"), std::string::npos) << notes;
    } else {
      EXPECT_TRUE(fs::exists(tree.host("/ran"))) << "the interpreter the shim picks was not asked";
      EXPECT_EQ(report["snapshot"]["python_environments"].at(0)["prefix"], tree.host("/venv"));
    }
  }
}

// As root (here the test hook GPUCHECK_TEST_TREAT_AS_ROOT=1, which only
// makes gpucheck run less), nothing runs from a place another user can write, unless the user
// named it (--python); the report says what was not run and why (probe issue "root_safety").
TEST(RootSafety, AnInterpreterInAWorldWritableVenvIsNotRunAsRootUnlessNamed) {
  FixtureTree tree;
  const std::string python = fake_python_venv(tree, "echo '{\"version\": \"2.11.0\"}' >&3");
  const std::map<std::string, std::string> env{{"PATH", tree.host("/venv/bin")},
                                               {"HOME", "/nonexistent"},
                                               {"GPUCHECK_TEST_TREAT_AS_ROOT", "1"}};
  const std::vector<std::string> args{"--json", "--quick", "--only", "fw", "--import"};
  // Healthy twin: a closed venv runs (as the PythonFiles test shows without the hook).
  fs::permissions(tree.host("/venv"), fs::perms::owner_all | fs::perms::group_read |
                                          fs::perms::group_exec | fs::perms::others_read |
                                          fs::perms::others_exec);
  cli_test::RunResult run =
      cli_test::run_gpucheck({.args = args, .env = env, .inherit_env = false});
  EXPECT_TRUE(fs::exists(tree.host("/ran"))) << run.err;
  nlohmann::json report = nlohmann::json::parse(run.out, nullptr, false);
  ASSERT_FALSE(report.is_discarded()) << run.err;
  EXPECT_TRUE(root_safety_notes(report).empty());

  // Anyone may write the venv: its interpreter (and the .pth files it would run) stay unrun.
  fs::remove(tree.host("/ran"));
  fs::permissions(tree.host("/venv"), fs::perms::all);
  run = cli_test::run_gpucheck({.args = args, .env = env, .inherit_env = false});
  EXPECT_FALSE(fs::exists(tree.host("/ran"))) << "ran an interpreter another user could replace";
  report = nlohmann::json::parse(run.out, nullptr, false);
  ASSERT_FALSE(report.is_discarded()) << run.err;
  // Two refusals: the interpreter, and the venv's cuDNN wheel, which a probe child would have
  // loaded by path (its constructor would run as root).
  const std::vector<std::string> notes = root_safety_notes(report);
  ASSERT_EQ(notes.size(), 2u) << report["snapshot"]["probe_issues"].dump(1);
  const std::string joined = notes[0] + "\n" + notes[1];
  EXPECT_NE(joined.find("did not run the Python interpreter '" + python + "' as root"),
            std::string::npos)
      << joined;
  EXPECT_NE(joined.find("did not load the cuDNN copy '" +
                        tree.host("/venv/lib/python3.12/"
                                  "site-packages/nvidia/cudnn/"
                                  "lib/libcudnn.so.9") +
                        "' as root"),
            std::string::npos)
      << joined;
  EXPECT_NE(notes[0].find("writable by every user"), std::string::npos) << notes[0];
  // The frameworks are still read from the venv's files.
  EXPECT_EQ(report["snapshot"]["python_environments"].at(0)["frameworks"].at(0)["name"], "pytorch");

  // Named on the command line: the user's own choice, run.
  run = cli_test::run_gpucheck(
      {.args = {"--json", "--quick", "--only", "fw", "--import", "--python", python},
       .env = env,
       .inherit_env = false});
  EXPECT_TRUE(fs::exists(tree.host("/ran"))) << run.err;
}

// As root, an LD_LIBRARY_PATH folder anyone may write leaves every child's environment: the CUDA
// probe loads libcuda from the next entry, and the report names the entry left out. Its twin:
// the same folder, closed, is used.
TEST(RootSafety, AWorldWritableLibraryPathEntryIsLeftOutAsRoot) {
  FixtureTree tree;
  tree.dir("/libs");
  const std::string fakes = GPUCHECK_FAKE_LIB_DIR;
  fs::copy_file(fs::canonical(fakes + "/libcuda.so.1"), tree.host("/libs/libcuda.so.1"));
  const std::map<std::string, std::string> env{
      {"PATH", "/usr/bin:/bin"},
      {"HOME", "/nonexistent"},
      {"LD_LIBRARY_PATH", tree.host("/libs") + ":" + fakes},
      {"GPUCHECK_TEST_TREAT_AS_ROOT", "1"}};
  const std::vector<std::string> args{"--json", "--quick", "--only", "cuda.init"};
  fs::permissions(tree.host("/libs"), fs::perms::owner_all | fs::perms::group_read |
                                          fs::perms::group_exec | fs::perms::others_read |
                                          fs::perms::others_exec);
  cli_test::RunResult run =
      cli_test::run_gpucheck({.args = args, .env = env, .inherit_env = false});
  nlohmann::json report = nlohmann::json::parse(run.out, nullptr, false);
  ASSERT_FALSE(report.is_discarded()) << run.err;
  EXPECT_EQ(report["snapshot"]["cuda"]["library"]["path"], tree.host("/libs/libcuda.so.1"));
  EXPECT_TRUE(root_safety_notes(report).empty());

  fs::permissions(tree.host("/libs"), fs::perms::all);
  run = cli_test::run_gpucheck({.args = args, .env = env, .inherit_env = false});
  report = nlohmann::json::parse(run.out, nullptr, false);
  ASSERT_FALSE(report.is_discarded()) << run.err;
  const std::string loaded = report["snapshot"]["cuda"]["library"]["path"].get<std::string>();
  EXPECT_EQ(loaded.find(tree.host("/libs")), std::string::npos) << loaded;
  const std::vector<std::string> notes = root_safety_notes(report);
  ASSERT_EQ(notes.size(), 1u) << report["snapshot"]["probe_issues"].dump(1);
  EXPECT_NE(notes[0].find("left LD_LIBRARY_PATH entry '" + tree.host("/libs") + "' out"),
            std::string::npos)
      << notes[0];
  EXPECT_NE(notes[0].find("writable by every user"), std::string::npos) << notes[0];
}

TEST(RootSafety, NvccInAWorldWritableDirectoryIsNotRunAsRoot) {
  FixtureTree tree;
  tree.file("/tools/bin/nvcc",
            "#!/bin/sh\n: > '" + tree.host("/ran") +
                "'\necho 'Cuda compilation tools, release 12.8, V12.8.93'\n",
            0755);
  fs::permissions(tree.host("/tools/bin"), fs::perms::owner_all | fs::perms::group_read |
                                               fs::perms::group_exec | fs::perms::others_read |
                                               fs::perms::others_exec);
  const std::map<std::string, std::string> env{{"PATH", tree.host("/tools/bin") + ":/usr/bin:/bin"},
                                               {"HOME", "/nonexistent"},
                                               {"GPUCHECK_TEST_TREAT_AS_ROOT", "1"}};
  const std::vector<std::string> args{"--json", "--quick", "--only", "compat.toolkit_driver"};
  cli_test::RunResult run =
      cli_test::run_gpucheck({.args = args, .env = env, .inherit_env = false});
  nlohmann::json report = nlohmann::json::parse(run.out, nullptr, false);
  ASSERT_FALSE(report.is_discarded()) << run.err;
  EXPECT_TRUE(fs::exists(tree.host("/ran")));
  EXPECT_EQ(report["snapshot"]["toolkit"]["nvcc_version"], "12.8.93");
  EXPECT_TRUE(root_safety_notes(report).empty());

  fs::remove(tree.host("/ran"));
  fs::permissions(tree.host("/tools/bin"), fs::perms::all);
  run = cli_test::run_gpucheck({.args = args, .env = env, .inherit_env = false});
  report = nlohmann::json::parse(run.out, nullptr, false);
  ASSERT_FALSE(report.is_discarded()) << run.err;
  EXPECT_FALSE(fs::exists(tree.host("/ran"))) << "ran an nvcc another user could replace";
  EXPECT_EQ(report["snapshot"]["toolkit"]["nvcc_path"], tree.host("/tools/bin/nvcc"));
  EXPECT_EQ(report["snapshot"]["toolkit"]["nvcc_version"], nullptr);
  const std::vector<std::string> notes = root_safety_notes(report);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("did not run nvcc"), std::string::npos) << notes[0];
}

using gpucheck::testing::process_ended;

// SIGTERM while the probes hang (NVML's init, an interpreter whose own
// subprocess sleeps) ends the run at once, not at the probes' 30 s deadline; the interpreter's
// subprocess dies with it (it was reparented to init before); the report is still written and
// says what was cut short; exit 143. The twin without a signal is the nvml_hangs scenario.
TEST(Signals, ASignalEndsHungProbesAndWhatTheyStartedAndTheReportSaysSo) {
  FixtureTree tree;
  const std::string pid_file = tree.host("/grandchild.pid");
  // An interpreter outside any venv (its files cannot say what it is): it is asked, and hangs
  // after starting a process of its own.
  tree.file("/shims/python3",
            "#!/bin/sh\nsleep 300 &\necho $! > '" + pid_file + ".tmp'\nmv '" + pid_file +
                ".tmp' '" + pid_file + "'\nsleep 300\n",
            0755);
  const std::string scenario = tree.host("/fake.scenario");
  std::ofstream(scenario) << "nvml.init_hang=1\n";
  const auto start = std::chrono::steady_clock::now();
  const cli_test::RunResult run =
      cli_test::run_gpucheck({.args = {"--json", "--quick", "--probe-timeout", "30", "--python",
                                       tree.host("/shims/python3")},
                              .env = {{"PATH", "/usr/bin:/bin"},
                                      {"HOME", "/nonexistent"},
                                      {"LD_LIBRARY_PATH", GPUCHECK_FAKE_LIB_DIR},
                                      {"FAKE_GPU_SCENARIO", scenario}},
                              .inherit_env = false,
                              .signal_after = std::pair{SIGTERM, 3000}});
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(run.exit_code, 143) << run.err;
  EXPECT_LT(took, std::chrono::seconds(20)) << "the probes ran on to their 30 s deadline";
  std::string pid;
  std::getline(std::ifstream(pid_file), pid);
  ASSERT_FALSE(pid.empty()) << "the interpreter never started its subprocess";
  bool ended = false;
  for (int i = 0; i < 300 && !ended; ++i) {
    ended = process_ended(pid);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(ended) << "the interpreter's subprocess " << pid << " outlived gpucheck's SIGTERM";
  const nlohmann::json report = nlohmann::json::parse(run.out, nullptr, false);
  ASSERT_FALSE(report.is_discarded()) << run.err;
  std::string interrupted;
  for (const auto& issue : report["snapshot"]["probe_issues"]) {
    if (issue["probe"] == "interrupted") {
      interrupted = issue["message"].get<std::string>();
    }
  }
  EXPECT_NE(interrupted.find("SIGTERM"), std::string::npos) << interrupted;
  EXPECT_NE(interrupted.find("nvml probe"), std::string::npos) << interrupted;
  EXPECT_NE(interrupted.find("python " + tree.host("/shims/python3") + " probe"), std::string::npos)
      << interrupted;
  const nlohmann::json* nvml = result_of(report, "driver.nvml");
  ASSERT_NE(nvml, nullptr);
  EXPECT_EQ((*nvml)["status"], "skip") << nvml->dump();
}

/// A fake interpreter that starts a process of its own (its pid into `pid_file`), then hangs
/// (`then` "sleep 300") or answers the query as an interpreter outside any venv and exits.
std::string spawning_python(FixtureTree& tree, const std::string& pid_file,
                            const std::string& then) {
  tree.file("/shims/python3",
            "#!/bin/sh\nsleep 300 &\necho $! > '" + pid_file + ".tmp'\nmv '" + pid_file +
                ".tmp' '" + pid_file + "'\n" + then + "\n",
            0755);
  return tree.host("/shims/python3");
}

std::string await_pid(const std::string& pid_file) {
  std::string pid;
  for (int i = 0; i < 3000 && pid.empty(); ++i) {
    std::getline(std::ifstream(pid_file), pid);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return pid;
}

bool ends_within(const std::string& pid, std::chrono::milliseconds limit) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (!process_ended(pid)) {
    if (std::chrono::steady_clock::now() > until) {
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

// SIGKILL cannot be handled: what gpucheck's children started dies with it all the same (the
// keeper, src/process/keeper.hpp, kills their process groups), where before the interpreter died
// (PR_SET_PDEATHSIG) and its own subprocess ran on. The twin: an interpreter that answers and
// exits leaving a process behind; it is killed as its interpreter is reaped, so it holds neither
// the run nor anything after it, and the report is complete.
TEST(Signals, WhatAChildStartedDiesWithAKilledGpucheck) {
  FixtureTree tree;
  const std::string pid_file = tree.host("/grandchild.pid");
  const std::string python = spawning_python(tree, pid_file, "sleep 300");
  const cli_test::RunSpec spec{
      .args = {"--json", "--quick", "--probe-timeout", "60", "--python", python},
      .env = {{"PATH", "/usr/bin:/bin"}, {"HOME", "/nonexistent"}},
      .inherit_env = false};
  const pid_t gpucheck =
      cli_test::spawn_gpucheck(spec, tree.host("/out.json"), tree.host("/err.txt"));
  ASSERT_GT(gpucheck, 0);
  const std::string pid = await_pid(pid_file);
  ::kill(gpucheck, SIGKILL);
  int status = 0;
  ::waitpid(gpucheck, &status, 0);
  ASSERT_FALSE(pid.empty()) << "the interpreter never started its subprocess";
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;
  EXPECT_TRUE(ends_within(pid, std::chrono::seconds(5)))
      << "the interpreter's subprocess " << pid << " outlived a SIGKILLed gpucheck";
  if (!process_ended(pid)) {
    ::kill(std::stoi(pid), SIGKILL);
  }
}

TEST(Signals, WhatAChildLeftBehindEndsWithItsChild) {
  FixtureTree tree;
  const std::string pid_file = tree.host("/grandchild.pid");
  const std::string python = spawning_python(
      tree, pid_file,
      "echo '{\"version\": \"3.12.3\", \"prefix\": \"/usr\", \"site_packages\": []}' >&3");
  const auto start = std::chrono::steady_clock::now();
  const cli_test::RunResult run =
      cli_test::run_gpucheck({.args = {"--json", "--quick", "--only", "fw", "--python", python},
                              .env = {{"PATH", "/usr/bin:/bin"}, {"HOME", "/nonexistent"}},
                              .inherit_env = false});
  // The leftover holds the interpreter's result pipe: before, gpucheck waited 15 s for it.
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  const std::string pid = await_pid(pid_file);
  ASSERT_FALSE(pid.empty()) << "the interpreter never ran: " << run.err;
  EXPECT_TRUE(ends_within(pid, std::chrono::seconds(5)))
      << "the interpreter's subprocess " << pid << " outlived gpucheck";
  if (!process_ended(pid)) {
    ::kill(std::stoi(pid), SIGKILL);
  }
  const nlohmann::json report = nlohmann::json::parse(run.out, nullptr, false);
  ASSERT_FALSE(report.is_discarded()) << run.err;
  EXPECT_EQ(report_schema().validate(report), std::vector<std::string>{});
  EXPECT_FALSE(report["snapshot"]["python_environments"].empty()) << report["snapshot"].dump();
}

/// Give a tree's directory and everything in it to `uid` (lchown: links are not followed).
void chown_all(const std::string& path, uid_t uid) {
  ASSERT_EQ(::lchown(path.c_str(), uid, uid), 0) << path;
  for (const fs::directory_entry& entry : fs::recursive_directory_iterator(path)) {
    ASSERT_EQ(::lchown(entry.path().c_str(), uid, uid), 0) << entry.path();
  }
}

// As real root (no test hook): an interpreter, an nvcc and a cuDNN wheel in
// places another user owns (uid 65534, with ordinary modes 0755/0644) are neither run nor loaded,
// whichever way they are found (PATH, $VIRTUAL_ENV, $CONDA_PREFIX; $CUDA_HOME), and the report
// says why. Healthy twin: the same files owned by root run.
TEST(RootSafety, AsRootNothingOwnedByAnotherUserRunsOrLoads) {
  if (::geteuid() != 0) {
    GTEST_SKIP() << "needs root: the test hands files to uid 65534 (the suite runs as root in CI)";
  }
  FixtureTree tree;
  const std::string python = fake_python_venv(tree, "echo '{\"version\": \"2.11.0\"}' >&3");
  tree.file("/cuda/bin/nvcc",
            "#!/bin/sh\n: > '" + tree.host("/ran-nvcc") +
                "'\necho 'Cuda compilation tools, release 12.8, V12.8.93'\n",
            0755);
  const std::vector<std::string> args{"--json", "--quick", "--import", "--only",
                                      "fw,compat.toolkit_driver"};
  const std::vector<std::map<std::string, std::string>> ways = {
      {{"PATH", tree.host("/venv/bin") + ":/usr/bin:/bin"}},
      {{"PATH", "/usr/bin:/bin"}, {"VIRTUAL_ENV", tree.host("/venv")}},
      {{"PATH", "/usr/bin:/bin"}, {"CONDA_PREFIX", tree.host("/venv")}},
  };
  for (const uid_t owner : {uid_t{0}, uid_t{65534}}) {
    chown_all(tree.host("/venv"), owner);
    chown_all(tree.host("/cuda"), owner);
    for (std::map<std::string, std::string> env : ways) {
      SCOPED_TRACE(fmt::format("owner {}, found through {}", owner, env.rbegin()->first));
      env["HOME"] = "/nonexistent";
      env["CUDA_HOME"] = tree.host("/cuda");
      fs::remove(tree.host("/ran"));
      fs::remove(tree.host("/ran-nvcc"));
      const cli_test::RunResult run =
          cli_test::run_gpucheck({.args = args, .env = env, .inherit_env = false});
      const nlohmann::json report = nlohmann::json::parse(run.out, nullptr, false);
      ASSERT_FALSE(report.is_discarded()) << run.err;
      const std::vector<std::string> notes = root_safety_notes(report);
      if (owner == 0) {
        EXPECT_TRUE(fs::exists(tree.host("/ran"))) << "a root-owned venv's interpreter did not run";
        EXPECT_TRUE(fs::exists(tree.host("/ran-nvcc"))) << "a root-owned nvcc did not run";
        EXPECT_TRUE(notes.empty()) << report["snapshot"]["probe_issues"].dump(1);
        continue;
      }
      EXPECT_FALSE(fs::exists(tree.host("/ran"))) << "ran an interpreter uid 65534 owns";
      EXPECT_FALSE(fs::exists(tree.host("/ran-nvcc"))) << "ran an nvcc uid 65534 owns";
      EXPECT_TRUE(any_note_has(notes, "did not run the Python interpreter '" + python +
                                          "' as root: '" + tree.host("/venv") +
                                          "' is owned by uid 65534"))
          << report["snapshot"]["probe_issues"].dump(1);
      EXPECT_TRUE(any_note_has(notes, "did not run nvcc '" + tree.host("/cuda/bin/nvcc") +
                                          "' as root: '" + tree.host("/cuda") +
                                          "' is owned by uid 65534"))
          << report["snapshot"]["probe_issues"].dump(1);
      EXPECT_EQ(report["snapshot"]["toolkit"]["nvcc_version"], nullptr);
      // What the files say is still read (the system's python3 on PATH is another environment).
      bool torch = false;
      for (const auto& python_env : report["snapshot"]["python_environments"]) {
        if (python_env["interpreter"] == python) {
          torch = python_env["frameworks"].at(0)["name"] == "pytorch";
        }
      }
      EXPECT_TRUE(torch) << report["snapshot"]["python_environments"].dump(1);
    }
  }
}

// As real root: a directory anyone may write without the sticky bit lets anyone
// swap the program; with the sticky bit (like /tmp) only its owner may, so root's own program
// there runs.
TEST(RootSafety, AsRootAWorldWritableDirectoryIsRefusedUnlessSticky) {
  if (::geteuid() != 0) {
    GTEST_SKIP() << "needs root (the suite runs as root in CI)";
  }
  FixtureTree tree;
  tree.file("/tools/bin/nvcc",
            "#!/bin/sh\n: > '" + tree.host("/ran") +
                "'\necho 'Cuda compilation tools, release 12.8, V12.8.93'\n",
            0755);
  const std::map<std::string, std::string> env{{"PATH", tree.host("/tools/bin") + ":/usr/bin:/bin"},
                                               {"HOME", "/nonexistent"}};
  const std::vector<std::string> args{"--json", "--quick", "--only", "compat.toolkit_driver"};
  for (const auto& [mode, runs] : {std::pair{fs::perms::all, false},
                                   std::pair{fs::perms::all | fs::perms::sticky_bit, true}}) {
    fs::permissions(tree.host("/tools/bin"), mode);
    fs::remove(tree.host("/ran"));
    const cli_test::RunResult run =
        cli_test::run_gpucheck({.args = args, .env = env, .inherit_env = false});
    const nlohmann::json report = nlohmann::json::parse(run.out, nullptr, false);
    ASSERT_FALSE(report.is_discarded()) << run.err;
    EXPECT_EQ(fs::exists(tree.host("/ran")), runs) << "sticky: " << runs;
    const std::vector<std::string> notes = root_safety_notes(report);
    if (runs) {
      EXPECT_EQ(report["snapshot"]["toolkit"]["nvcc_version"], "12.8.93");
      EXPECT_TRUE(notes.empty());
    } else {
      EXPECT_TRUE(any_note_has(notes, "'" + tree.host("/tools/bin") +
                                          "' is writable by every user (mode 0777)"))
          << report["snapshot"]["probe_issues"].dump(1);
    }
  }
}

} // namespace
} // namespace gpucheck::testing
