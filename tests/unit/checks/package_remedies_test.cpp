// Remedies that name a package command follow the machine's distribution
// (checks/rules/packages.hpp): apt only where apt is, dnf on Red Hat's family, zypper on SUSE, no
// command elsewhere.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "checks/checks.hpp"
#include "checks/rules/packages.hpp"
#include "unit/check_case_runner.hpp"

namespace gpucheck::testing {
namespace {

using checks::PackageTool;

TEST(PackageRemedies, TheToolFollowsOsRelease) {
  EXPECT_EQ(checks::package_tool("Ubuntu 24.04.1 LTS"), PackageTool::apt);
  EXPECT_EQ(checks::package_tool("Debian GNU/Linux 12 (bookworm)"), PackageTool::apt);
  EXPECT_EQ(checks::package_tool("Rocky Linux 9.4 (Blue Onyx)"), PackageTool::dnf);
  EXPECT_EQ(checks::package_tool("Red Hat Enterprise Linux 9.4 (Plow)"), PackageTool::dnf);
  EXPECT_EQ(checks::package_tool("Amazon Linux 2023.5.20240805"), PackageTool::dnf);
  EXPECT_EQ(checks::package_tool("Fedora Linux 41 (Server Edition)"), PackageTool::dnf);
  EXPECT_EQ(checks::package_tool("SUSE Linux Enterprise Server 15 SP6"), PackageTool::zypper);
  EXPECT_EQ(checks::package_tool("Arch Linux"), PackageTool::other);
  EXPECT_EQ(checks::package_tool(""), PackageTool::other);
}

/// The remedy of the one finding `check` reports on `s` after `change`, on `os`.
std::string remedy_on(const CheckDef& check, const std::string& os,
                      const std::function<void(SystemSnapshot&)>& change) {
  SystemSnapshot s = healthy_h200();
  s.host.os = os;
  change(s);
  const std::vector<CheckResult> results = run_check(check, s);
  if (results.empty() || results.front().findings.empty()) {
    ADD_FAILURE() << check.info.id << " on " << os << ": no finding";
    return "";
  }
  return results.front().findings.front().remedy;
}

struct Case {
  const char* name;
  CheckDef check;
  std::function<void(SystemSnapshot&)> change;
  const char* apt;  ///< in the remedy on Ubuntu
  const char* dnf;  ///< on Rocky
  const char* none; ///< on a distribution gpucheck does not know
};

TEST(PackageRemedies, EveryPackageRemedyNamesThisDistributionsCommand) {
  const std::vector<Case> cases{
      {"libcuda missing", checks::cuda_init_check(),
       [](SystemSnapshot& s) { s.cuda.library = not_loaded("libcuda.so.1"); },
       "sudo apt install libnvidia-compute-580", "sudo dnf install nvidia-driver-cuda-libs",
       "with the package manager that installed the driver"},
      {"NVML missing", checks::driver_nvml_check(),
       [](SystemSnapshot& s) { s.nvml.library = not_loaded("libnvidia-ml.so.1"); },
       "nvidia-utils-580", "sudo dnf install nvidia-driver-cuda",
       "with the package manager that installed the driver"},
      {"module not loaded", checks::driver_kernel_module_check(),
       [](SystemSnapshot& s) {
         s.kernel_module.proc_version_present = false;
         s.kernel_module.version.reset();
         s.gpus.clear();
       },
       "sudo apt install linux-headers-6.8.0-45-generic",
       "sudo dnf install kernel-devel-6.8.0-45-generic", "install the headers for kernel"},
      {"version mismatch", checks::driver_version_match_check(),
       [](SystemSnapshot& s) {
         s.cuda.library.real_path = "/usr/lib/x86_64-linux-gnu/libcuda.so.580.195.01";
       },
       "apt-mark hold", "dnf versionlock add '*nvidia*580*'", "in the package manager"},
      {"cuDNN missing", checks::lib_cudnn_check(),
       [](SystemSnapshot& s) {
         family(s, "cudnn").load = not_loaded("libcudnn.so.9");
         family(s, "cudnn").cudnn.reset();
       },
       "sudo apt install libcudnn9-cuda-13", "NVIDIA's repository for this distribution",
       "NVIDIA's repository for this distribution"},
  };
  for (const Case& c : cases) {
    const std::string on_ubuntu = remedy_on(c.check, "Ubuntu 24.04.1 LTS", c.change);
    EXPECT_NE(on_ubuntu.find(c.apt), std::string::npos) << c.name << ": " << on_ubuntu;
    const std::string on_rocky = remedy_on(c.check, "Rocky Linux 9.4 (Blue Onyx)", c.change);
    EXPECT_NE(on_rocky.find(c.dnf), std::string::npos) << c.name << ": " << on_rocky;
    EXPECT_EQ(on_rocky.find("apt"), std::string::npos) << c.name << ": " << on_rocky;
    const std::string elsewhere = remedy_on(c.check, "Arch Linux", c.change);
    EXPECT_NE(elsewhere.find(c.none), std::string::npos) << c.name << ": " << elsewhere;
    EXPECT_EQ(elsewhere.find("apt "), std::string::npos) << c.name << ": " << elsewhere;
    EXPECT_EQ(elsewhere.find("dnf "), std::string::npos) << c.name << ": " << elsewhere;
  }
}

} // namespace
} // namespace gpucheck::testing
