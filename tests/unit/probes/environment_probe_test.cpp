#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>

#include "gpucheck/model/json_io.hpp"
#include "probes/collect.hpp"
#include "probes/risky_env.hpp"
#include "support/fixture_tree.hpp"

namespace gpucheck::probes {
namespace {

using gpucheck::testing::FixtureTree;
using Vars = std::map<std::string, std::string>;

TEST(EnvironmentProbe, CapturesOnlyCudaRelevantVariables) {
  FixtureTree tree;
  const Environment env(Vars{{"CUDA_VISIBLE_DEVICES", "1,0"},
                             {"LD_LIBRARY_PATH", "/opt/a:/opt/b"},
                             {"CUDA_LAUNCH_BLOCKING", "1"},
                             {"CUDA_MPS_LOG_DIRECTORY", "/tmp/mps"},
                             {"NVIDIA_DRIVER_CAPABILITIES", ""},
                             {"HOME", "/root"},
                             {"PATH", "/usr/bin"},
                             {"CUDA_VISIBLE_DEVICES_X", "0"}});
  const EnvironmentInfo info = probe_environment(Sysroot(tree.root()), env);
  const std::map<std::string, std::string> expected = {
      {"CUDA_LAUNCH_BLOCKING", "1"},      {"CUDA_MPS_LOG_DIRECTORY", "/tmp/mps"},
      {"CUDA_VISIBLE_DEVICES", "1,0"},    {"LD_LIBRARY_PATH", "/opt/a:/opt/b"},
      {"NVIDIA_DRIVER_CAPABILITIES", ""}, // set but empty is a fact too
  };
  EXPECT_EQ(info.variables, expected);
  EXPECT_EQ(info.container.kind, "none");
  EXPECT_TRUE(info.container.evidence.empty());
  EXPECT_FALSE(info.wsl);
}

TEST(EnvironmentProbe, RiskyListHasDcgmNamesWithReasons) {
  for (const char* name : {"CUDA_INJECTION64_PATH", "CUDA_ENABLE_COREDUMP_ON_EXCEPTION",
                           "CUDA_DEVICE_WAITS_ON_EXCEPTION", "NSIGHT_CUDA_DEBUGGER",
                           "CUDA_LAUNCH_BLOCKING", "NVIDIA_TF32_OVERRIDE"}) {
    const RiskyEnvVar* var = find_risky_env_var(name);
    ASSERT_NE(var, nullptr) << name;
    EXPECT_FALSE(var->reason.empty()) << name;
    EXPECT_TRUE(is_captured_env_var(name)) << name;
  }
  EXPECT_EQ(find_risky_env_var("CUDA_VISIBLE_DEVICES"), nullptr);
  EXPECT_EQ(find_risky_env_var("CUDA_LAUNCH_BLOCKIN"), nullptr);
}

TEST(EnvironmentProbe, DockerFromDockerenvAndCgroup) {
  FixtureTree tree;
  tree.file("/.dockerenv").file("/proc/1/cgroup", "0::/system.slice/docker-4f2a.scope\n");
  const EnvironmentInfo info = probe_environment(Sysroot(tree.root()), Environment());
  EXPECT_EQ(info.container.kind, "docker");
  EXPECT_EQ(info.container.evidence,
            (std::vector<std::string>{"/.dockerenv exists", "/proc/1/cgroup mentions docker-"}));
}

TEST(EnvironmentProbe, KubernetesWinsOverItsRuntime) {
  FixtureTree tree;
  tree.file("/proc/1/cgroup", "12:devices:/kubepods/burstable/pod1234/cri-containerd-abcd\n0::/\n");
  const EnvironmentInfo info = probe_environment(
      Sysroot(tree.root()), Environment(Vars{{"KUBERNETES_SERVICE_HOST", "10.0.0.1"}}));
  EXPECT_EQ(info.container.kind, "kubernetes");
  EXPECT_EQ(info.container.evidence,
            (std::vector<std::string>{"KUBERNETES_SERVICE_HOST is set",
                                      "/proc/1/cgroup mentions kubepods",
                                      "/proc/1/cgroup mentions cri-containerd"}));
  EXPECT_EQ(info.variables.at("KUBERNETES_SERVICE_HOST"), "10.0.0.1");
}

TEST(EnvironmentProbe, PodmanAndLxcAndMountinfo) {
  {
    FixtureTree tree;
    tree.file("/run/.containerenv", "engine=\"podman-4.9\"\n");
    const EnvironmentInfo info =
        probe_environment(Sysroot(tree.root()), Environment(Vars{{"container", "podman"}}));
    EXPECT_EQ(info.container.kind, "podman");
    EXPECT_EQ(info.container.evidence.size(), 2U);
  }
  {
    FixtureTree tree;
    tree.file("/run/systemd/container", "lxc\n");
    EXPECT_EQ(probe_environment(Sysroot(tree.root()), Environment()).container.kind, "lxc");
  }
  {
    // cgroup v2 hides the path; the /etc/hostname bind mount still names docker.
    FixtureTree tree;
    tree.file("/proc/1/cgroup", "0::/\n")
        .file("/proc/self/mountinfo",
              "600 500 0:50 / / rw,relatime - overlay overlay rw\n"
              "610 600 259:1 /var/lib/docker/containers/4f2a/hostname /etc/hostname rw - ext4 "
              "/dev/nvme0n1p1 rw\n");
    const EnvironmentInfo info = probe_environment(Sysroot(tree.root()), Environment());
    EXPECT_EQ(info.container.kind, "docker");
    EXPECT_EQ(info.container.evidence,
              (std::vector<std::string>{"/proc/self/mountinfo mentions /docker/containers/"}));
    EXPECT_TRUE(info.container.nvidia_mounts.empty());
  }
  {
    // A docker host: container mounts in its namespace are not under /etc.
    FixtureTree tree;
    tree.file("/proc/1/cgroup", "0::/init.scope\n")
        .file("/proc/self/mountinfo",
              "700 30 0:60 / /var/lib/docker/containers/4f2a/mounts/shm rw - tmpfs shm rw\n");
    EXPECT_EQ(probe_environment(Sysroot(tree.root()), Environment()).container.kind, "none");
  }
}

TEST(EnvironmentProbe, ToolkitInjectedDriverFilesAreListed) {
  FixtureTree tree;
  tree.file("/proc/self/mountinfo",
            "600 500 0:50 / / rw - overlay overlay rw\n"
            "611 600 259:1 /usr/lib/x86_64-linux-gnu/libcuda.so.580.159.04 "
            "/usr/lib/x86_64-linux-gnu/libcuda.so.580.159.04 ro,nosuid - ext4 /dev/sda1 rw\n"
            "612 600 259:1 /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.580.159.04 "
            "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.580.159.04 ro - ext4 /dev/sda1 rw\n"
            "613 600 259:1 /usr/bin/nvidia-smi /usr/bin/nvidia-smi ro - ext4 /dev/sda1 rw\n"
            "614 600 0:5 /nvidiactl /dev/nvidiactl rw - devtmpfs udev rw\n"
            "615 600 0:60 / /usr/lib/x86_64-linux-gnu/libcudart.so.12 ro - tmpfs x rw\n"
            "garbage\n");
  const EnvironmentInfo info = probe_environment(Sysroot(tree.root()), Environment());
  EXPECT_EQ(info.container.nvidia_mounts,
            (std::vector<std::string>{"/usr/lib/x86_64-linux-gnu/libcuda.so.580.159.04",
                                      "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.580.159.04",
                                      "/usr/bin/nvidia-smi", "/dev/nvidiactl"}));
  const nlohmann::json json = info;
  EXPECT_EQ(json.get<EnvironmentInfo>(), info);
}

TEST(EnvironmentProbe, WslFromKernelNameOrDxg) {
  {
    FixtureTree tree;
    tree.file("/proc/version",
              "Linux version 5.15.167.4-microsoft-standard-WSL2 (root@f9c826d3017f) (gcc)\n");
    EXPECT_TRUE(probe_environment(Sysroot(tree.root()), Environment()).wsl);
  }
  {
    FixtureTree tree;
    tree.file("/dev/dxg");
    EXPECT_TRUE(probe_environment(Sysroot(tree.root()), Environment()).wsl);
  }
  {
    FixtureTree tree;
    tree.file("/proc/version", "Linux version 6.8.0-45-generic (buildd@lcy02) (gcc 13.2.0)\n")
        .dir("/usr/lib/wsl/lib");
    EXPECT_FALSE(probe_environment(Sysroot(tree.root()), Environment()).wsl);
  }
}

TEST(EnvironmentProbe, WslLayoutFilesAndDriverPackages) {
  FixtureTree tree;
  tree.file("/proc/sys/kernel/osrelease", "5.15.167.4-microsoft-standard-WSL2\n")
      .file("/dev/dxg")
      .file("/usr/lib/wsl/lib/libcuda.so.1.1", "elf")
      .file("/usr/lib/wsl/lib/libcuda.so.1", "elf")
      .symlink("/usr/lib/wsl/lib/libcuda.so", "libcuda.so.1")
      .file("/var/lib/dpkg/status",
            "Package: cuda-toolkit-12-8\nStatus: install ok installed\n\n"
            "Package: cuda-drivers\nStatus: install ok installed\n\n"
            "Package: cuda\nStatus: install ok installed\n\n"
            "Package: cuda-12-8\nStatus: install ok installed\n\n"
            "Package: cuda-compat-12-8\nStatus: install ok installed\n\n"
            "Package: nvidia-driver-535\nStatus: deinstall ok config-files\n\n"
            "Package: libnvidia-compute-580\nStatus: install ok installed");
  const EnvironmentInfo info = probe_environment(Sysroot(tree.root()), Environment());
  ASSERT_TRUE(info.wsl);
  ASSERT_TRUE(info.wsl_details.has_value());
  const WslInfo& wsl = *info.wsl_details;
  EXPECT_EQ(wsl.kernel_release, "5.15.167.4-microsoft-standard-WSL2");
  EXPECT_TRUE(wsl.dxg);
  ASSERT_EQ(wsl.files.size(), 4U);
  EXPECT_EQ(wsl.files[0].path, "/usr/lib/wsl/lib/libcuda.so");
  EXPECT_TRUE(wsl.files[0].is_symlink);
  EXPECT_TRUE(wsl.files[1].exists);
  EXPECT_FALSE(wsl.files[1].is_symlink);
  EXPECT_FALSE(wsl.files[3].exists); // libnvidia-ml.so.1
  EXPECT_EQ(wsl.driver_packages, (std::vector<std::string>{"cuda", "cuda-12-8", "cuda-drivers",
                                                           "libnvidia-compute-580"}));
  const nlohmann::json json = info;
  EXPECT_EQ(json.get<EnvironmentInfo>(), info);
}

TEST(EnvironmentProbe, NoWslDetailsOutsideWsl) {
  FixtureTree tree;
  tree.file("/proc/version", "Linux version 6.8.0-45-generic\n");
  EXPECT_FALSE(probe_environment(Sysroot(tree.root()), Environment()).wsl_details.has_value());
}

TEST(EnvironmentProbe, ShmSizeFromTheLastTmpfsMountOnDevShm) {
  FixtureTree tree;
  tree.dir("/dev/shm")
      .file("/proc/self/mounts",
            "tmpfs /dev/shm tmpfs rw,nosuid,nodev 0 0\n"
            "proc /proc proc rw 0 0\n"
            "shm /dev/shm tmpfs rw,nosuid,nodev,noexec,relatime,size=65536k 0 0\n"
            "garbage\n");
  const EnvironmentInfo info = probe_environment(Sysroot(tree.root()), Environment());
  ASSERT_TRUE(info.shm.has_value());
  EXPECT_EQ(info.shm->total_bytes, 64ULL << 20U);
  EXPECT_EQ(info.shm->source, "mounts");
  EXPECT_EQ(info.shm->writable, true);

  tree.file("/proc/self/mounts", "shm /dev/shm tmpfs rw,size=16g 0 0\n");
  EXPECT_EQ(probe_environment(Sysroot(tree.root()), Environment()).shm->total_bytes, 16ULL << 30U);
  tree.file("/proc/self/mounts", "tmpfs /dev/shm tmpfs rw,nosuid,nodev 0 0\n");
  const EnvironmentInfo unsized = probe_environment(Sysroot(tree.root()), Environment());
  ASSERT_TRUE(unsized.shm.has_value());
  EXPECT_FALSE(unsized.shm->total_bytes.has_value());
  tree.remove("/dev/shm");
  EXPECT_EQ(probe_environment(Sysroot(tree.root()), Environment()).shm->source, "absent");
}

TEST(EnvironmentProbe, ShmOnTheRealRootComesFromStatvfs) {
  if (!std::filesystem::is_directory("/dev/shm")) {
    GTEST_SKIP() << "this machine has no /dev/shm";
  }
  const EnvironmentInfo info = probe_environment(Sysroot("/"), Environment());
  ASSERT_TRUE(info.shm.has_value());
  EXPECT_EQ(info.shm->source, "statvfs");
  EXPECT_GT(info.shm->total_bytes.value_or(0), 0U);
}

} // namespace
} // namespace gpucheck::probes
