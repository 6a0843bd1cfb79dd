#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <fstream>
#include <optional>
#include <thread>

#include "probes/collect.hpp"
#include "probes/run_capture.hpp"
#include "probes/toolkit_version.hpp"
#include "process/child_process.hpp"
#include "support/fixture_tree.hpp"
#include "support/text_and_processes.hpp"

namespace gpucheck::probes {
namespace {

using gpucheck::testing::FixtureTree;
using Vars = std::map<std::string, std::string>;
using namespace std::chrono_literals;

constexpr const char* k_version_json =
    "{\"cuda\": {\"name\": \"CUDA SDK\", \"version\": \"12.4.1\"},\n"
    " \"cuda_cudart\": {\"name\": \"CUDA Runtime\", \"version\": \"12.4.127\"},\n"
    " \"cuda_nvcc\": {\"name\": \"CUDA NVCC\", \"version\": \"12.4.131\"}}\n";

TEST(ToolkitVersion, Parsers) {
  EXPECT_EQ(parse_version_json(k_version_json, "cuda_nvcc"), "12.4.131");
  EXPECT_EQ(parse_version_json(k_version_json, "cuda"), "12.4.1");
  EXPECT_EQ(parse_version_json(k_version_json, "cuda_nvrtc"), std::nullopt);
  EXPECT_EQ(parse_version_json("{not json", "cuda"), std::nullopt);
  EXPECT_EQ(parse_version_json("{\"cuda\": {\"version\": 12}}", "cuda"), std::nullopt);
  EXPECT_EQ(parse_version_txt("CUDA Version 11.0.228\n"), "11.0.228");
  EXPECT_EQ(parse_version_txt("nothing here"), std::nullopt);
  EXPECT_EQ(parse_nvcc_version_output("nvcc: NVIDIA (R) Cuda compiler driver\n"
                                      "Cuda compilation tools, release 13.0, V13.0.88\n"
                                      "Build cuda_13.0.r13.0/compiler.36424714_0\n"),
            "13.0.88");
  EXPECT_EQ(parse_nvcc_version_output("Cuda compilation tools, release 11.8\n"), "11.8");
  EXPECT_EQ(parse_nvcc_version_output("command not found"), std::nullopt);
}

// These parsers used std::regex, whose recursion overflowed the stack on a
// 230 KB version.txt and a 60 KB nvcc output. A linear scan now; huge inputs answer at once.
TEST(ToolkitVersion, HugeAndHostileTextsParseWithoutRecursion) {
  EXPECT_EQ(parse_version_txt("CUDA Version\t12.4.1 extra"), "12.4.1");
  EXPECT_EQ(parse_version_txt("CUDA Version 12"), std::nullopt); // the regex wanted a dot too
  EXPECT_EQ(parse_version_txt("CUDA VersionX 1.2 CUDA Version 9.1"), "9.1");
  EXPECT_EQ(parse_version_txt("CUDA Version " + std::string(230 * 1024, '1')), std::nullopt);
  EXPECT_EQ(parse_version_txt("CUDA Version 12.4" + std::string(230 * 1024, '.')), "12.4");
  const std::string spaces_then_version =
      "CUDA Version" + std::string(230 * 1024, ' ') + "12.8.0\n";
  EXPECT_EQ(parse_version_txt(spaces_then_version), "12.8.0");
  std::string noisy;
  for (int i = 0; i < 6000; ++i) {
    noisy += "release 1.";
  }
  EXPECT_EQ(parse_nvcc_version_output(noisy), std::nullopt);
  std::string long_output(60 * 1024, 'x');
  long_output.append("release 12.9, V12.9.41\n");
  EXPECT_EQ(parse_nvcc_version_output(long_output), "12.9.41");
  EXPECT_EQ(parse_nvcc_version_output("release 12.6,V12.6.20"), "12.6.20");
  EXPECT_EQ(parse_nvcc_version_output("release 12.6.1, X"), "12.6");
}

TEST(ToolkitVersion, DistInfoNames) {
  EXPECT_EQ(dist_info_version("nvidia_cuda_nvcc-13.0.88.dist-info", "nvidia_cuda_nvcc"), "13.0.88");
  EXPECT_EQ(dist_info_version("nvidia_cudnn_cu13-9.19.0.56.dist-info", "nvidia_cudnn"),
            "9.19.0.56");
  EXPECT_EQ(dist_info_version("nvidia_cuda_nvcc_cu12-12.4.131.dist-info", "nvidia_cuda_nvcc"),
            "12.4.131");
  EXPECT_EQ(dist_info_version("nvidia_cuda_nvcc-13.0.88.dist-info", "nvidia_cuda_nvrtc"),
            std::nullopt);
  EXPECT_EQ(dist_info_version("nvidia_cuda_nvccx-13.0.88.dist-info", "nvidia_cuda_nvcc"),
            std::nullopt);
  EXPECT_EQ(dist_info_version("nvidia_cuda_nvcc-13.0.88", "nvidia_cuda_nvcc"), std::nullopt);
}

TEST(ToolkitVersion, AmbiguousDistInfoIsSettledByRecord) {
  FixtureTree tree;
  tree.file("/sp/nvidia_cudnn_cu12-9.1.0.70.dist-info/RECORD",
            "nvidia/cudnn/lib/libcudnn.so.9,sha256=x,1\n")
      .file("/sp/nvidia_cudnn_cu13-9.19.0.56.dist-info/RECORD",
            "nvidia/cu13/lib/libcudnn.so.9,sha256=y,1\n");
  const Sysroot root(tree.root());
  EXPECT_EQ(find_dist_info_version(root, "/sp", "nvidia_cudnn", "libcudnn.so.9"), "9.1.0.70");
  EXPECT_EQ(find_dist_info_version(root, "/sp", "nvidia_cudnn"), std::nullopt);
  EXPECT_EQ(find_dist_info_version(root, "/sp", "nvidia_cudnn", "libcudnn_ops.so.9"), std::nullopt);
  EXPECT_EQ(find_dist_info_version(root, "/nowhere", "nvidia_cudnn"), std::nullopt);
}

TEST(ToolkitProbe, NvccOnPathAndEveryInstallDedupedByRealPath) {
  FixtureTree tree;
  tree.file("/usr/local/cuda-12.4/version.json", k_version_json)
      .file("/usr/local/cuda-12.4/bin/nvcc", "#!/bin/sh\n", 0755)
      .file("/usr/local/cuda-11.0/version.txt", "CUDA Version 11.0.228\n")
      .dir("/usr/local/cuda-11.0/lib64")
      .file("/usr/local/cuda-13.0/dist-info/nvidia_cuda_nvcc-13.0.88.dist-info/RECORD")
      .file("/usr/local/cuda-13.0/bin/nvcc", "#!/bin/sh\n", 0755)
      .dir("/usr/local/cuda-docs") // cuda-*, but no toolkit inside
      .file("/usr/local/cuda-empty/README")
      .symlink("/usr/local/cuda", "/usr/local/cuda-13.0");
  const Environment env(Vars{{"PATH", "relative/bin:/usr/bin:/usr/local/cuda-12.4/bin"},
                             {"CUDA_HOME", "/usr/local/cuda"}});
  const ToolkitInfo info = probe_toolkit(Sysroot(tree.root()), env);
  EXPECT_EQ(info.nvcc_path, "/usr/local/cuda-12.4/bin/nvcc");
  EXPECT_EQ(info.nvcc_version, "12.4.131");
  EXPECT_EQ(info.cuda_home, "/usr/local/cuda");
  EXPECT_FALSE(info.cuda_path);
  EXPECT_EQ(info.installs, (std::vector<ToolkitInstall>{{"/usr/local/cuda-13.0", "13.0.88"},
                                                        {"/usr/local/cuda-11.0", "11.0.228"},
                                                        {"/usr/local/cuda-12.4", "12.4.131"}}));
}

TEST(ToolkitProbe, NvccFromCudaHomeWhenNotOnPath) {
  FixtureTree tree;
  tree.file("/opt/cuda/bin/nvcc", "", 0755)
      .file("/opt/cuda/version.json", "{\"cuda\": {\"version\": \"12.8.0\"}}")
      .file("/usr/bin/nvcc", "", 0644); // not executable: skipped
  const Environment env(Vars{{"PATH", "/usr/bin"}, {"CUDA_HOME", "/opt/cuda/"}});
  const ToolkitInfo info = probe_toolkit(Sysroot(tree.root()), env);
  EXPECT_EQ(info.nvcc_path, "/opt/cuda/bin/nvcc");
  EXPECT_EQ(info.nvcc_version, "12.8.0");
  EXPECT_EQ(info.installs, (std::vector<ToolkitInstall>{{"/opt/cuda", "12.8.0"}}));
}

TEST(ToolkitProbe, NothingInstalled) {
  FixtureTree tree;
  const ToolkitInfo info = probe_toolkit(Sysroot(tree.root()), Environment(Vars{{"PATH", "/bin"}}));
  EXPECT_EQ(info, ToolkitInfo{});
}

TEST(ToolkitProbe, RealMachineFindsCuda13) {
  // The build host has a CUDA 13.0 toolkit assembled from wheels under /usr/local/cuda.
  const Sysroot root("/");
  if (!root.exists("/usr/local/cuda/bin/nvcc")) {
    GTEST_SKIP() << "no toolkit under /usr/local/cuda";
  }
  const ToolkitInfo info = probe_toolkit(root, Environment(Vars{{"CUDA_HOME", "/usr/local/cuda"}}));
  ASSERT_TRUE(info.nvcc_path);
  ASSERT_TRUE(info.nvcc_version);
  EXPECT_TRUE(info.nvcc_version->starts_with("13.")) << *info.nvcc_version;
  ASSERT_FALSE(info.installs.empty());
  EXPECT_TRUE(info.installs[0].version.starts_with("13.")) << info.installs[0].version;
}

using gpucheck::testing::process_ended;

// On timeout the helper's whole process group is killed, not just its pid.
TEST(RunCapture, ATimeoutKillsTheHelpersChildrenToo) {
  FixtureTree tree;
  const std::string pid_file = tree.host("/grandchild.pid");
  EXPECT_EQ(
      run_capture({"/bin/sh", "-c", "sleep 30 & echo $! > '" + pid_file + "'; sleep 30"}, 300ms),
      std::nullopt);
  std::ifstream in(pid_file);
  std::string pid;
  std::getline(in, pid);
  ASSERT_FALSE(pid.empty());
  bool ended = false;
  for (int i = 0; i < 100 && !ended; ++i) {
    ended = process_ended(pid);
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_TRUE(ended) << "the helper's child " << pid << " outlived the timeout";
}

// After SIGTERM/SIGINT (process::interrupt_children) a running helper and its
// children end at once, not at the helper's deadline, and no new helper starts.
TEST(RunCapture, AnInterruptEndsTheHelperAndItsChildrenAtOnce) {
  process::reset_children_interrupt();
  FixtureTree tree;
  const std::string pid_file = tree.host("/grandchild.pid");
  std::optional<std::string> output = "not run";
  std::thread helper([&] {
    output = run_capture({"/bin/sh", "-c",
                          "sleep 60 & echo $! > '" + pid_file + ".tmp'; mv '" + pid_file +
                              ".tmp' '" + pid_file + "'; sleep 60"},
                         60s);
  });
  std::string pid;
  for (int i = 0; i < 3000 && pid.empty(); ++i) {
    std::ifstream in(pid_file);
    std::getline(in, pid);
    std::this_thread::sleep_for(10ms);
  }
  const auto interrupted_at = std::chrono::steady_clock::now();
  process::interrupt_children(SIGINT);
  helper.join();
  EXPECT_LT(std::chrono::steady_clock::now() - interrupted_at, 10s);
  EXPECT_EQ(output, std::nullopt);
  ASSERT_FALSE(pid.empty());
  bool ended = false;
  for (int i = 0; i < 500 && !ended; ++i) {
    ended = process_ended(pid);
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_TRUE(ended) << "the helper's child " << pid << " outlived the interrupt";
  EXPECT_EQ(run_capture({"/bin/sh", "-c", "echo ran"}, 3000ms), std::nullopt) << "started after";
  process::reset_children_interrupt();
  // The healthy twin.
  EXPECT_EQ(run_capture({"/bin/sh", "-c", "echo ran"}, 3000ms), "ran\n");
}

TEST(RunCapture, CapturesStdoutAndHonoursTheDeadline) {
  EXPECT_EQ(run_capture({"/bin/sh", "-c", "echo release 12.1, V12.1.105"}, 3000ms),
            "release 12.1, V12.1.105\n");
  EXPECT_EQ(run_capture({"/bin/sh", "-c", "echo partial; exit 3"}, 3000ms), std::nullopt);
  EXPECT_EQ(run_capture({"/nonexistent/nvcc", "--version"}, 3000ms), std::nullopt);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(run_capture({"/bin/sh", "-c", "exec sleep 10"}, 200ms), std::nullopt);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 3s);
  // Closing stdout and lingering does not block past the deadline either.
  const auto start2 = std::chrono::steady_clock::now();
  EXPECT_EQ(run_capture({"/bin/sh", "-c", "exec >&-; sleep 10"}, 200ms), std::nullopt);
  EXPECT_LT(std::chrono::steady_clock::now() - start2, 3s);
}

// Outputs longer than 64 KiB: `ldconfig -p` of a full install (its libcuda and libcudnn lines
// come last) and the journal's NVIDIA lines keep what their callers ask for; the rest is read
// and dropped, so a flood neither blocks the program nor grows without end.
TEST(RunCapture, KeepsTheCallersShareOfALongOutput) {
  const std::string script = "yes 0123456789abcde | head -c 1048576";
  const std::optional<std::string> short_share = run_capture({"/bin/sh", "-c", script}, 5000ms);
  ASSERT_TRUE(short_share);
  EXPECT_EQ(short_share->size(), k_run_capture_max_bytes);
  const std::optional<std::string> whole =
      run_capture({"/bin/sh", "-c", script}, 5000ms, size_t{4} << 20);
  ASSERT_TRUE(whole);
  EXPECT_EQ(whole->size(), size_t{1} << 20);
  const std::optional<std::string> flood =
      run_capture({"/bin/sh", "-c", "head -c 67108864 /dev/zero"}, 10000ms, 1000);
  ASSERT_TRUE(flood);
  EXPECT_EQ(flood->size(), 1000u);
}

} // namespace
} // namespace gpucheck::probes
