// driver.installed, driver.kernel_module, driver.nvml, driver.version_match.
#include <gtest/gtest.h>

#include <functional>

#include "checks/checks.hpp"
#include "unit/check_case_runner.hpp"

namespace gpucheck::testing {
namespace {

void no_driver(SystemSnapshot& s) {
  s.kernel_module.proc_version_present = false;
  s.kernel_module.version.reset();
  s.kernel_module.nvidia_loaded = false;
  s.kernel_module.uvm_loaded = false;
  s.kernel_module.device_nodes.clear();
  s.nvml = NvmlInfo{};
  s.nvml.library = not_loaded("libnvidia-ml.so.1");
  s.cuda = CudaDriverInfo{};
  s.cuda.library = not_loaded("libcuda.so.1");
  s.gpus.clear();
}

void module_gone(SystemSnapshot& s) {
  // DKMS did not rebuild the module for the new kernel: libraries stay, /proc entry is gone.
  s.kernel_module.proc_version_present = false;
  s.kernel_module.version.reset();
  s.kernel_module.nvidia_loaded = false;
  s.kernel_module.pci_devices[0].driver = "";
  s.nvml.init_result = 9;
  s.nvml.init_result_name = "DRIVER_NOT_LOADED";
  s.gpus.clear();
}

TEST(DriverInstalledCheck, Table) {
  const CheckCase cases[] = {
      {"healthy H200", nullptr, Status::pass, {}},
      {"no driver at all", no_driver, Status::fail, {"driver.missing"}},
      {"libraries without module", module_gone, Status::pass, {}},
      {"libcuda probe crashed, nothing else",
       [](SystemSnapshot& s) {
         no_driver(s);
         s.cuda.failure = crashed("SIGSEGV", 11, "Segmentation fault in cuInit");
       },
       Status::error,
       {"probe.crashed"}},
  };
  run_cases(checks::driver_installed_check(), healthy_h200(), cases);
}

TEST(DriverInstalledCheck, MissingDriverNamesTheGpuOnTheBus) {
  SystemSnapshot s = healthy_h200();
  no_driver(s);
  const CheckResult result = run_check(checks::driver_installed_check(), s).front();
  ASSERT_EQ(result.findings.size(), 1U);
  EXPECT_NE(result.findings[0].message.find("0000:1b:00.0 (0x2335)"), std::string::npos)
      << result.findings[0].message;
  EXPECT_NE(result.findings[0].message.find("libcuda.so.1: cannot open shared object file"),
            std::string::npos);
}

// The remedy for a missing driver follows the situation (issue 35): "install the driver, then
// reboot" with apt was shown in a container on a machine without any NVIDIA GPU.
TEST(DriverInstalledCheck, TheRemedyFollowsTheSituation) {
  const auto remedy = [](const std::function<void(SystemSnapshot&)>& change) {
    SystemSnapshot s = healthy_h200();
    no_driver(s);
    s.host.os = "Ubuntu 24.04.1 LTS";
    change(s);
    const CheckResult result = run_check(checks::driver_installed_check(), s).front();
    return result.findings.at(0).remedy;
  };
  const auto no_gpu = [](SystemSnapshot& s) { s.kernel_module.pci_devices.clear(); };
  const auto in_docker = [](SystemSnapshot& s) { s.environment.container.kind = "docker"; };

  std::string text = remedy([&](SystemSnapshot& s) {
    no_gpu(s);
    in_docker(s);
  });
  EXPECT_TRUE(text.starts_with("nothing to install")) << text;
  EXPECT_NE(text.find("never installed inside a container"), std::string::npos) << text;
  EXPECT_EQ(text.find("apt"), std::string::npos) << text;

  text = remedy(no_gpu);
  EXPECT_TRUE(text.starts_with("nothing to install")) << text;
  EXPECT_NE(text.find("passed through"), std::string::npos) << text;

  text = remedy(in_docker);
  EXPECT_NE(text.find("install the driver on the host, not in this container"), std::string::npos)
      << text;
  EXPECT_NE(text.find("--gpus all"), std::string::npos) << text;

  text = remedy([](SystemSnapshot& s) { s.environment.wsl = true; });
  EXPECT_NE(text.find("on Windows"), std::string::npos) << text;

  EXPECT_NE(remedy([](SystemSnapshot&) {}).find("sudo ubuntu-drivers install"), std::string::npos);
  for (const char* os : {"Rocky Linux 9.4 (Blue Onyx)", "Red Hat Enterprise Linux 9.4 (Plow)",
                         "AlmaLinux 9.4 (Seafoam Ocelot)", "Amazon Linux 2023.5.20240819"}) {
    text = remedy([os](SystemSnapshot& s) { s.host.os = os; });
    EXPECT_NE(text.find("sudo dnf install nvidia-open"), std::string::npos) << os << ": " << text;
    EXPECT_EQ(text.find("apt"), std::string::npos) << os << ": " << text;
  }
  text = remedy([](SystemSnapshot& s) { s.host.os = "SUSE Linux Enterprise Server 15 SP6"; });
  EXPECT_NE(text.find("zypper"), std::string::npos) << text;
  text = remedy([](SystemSnapshot& s) { s.host.os = "Debian GNU/Linux 12 (bookworm)"; });
  EXPECT_NE(text.find("apt install nvidia-driver"), std::string::npos) << text;
  EXPECT_TRUE(text.ends_with("then reboot")) << text;
}

// The driver branch for the GPU on the bus comes from the matrix (issue 35): its PCI ID in the
// driver's list of Turing-or-later GPUs, its architecture's first CUDA release, the long-term
// branch; a GPU missing from that list gets each older architecture's last branch.
TEST(DriverInstalledCheck, TheRemedyNamesTheDriverBranchForTheGpu) {
  const auto remedy = [](const char* device_id, const char* os) {
    SystemSnapshot s = healthy_h200();
    no_driver(s);
    s.host.os = os;
    s.kernel_module.pci_devices[0].device_id = device_id;
    const CheckResult result = run_check(checks::driver_installed_check(), s).front();
    return result.findings.at(0).remedy;
  };
  std::string text = remedy("0x2335", "Ubuntu 24.04.1 LTS");
  EXPECT_TRUE(text.starts_with("NVIDIA H200 (Hopper, PCI ID 10de:2335) needs driver branch R520 "
                               "or newer: take R580 (long-term support until 2028-06)"))
      << text;
  EXPECT_NE(text.find("driver 595.45.04 lists this GPU"), std::string::npos) << text;
  EXPECT_NE(text.find("sudo ubuntu-drivers install"), std::string::npos) << text;

  text = remedy("0x2b85", "Debian GNU/Linux 12 (bookworm)");
  EXPECT_TRUE(text.starts_with("NVIDIA GeForce RTX 5090 (Blackwell, PCI ID 10de:2b85) needs "
                               "driver branch R570 or newer"))
      << text;

  // A V100 is not in the list: the proprietary modules of its last branch, and no dnf command
  // that installs nvidia-open.
  text = remedy("0x1db1", "Rocky Linux 9.4 (Blue Onyx)");
  EXPECT_TRUE(text.starts_with("PCI ID 10de:1db1 is not among the Turing-or-later GPUs")) << text;
  EXPECT_NE(text.find("R580 for Maxwell, Pascal and Volta; R470 for Kepler"), std::string::npos)
      << text;
  EXPECT_EQ(text.find("dnf install nvidia-open"), std::string::npos) << text;
  EXPECT_NE(text.find("proprietary kernel modules (not nvidia-open) as"), std::string::npos)
      << text;
  // Its healthy twin on the same distribution keeps the open modules' command.
  EXPECT_NE(remedy("0x2335", "Rocky Linux 9.4 (Blue Onyx)").find("sudo dnf install nvidia-open"),
            std::string::npos);
}

TEST(DriverKernelModuleCheck, Table) {
  const CheckCase cases[] = {
      {"healthy H200", nullptr, Status::pass, {}},
      {"no driver at all: skip", no_driver, Status::skip, {}},
      {"libraries without module", module_gone, Status::fail, {"driver.module_not_loaded"}},
      {"GPU not bound",
       [](SystemSnapshot& s) { s.kernel_module.pci_devices[0].driver = ""; },
       Status::fail,
       {"driver.gpu_unbound"}},
      {"GPU given to vfio-pci",
       [](SystemSnapshot& s) { s.kernel_module.pci_devices[0].driver = "vfio-pci"; },
       Status::warn,
       {"driver.gpu_other_driver"}},
      {"nouveau is env.nouveau's business",
       [](SystemSnapshot& s) { s.kernel_module.pci_devices[0].driver = "nouveau"; },
       Status::pass,
       {}},
      {"the board's audio function is not a GPU",
       [](SystemSnapshot& s) {
         PciDevice audio;
         audio.bdf = "0000:1b:00.1";
         audio.device_id = "0x22ba";
         audio.class_code = "0x040300";
         audio.driver = "snd_hda_intel";
         s.kernel_module.pci_devices.push_back(audio);
       },
       Status::pass,
       {}},
  };
  run_cases(checks::driver_kernel_module_check(), healthy_h200(), cases);
}

TEST(DriverKernelModuleCheck, ModuleMissingNamesKernelAndLibraries) {
  SystemSnapshot s = healthy_h200();
  s.host.os = "Ubuntu 24.04.1 LTS";
  module_gone(s);
  const CheckResult result = run_check(checks::driver_kernel_module_check(), s).front();
  ASSERT_EQ(result.findings.size(), 1U);
  EXPECT_NE(result.findings[0].remedy.find("linux-headers-6.8.0-45-generic"), std::string::npos);
  EXPECT_NE(result.findings[0].message.find("libcuda.so.580.159.04"), std::string::npos);
}

TEST(DriverNvmlCheck, Table) {
  auto init_fails = [](int code, std::string name) {
    return [code, name](SystemSnapshot& s) {
      s.nvml.init_result = code;
      s.nvml.init_result_name = name;
      s.gpus.clear();
    };
  };
  const CheckCase cases[] = {
      {"healthy H200", nullptr, Status::pass, {}},
      {"driver not loaded",
       init_fails(9, "DRIVER_NOT_LOADED"),
       Status::fail,
       {"nvml.driver_not_loaded"}},
      {"no permission", init_fails(4, "NO_PERMISSION"), Status::fail, {"nvml.no_permission"}},
      {"GPU lost", init_fails(15, "GPU_IS_LOST"), Status::fail, {"nvml.gpu_lost"}},
      {"unknown error", init_fails(999, "UNKNOWN"), Status::fail, {"nvml.unknown_error"}},
      {"other code by name",
       init_fails(12, "LIBRARY_NOT_FOUND"),
       Status::fail,
       {"nvml.init_failed"}},
      {"version mismatch is judged elsewhere",
       init_fails(18, "LIB_RM_VERSION_MISMATCH"),
       Status::skip,
       {}},
      {"init not called", [](SystemSnapshot& s) { s.nvml.init_result.reset(); }, Status::skip, {}},
      {"library missing with module loaded",
       [](SystemSnapshot& s) { s.nvml.library = not_loaded("libnvidia-ml.so.1"); },
       Status::warn,
       {"nvml.library_missing"}},
      {"no driver at all: skip", no_driver, Status::skip, {}},
      {"NVML probe hung",
       [](SystemSnapshot& s) { s.nvml.failure = timed_out(15.0); },
       Status::error,
       {"probe.timed_out"}},
  };
  run_cases(checks::driver_nvml_check(), healthy_h200(), cases);
}

TEST(DriverNvmlCheck, OtherCodeIsNamed) {
  SystemSnapshot s = healthy_h200();
  s.nvml.init_result = 12;
  s.nvml.init_result_name = "LIBRARY_NOT_FOUND";
  const CheckResult result = run_check(checks::driver_nvml_check(), s).front();
  ASSERT_EQ(result.findings.size(), 1U);
  EXPECT_EQ(result.findings[0].message, "nvmlInit_v2 returned NVML_ERROR_LIBRARY_NOT_FOUND (12)");
}

// Real plurals in the summary: "1 GPU", "8 GPUs", never "GPU(s)".
TEST(DriverNvmlCheck, SummaryCountsGpusInWords) {
  SystemSnapshot s = healthy_h200();
  s.nvml.device_count = 1;
  EXPECT_TRUE(run_check(checks::driver_nvml_check(), s).front().summary.ends_with(", 1 GPU"));
  s.nvml.device_count = 8;
  EXPECT_TRUE(run_check(checks::driver_nvml_check(), s).front().summary.ends_with(", 8 GPUs"));
  s.nvml.device_count.reset();
  EXPECT_TRUE(run_check(checks::driver_nvml_check(), s)
                  .front()
                  .summary.ends_with(", an unknown number of GPUs"));
}

TEST(DriverVersionMatchCheck, Table) {
  const CheckCase cases[] = {
      {"healthy H200", nullptr, Status::pass, {}},
      {"NVML init 18",
       [](SystemSnapshot& s) {
         s.nvml.init_result = 18;
         s.nvml.init_result_name = "LIB_RM_VERSION_MISMATCH";
         s.nvml.driver_version.reset();
         s.nvml.library.real_path = "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.580.195.01";
       },
       Status::fail,
       {"driver.version_mismatch"}},
      {"libcuda file newer than module",
       [](SystemSnapshot& s) {
         s.cuda.library.real_path = "/usr/lib/x86_64-linux-gnu/libcuda.so.580.195.01";
       },
       Status::fail,
       {"driver.version_mismatch"}},
      {"forward-compat libcuda is newer on purpose",
       [](SystemSnapshot& s) {
         s.cuda.library.real_path = "/usr/local/cuda-13.1/compat/libcuda.so.590.44.01";
       },
       Status::pass,
       {}},
      {"module version unknown",
       [](SystemSnapshot& s) { s.kernel_module.version.reset(); },
       Status::skip,
       {}},
      {"no user-space version",
       [](SystemSnapshot& s) {
         s.nvml.library = not_loaded("libnvidia-ml.so.1");
         s.nvml.driver_version.reset();
         s.cuda.library = not_loaded("libcuda.so.1");
       },
       Status::skip,
       {}},
  };
  run_cases(checks::driver_version_match_check(), healthy_h200(), cases);
}

TEST(DriverVersionMatchCheck, NamesBothVersions) {
  SystemSnapshot s = healthy_h200();
  s.cuda.library.real_path = "/usr/lib/x86_64-linux-gnu/libcuda.so.580.195.01";
  const CheckResult result = run_check(checks::driver_version_match_check(), s).front();
  ASSERT_EQ(result.findings.size(), 1U);
  EXPECT_EQ(result.findings[0].message,
            "the loaded kernel module is 580.159.04 but the user-space driver is 580.195.01 "
            "(file /usr/lib/x86_64-linux-gnu/libcuda.so.580.195.01)");
  EXPECT_NE(result.findings[0].remedy.find("reboot"), std::string::npos);
}

} // namespace
} // namespace gpucheck::testing
