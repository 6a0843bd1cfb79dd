// lib.cudart, lib.cudnn, lib.cudnn_copies.
#include <gtest/gtest.h>

#include "checks/checks.hpp"
#include "unit/check_case_runner.hpp"

namespace gpucheck::testing {
namespace {

void drop_family(SystemSnapshot& s, std::string_view name) {
  std::erase_if(s.libraries, [name](const LibraryFamily& f) { return f.family == name; });
}

TEST(LibCudartCheck, Table) {
  const CheckCase cases[] = {
      {"loaded", nullptr, Status::pass, {}},
      {"not probed", [](SystemSnapshot& s) { drop_family(s, "cudart"); }, Status::skip, {}},
      {"no load attempted",
       [](SystemSnapshot& s) { family(s, "cudart").load = LibraryLoad{}; },
       Status::skip,
       {}},
      {"absent: info only",
       [](SystemSnapshot& s) { family(s, "cudart").load = not_loaded("libcudart.so.13"); },
       Status::pass,
       {"lib.cudart_not_found"}},
      {"probe hung",
       [](SystemSnapshot& s) { family(s, "cudart").failure = timed_out(15); },
       Status::error,
       {"probe.timed_out"}},
  };
  run_cases(checks::lib_cudart_check(), healthy_h200(), cases);
}

TEST(LibCudnnCheck, Table) {
  const CheckCase cases[] = {
      {"loaded, all sub-libraries fine", nullptr, Status::pass, {}},
      {"not probed", [](SystemSnapshot& s) { drop_family(s, "cudnn"); }, Status::skip, {}},
      {"no load attempted",
       [](SystemSnapshot& s) { family(s, "cudnn").load = LibraryLoad{}; },
       Status::skip,
       {}},
      {"missing",
       [](SystemSnapshot& s) {
         family(s, "cudnn").load = not_loaded("libcudnn.so.9");
         family(s, "cudnn").cudnn.reset();
       },
       Status::warn,
       {"lib.cudnn_missing"}},
      {"sub-library missing",
       [](SystemSnapshot& s) {
         CudnnSublibrary& sub = family(s, "cudnn").cudnn->sublibraries[1];
         sub.loaded = false;
         sub.path.clear();
         sub.error = "libcudnn_engines_precompiled.so.9: cannot open shared object file";
       },
       Status::fail,
       {"lib.cudnn_sublibrary_failed"}},
      {"sub-library version check fails",
       [](SystemSnapshot& s) { family(s, "cudnn").cudnn->sublibraries[2].version_check = 1002; },
       Status::fail,
       {"lib.cudnn_sublibrary_failed"}},
      {"shim aborted the probe",
       [](SystemSnapshot& s) {
         family(s, "cudnn").failure = crashed(
             "SIGABRT", 6,
             "Could not load library libcudnn_graph.so.9. Error: cannot open shared object file");
       },
       Status::fail,
       {"lib.cudnn_probe_crashed"}},
      {"probe hung",
       [](SystemSnapshot& s) { family(s, "cudnn").failure = timed_out(15); },
       Status::error,
       {"probe.timed_out"}},
  };
  run_cases(checks::lib_cudnn_check(), healthy_h200(), cases);
}

TEST(LibCudnnCheck, MissingRemedyMatchesTheCudaMajor) {
  SystemSnapshot s = healthy_h200();
  s.host.os = "Ubuntu 24.04.1 LTS"; // the apt package's name (package_remedies_test: the others)
  family(s, "cudnn").load = not_loaded("libcudnn.so.9");
  CheckResult result = run_check(checks::lib_cudnn_check(), s).front();
  ASSERT_EQ(result.findings.size(), 1U);
  EXPECT_NE(result.findings[0].remedy.find("libcudnn9-cuda-13"), std::string::npos);
  EXPECT_NE(result.findings[0].remedy.find("nvidia-cudnn-cu13"), std::string::npos);

  family(s, "cudart").load = loaded("libcudart.so.12", "/opt/libcudart.so.12.8.90", "12.8.90");
  result = run_check(checks::lib_cudnn_check(), s).front();
  EXPECT_NE(result.findings[0].remedy.find("libcudnn9-cuda-12"), std::string::npos);
}

TEST(LibCudnnCheck, SublibraryFindingNamesFileAndDirectory) {
  SystemSnapshot s = healthy_h200();
  CudnnSublibrary& sub = family(s, "cudnn").cudnn->sublibraries[0];
  sub.loaded = false;
  sub.path.clear();
  sub.error = "not found";
  const CheckResult result = run_check(checks::lib_cudnn_check(), s).front();
  ASSERT_EQ(result.findings.size(), 1U);
  EXPECT_EQ(result.findings[0].message,
            "cuDNN sub-library libcudnn_graph.so.9 in /usr/lib/x86_64-linux-gnu cannot be loaded: "
            "not found");
}

// Return codes by name and number (issue 35: "status 1002" alone before), for cuDNN 9's and
// cuDNN 8's numbering; an unknown code still shows its number.
TEST(LibCudnnCheck, AVersionCheckStatusIsNamed) {
  for (const auto& [status, text] :
       {std::pair{1002, "CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH (1002)"},
        std::pair{14, "CUDNN_STATUS_VERSION_MISMATCH (14)"},
        std::pair{3007, "CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH (3007)"},
        std::pair{77, "status 77"}}) {
    SystemSnapshot s = healthy_h200();
    family(s, "cudnn").cudnn->sublibraries[2].version_check = status;
    const CheckResult result = run_check(checks::lib_cudnn_check(), s).front();
    ASSERT_EQ(result.findings.size(), 1U);
    EXPECT_NE(result.findings[0].message.find(std::string("fails its version check: ") + text),
              std::string::npos)
        << result.findings[0].message;
  }
}

// --quick loads only the core sub-library and makes no version check: its summary says so
// instead of "1 sub-library checked"; a standard snapshot replayed (quick, with its checks)
// still counts what it checked.
TEST(LibCudnnCheck, QuickSaysWhichSubLibrariesItLeftOut) {
  SystemSnapshot s = healthy_h200();
  const size_t all = family(s, "cudnn").cudnn->sublibraries.size();
  CheckOptions quick;
  quick.quick = true;
  EXPECT_NE(run_check(checks::lib_cudnn_check(), s, quick)
                .front()
                .summary.find(fmt::format("{} sub-libraries checked", all)),
            std::string::npos);
  std::vector<CudnnSublibrary>& subs = family(s, "cudnn").cudnn->sublibraries;
  subs.resize(1);
  subs[0].version_check.reset();
  const std::string summary = run_check(checks::lib_cudnn_check(), s, quick).front().summary;
  EXPECT_NE(summary.find("1 sub-library loaded; --quick looked for the others on disk only"),
            std::string::npos)
      << summary;
}

TEST(LibCudnnCheck, CrashQuotesStderr) {
  SystemSnapshot s = healthy_h200();
  family(s, "cudnn").failure = crashed("SIGABRT", 6, "Could not load library libcudnn_graph.so.9");
  const CheckResult result = run_check(checks::lib_cudnn_check(), s).front();
  ASSERT_EQ(result.findings.size(), 1U);
  EXPECT_NE(result.findings[0].message.find("SIGABRT"), std::string::npos);
  EXPECT_NE(result.findings[0].message.find("Could not load library libcudnn_graph.so.9"),
            std::string::npos);
}

TEST(LibCudnnCopiesCheck, Table) {
  auto add_copy = [](std::string path, std::string version, std::optional<int64_t> cudart) {
    return [=](SystemSnapshot& s) {
      family(s, "cudnn").copies.push_back(copy(path, version, false, cudart));
    };
  };
  const CheckCase cases[] = {
      {"one copy", nullptr, Status::pass, {}},
      {"not probed", [](SystemSnapshot& s) { drop_family(s, "cudnn"); }, Status::skip, {}},
      {"no copy on disk",
       [](SystemSnapshot& s) { family(s, "cudnn").copies.clear(); },
       Status::skip,
       {}},
      {"older second copy is fine",
       add_copy("/opt/venv/lib/python3.12/site-packages/nvidia/cudnn/lib/libcudnn.so.9.10.2",
                "9.10.2", 13000),
       Status::pass,
       {}},
      {"the same file through a symlink counts once",
       [](SystemSnapshot& s) {
         LibraryCopy link = family(s, "cudnn").copies.front();
         link.path = "/usr/lib/x86_64-linux-gnu/libcudnn.so.9";
         link.selected = false;
         family(s, "cudnn").copies.push_back(link);
       },
       Status::pass,
       {}},
      {"newer copy not loaded",
       add_copy("/opt/cudnn-9.20/lib/libcudnn.so.9.20.0", "9.20.0", 13010),
       Status::warn,
       {"lib.cudnn_older_copy_loaded"}},
      {"newer copy only inside a Python environment: a note (PyTorch's own wheel)",
       [](SystemSnapshot& s) {
         LibraryCopy wheel = copy("/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib/"
                                  "libcudnn.so.9",
                                  "9.20.0", false, 13010);
         wheel.origin = "pip";
         family(s, "cudnn").copies.push_back(wheel);
       },
       Status::pass,
       {"lib.cudnn_older_copy_loaded"}},
      {"copy for another CUDA major",
       add_copy("/opt/venv/site-packages/nvidia/cudnn/lib/libcudnn.so.9.10.2", "9.10.2", 12090),
       Status::warn,
       {"lib.cudnn_cuda_major_mix"}},
  };
  run_cases(checks::lib_cudnn_copies_check(), healthy_h200(), cases);
}

TEST(LibCudnnCopiesCheck, VersionsCompareNumerically) {
  SystemSnapshot s = healthy_h200();
  LibraryFamily& cudnn = family(s, "cudnn");
  cudnn.load = loaded("libcudnn.so.9", "/a/libcudnn.so.9.9.0", "9.9.0");
  cudnn.copies = {copy("/a/libcudnn.so.9.9.0", "9.9.0", true),
                  copy("/b/libcudnn.so.9.10.0", "9.10.0", false)};
  const CheckResult result = run_check(checks::lib_cudnn_copies_check(), s).front();
  ASSERT_EQ(codes_of(result), std::vector<std::string>{"lib.cudnn_older_copy_loaded"});
  EXPECT_EQ(result.findings[0].message,
            "the loader picks cuDNN 9.9.0 (/a/libcudnn.so.9.9.0) but a newer copy 9.10.0 is "
            "installed at /b/libcudnn.so.9.10.0");
  EXPECT_NE(result.findings[0].remedy.find("put /b first"), std::string::npos);
}

} // namespace
} // namespace gpucheck::testing
