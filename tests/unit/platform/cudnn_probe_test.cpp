// The cuDNN child probe against the fake cuDNN 9 set (tests/fakes/README.md), and against the
// real cuDNN when this machine has one (versions and version checks work without a GPU).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>

#include "fakes/fake_gpu.hpp"
#include "gpucheck/model/json_io.hpp"

namespace gpucheck::platform {
namespace {

using process::ChildOutcome;
using process::ChildRequest;
using process::run_child;

namespace fs = std::filesystem;
using gpucheck::testing::FakeMachine;
using gpucheck::testing::run_ok;

struct CudnnResult {
  LibraryLoad load;
  CudnnDetails cudnn;
};

CudnnResult probe_cudnn(const ChildRequest& request) {
  const nlohmann::json payload = run_ok(request);
  CudnnResult out;
  if (!payload.is_null()) {
    out.load = payload.at("load").get<LibraryLoad>();
    out.cudnn = payload.at("cudnn").get<CudnnDetails>();
  }
  return out;
}

const CudnnSublibrary* sublibrary(const CudnnDetails& details, const std::string& name) {
  for (const CudnnSublibrary& sub : details.sublibraries) {
    if (sub.name == name) {
      return &sub;
    }
  }
  return nullptr;
}

/// The fake cuDNN files of `from` (a directory of the fakes) copied into `dir`, less those whose
/// name starts with `without`.
void copy_fake_cudnn(const fs::path& dir, const std::string& without,
                     const std::string& from = gpucheck::testing::fake_lib_dir()) {
  for (const fs::directory_entry& entry : fs::directory_iterator(from)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("libcudnn", 0) != 0 || name.rfind(without, 0) == 0) {
      continue;
    }
    fs::copy(entry.path(), dir / name, fs::copy_options::copy_symlinks);
  }
}

TEST(CudnnProbe, HealthyFakeSetByBareName) {
  FakeMachine machine("cudnn.version=91902\ncudnn.cudart_version=12090\n"
                      "cudnn.max_device_version=1200\n");
  const CudnnResult result = probe_cudnn(machine.request("cudnn"));
  EXPECT_TRUE(result.load.loaded);
  EXPECT_EQ(result.load.name, "libcudnn.so.9");
  EXPECT_EQ(result.load.version, "9.19.2");
  EXPECT_EQ(result.load.version_raw, 91902);
  EXPECT_EQ(result.cudnn.cudart_version, 12090);
  EXPECT_EQ(result.cudnn.max_device_version, 1200);
  ASSERT_EQ(result.cudnn.sublibraries.size(), 7U);
  for (const CudnnSublibrary& sub : result.cudnn.sublibraries) {
    EXPECT_TRUE(sub.loaded) << sub.name << ": " << sub.error;
    EXPECT_EQ(sub.path, gpucheck::testing::fake_lib_path(sub.name));
    const bool has_check = sub.name == "libcudnn_graph.so.9" || sub.name == "libcudnn_ops.so.9" ||
                           sub.name == "libcudnn_cnn.so.9" || sub.name == "libcudnn_adv.so.9";
    EXPECT_EQ(sub.version_check, has_check ? std::optional<int>(0) : std::nullopt) << sub.name;
  }
  EXPECT_EQ(result.cudnn.sublibraries.front().name, "libcudnn_graph.so.9");
}

TEST(CudnnProbe, VersionChecksReportAMixedSet) {
  FakeMachine machine("cudnn.cnn_version=91800\ncudnn.adv_check_rc=1008\n");
  const CudnnResult result = probe_cudnn(machine.request("cudnn"));
  ASSERT_NE(sublibrary(result.cudnn, "libcudnn_cnn.so.9"), nullptr);
  EXPECT_EQ(sublibrary(result.cudnn, "libcudnn_cnn.so.9")->version_check, 1002);
  EXPECT_EQ(sublibrary(result.cudnn, "libcudnn_adv.so.9")->version_check, 1008);
  EXPECT_EQ(sublibrary(result.cudnn, "libcudnn_ops.so.9")->version_check, 0);
  EXPECT_EQ(sublibrary(result.cudnn, "libcudnn_graph.so.9")->version_check, 0);
}

TEST(CudnnProbe, ShallowLoadsOnlyTheCoreAndCallsNoVersionCheck) {
  // --quick: cuDNN 9's cudnnGraphVersionCheck initialises CUDA (0.2-0.3 s), so --shallow calls
  // none; the large sub-libraries are checked for presence only. The deep probe of the same
  // machine reports the failing check (its twin below).
  FakeMachine machine("cudnn.version=91902\ncudnn.graph_check_rc=1002\n");
  const CudnnResult shallow = probe_cudnn(machine.request("cudnn", {"--shallow"}));
  EXPECT_EQ(shallow.load.version_raw, 91902);
  ASSERT_EQ(shallow.cudnn.sublibraries.size(), 1U); // present ones are listed only when absent
  EXPECT_EQ(shallow.cudnn.sublibraries.front().name, "libcudnn_graph.so.9");
  EXPECT_TRUE(shallow.cudnn.sublibraries.front().loaded);
  EXPECT_FALSE(shallow.cudnn.sublibraries.front().version_check);

  const CudnnResult deep = probe_cudnn(machine.request("cudnn"));
  ASSERT_NE(sublibrary(deep.cudnn, "libcudnn_graph.so.9"), nullptr);
  EXPECT_EQ(sublibrary(deep.cudnn, "libcudnn_graph.so.9")->version_check, 1002);
}

TEST(CudnnProbe, MissingGraphLibraryIsReportedWithoutCallingTheShim) {
  FakeMachine machine("");
  copy_fake_cudnn(machine.dir(), "libcudnn_graph");
  const std::string shim = (machine.dir() / "libcudnn.so.9").string();
  const ChildOutcome outcome = run_child(machine.request("cudnn", {shim}));
  ASSERT_TRUE(outcome.ok()) << (outcome.failure ? outcome.failure->detail : "") << "\n"
                            << outcome.stderr_tail;
  EXPECT_EQ(outcome.stderr_tail.find("Invalid handle"), std::string::npos);
  const CudnnResult result{outcome.payload->at("load").get<LibraryLoad>(),
                           outcome.payload->at("cudnn").get<CudnnDetails>()};
  EXPECT_TRUE(result.load.loaded);
  EXPECT_EQ(result.load.path, shim);
  EXPECT_EQ(result.load.version, "");
  EXPECT_FALSE(result.load.version_raw);
  EXPECT_FALSE(result.cudnn.cudart_version);
  const CudnnSublibrary* graph = sublibrary(result.cudnn, "libcudnn_graph.so.9");
  ASSERT_NE(graph, nullptr);
  EXPECT_FALSE(graph->loaded);
  EXPECT_EQ(graph->path, (machine.dir() / "libcudnn_graph.so.9").string());
  EXPECT_NE(graph->error.find("libcudnn_graph.so.9"), std::string::npos) << graph->error;
  for (const CudnnSublibrary& sub : result.cudnn.sublibraries) {
    EXPECT_FALSE(sub.version_check) << sub.name;
  }
}

TEST(CudnnProbe, MissingCnnLibraryLeavesTheRestWorking) {
  FakeMachine machine("");
  copy_fake_cudnn(machine.dir(), "libcudnn_cnn");
  const CudnnResult result =
      probe_cudnn(machine.request("cudnn", {(machine.dir() / "libcudnn.so.9").string()}));
  EXPECT_EQ(result.load.version, "9.19.0");
  const CudnnSublibrary* cnn = sublibrary(result.cudnn, "libcudnn_cnn.so.9");
  ASSERT_NE(cnn, nullptr);
  EXPECT_FALSE(cnn->loaded);
  EXPECT_FALSE(cnn->version_check);
  EXPECT_EQ(sublibrary(result.cudnn, "libcudnn_ops.so.9")->version_check, 0);
  EXPECT_TRUE(sublibrary(result.cudnn, "libcudnn_adv.so.9")->loaded);
}

TEST(CudnnProbe, NoCudnnAnywhere) {
  gpucheck::testing::TempDir empty;
  FakeMachine machine("");
  const std::string missing = (empty.path() / "libcudnn.so.9").string();
  const CudnnResult result = probe_cudnn(machine.request("cudnn", {missing}));
  EXPECT_FALSE(result.load.loaded);
  EXPECT_EQ(result.load.name, missing);
  EXPECT_FALSE(result.load.error.empty());
  EXPECT_TRUE(result.cudnn.sublibraries.empty());
}

TEST(CudnnProbe, Cudnn8SetUsesItsOwnLayoutAndEncoding) {
  FakeMachine machine("cudnn.cnn_infer_version=8906\n");
  const std::string shim = gpucheck::testing::fake_lib_path("cudnn8/libcudnn.so.8");
  const CudnnResult result = probe_cudnn(machine.request("cudnn", {shim}));
  EXPECT_TRUE(result.load.loaded);
  EXPECT_EQ(result.load.version, "8.9.7");
  EXPECT_EQ(result.load.version_raw, 8907);
  EXPECT_TRUE(result.load.missing_symbols.empty()); // cudnnGetMaxDeviceVersion is optional
  EXPECT_EQ(result.cudnn.cudart_version, 12020);
  EXPECT_FALSE(result.cudnn.max_device_version);
  std::vector<std::string> names;
  for (const CudnnSublibrary& sub : result.cudnn.sublibraries) {
    names.push_back(sub.name);
    EXPECT_TRUE(sub.loaded) << sub.name << ": " << sub.error;
    // cuDNN 8 reports a mismatched sub-library as 14 (VERSION_MISMATCH).
    EXPECT_EQ(sub.version_check, sub.name == "libcudnn_cnn_infer.so.8" ? 14 : 0) << sub.name;
  }
  EXPECT_EQ(names,
            (std::vector<std::string>{"libcudnn_ops_infer.so.8", "libcudnn_ops_train.so.8",
                                      "libcudnn_cnn_infer.so.8", "libcudnn_cnn_train.so.8",
                                      "libcudnn_adv_infer.so.8", "libcudnn_adv_train.so.8"}));
}

TEST(CudnnProbe, Cudnn8MissingSublibraryDoesNotAbort) {
  // cuDNN 8 aborts as soon as a call reaches a sub-library it cannot load: the probe must not
  // call that sub-library's version check.
  FakeMachine machine("");
  copy_fake_cudnn(machine.dir(), "libcudnn_cnn_train", gpucheck::testing::fake_lib_path("cudnn8"));
  const ChildOutcome outcome =
      run_child(machine.request("cudnn", {(machine.dir() / "libcudnn.so.8").string()}));
  ASSERT_TRUE(outcome.ok()) << (outcome.failure ? outcome.failure->detail : "") << "\n"
                            << outcome.stderr_tail;
  const auto details = outcome.payload->at("cudnn").get<CudnnDetails>();
  EXPECT_EQ(outcome.payload->at("load").at("version"), "8.9.7");
  const CudnnSublibrary* cnn_train = sublibrary(details, "libcudnn_cnn_train.so.8");
  ASSERT_NE(cnn_train, nullptr);
  EXPECT_FALSE(cnn_train->loaded);
  EXPECT_FALSE(cnn_train->version_check);
  EXPECT_EQ(sublibrary(details, "libcudnn_cnn_infer.so.8")->version_check, 0);
}

TEST(CudnnProbe, Cudnn8MissingOpsInferStopsBeforeTheShim) {
  FakeMachine machine("");
  copy_fake_cudnn(machine.dir(), "libcudnn_ops_infer", gpucheck::testing::fake_lib_path("cudnn8"));
  const ChildOutcome outcome =
      run_child(machine.request("cudnn", {(machine.dir() / "libcudnn.so.8").string()}));
  ASSERT_TRUE(outcome.ok()) << outcome.stderr_tail;
  EXPECT_EQ(outcome.stderr_tail.find("Could not load library"), std::string::npos);
  const auto load = outcome.payload->at("load").get<LibraryLoad>();
  const auto details = outcome.payload->at("cudnn").get<CudnnDetails>();
  EXPECT_TRUE(load.loaded);
  EXPECT_EQ(load.version, "");
  EXPECT_FALSE(details.cudart_version);
  ASSERT_NE(sublibrary(details, "libcudnn_ops_infer.so.8"), nullptr);
  EXPECT_FALSE(sublibrary(details, "libcudnn_ops_infer.so.8")->loaded);
}

TEST(CudnnProbe, RealCudnnByPath) {
  const std::string shim = "/usr/local/cuda/lib64/libcudnn.so.9";
  if (!fs::exists(shim)) {
    GTEST_SKIP() << shim << " is not installed here";
  }
  ChildRequest request;
  request.mode = "cudnn";
  request.args = {shim};
  request.timeout = std::chrono::seconds(120); // the sub-libraries are hundreds of MB
  const CudnnResult result = probe_cudnn(request);
  EXPECT_TRUE(result.load.loaded);
  EXPECT_EQ(result.load.version.rfind("9.", 0), 0U) << result.load.version;
  ASSERT_TRUE(result.load.version_raw);
  EXPECT_GE(*result.load.version_raw, 90000);
  EXPECT_LT(*result.load.version_raw, 100000);
  ASSERT_TRUE(result.cudnn.cudart_version);
  EXPECT_GE(*result.cudnn.cudart_version, 13000);
  EXPECT_LT(*result.cudnn.cudart_version, 14000);
  for (const CudnnSublibrary& sub : result.cudnn.sublibraries) {
    EXPECT_TRUE(sub.loaded) << sub.name << ": " << sub.error;
    if (sub.version_check) {
      EXPECT_EQ(*sub.version_check, 0) << sub.name;
    }
  }
  EXPECT_EQ(sublibrary(result.cudnn, "libcudnn_graph.so.9")->version_check, 0);
}

} // namespace
} // namespace gpucheck::platform
