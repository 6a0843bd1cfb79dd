// env.wsl, env.shm, gpu.display and the lost GPU of driver.nvml.
#include <gtest/gtest.h>

#include "checks/checks.hpp"
#include "unit/check_case_runner.hpp"

namespace gpucheck::testing {
namespace {

/// A healthy WSL2 machine as the probes see it: no kernel module, the Windows driver's
/// libraries in /usr/lib/wsl/lib.
SystemSnapshot healthy_wsl() {
  SystemSnapshot s = healthy_h200();
  s.environment.wsl = true;
  WslInfo wsl;
  wsl.kernel_release = "5.15.167.4-microsoft-standard-WSL2";
  wsl.dxg = true;
  for (const char* name : {"libcuda.so", "libcuda.so.1", "libcuda.so.1.1", "libnvidia-ml.so.1"}) {
    wsl.files.push_back({std::string("/usr/lib/wsl/lib/") + name, true, false});
  }
  s.environment.wsl_details = wsl;
  s.kernel_module = KernelModuleInfo{};
  s.cuda.library = loaded("libcuda.so.1", "/usr/lib/wsl/lib/libcuda.so.1.1", "");
  s.nvml.library = loaded("libnvidia-ml.so.1", "/usr/lib/wsl/lib/libnvidia-ml.so.1", "");
  return s;
}

TEST(EnvWslCheck, Table) {
  const CheckCase cases[] = {
      {"healthy WSL2: a pass with the harmless ldconfig note",
       nullptr,
       Status::pass,
       {"env.wsl_ldconfig_warning"}},
      {"not WSL: skip",
       [](SystemSnapshot& s) {
         s.environment.wsl = false;
         s.environment.wsl_details.reset();
       },
       Status::skip,
       {}},
      {"the Windows driver's NVML is missing",
       [](SystemSnapshot& s) { s.environment.wsl_details->files[3].exists = false; },
       Status::fail,
       {"env.wsl_file_missing", "env.wsl_ldconfig_warning"}},
      {"no /dev/dxg",
       [](SystemSnapshot& s) { s.environment.wsl_details->dxg = false; },
       Status::fail,
       {"env.wsl_file_missing", "env.wsl_ldconfig_warning"}},
      {"a Linux libcuda shadows the Windows driver's",
       [](SystemSnapshot& s) {
         s.cuda.library =
             loaded("libcuda.so.1", "/usr/lib/x86_64-linux-gnu/libcuda.so.580.95.05", "");
       },
       Status::fail,
       {"env.wsl_linux_driver_library", "env.wsl_ldconfig_warning"}},
      {"the driver package inside WSL",
       [](SystemSnapshot& s) {
         s.environment.wsl_details->driver_packages = {"libnvidia-compute-580"};
       },
       Status::fail,
       {"env.wsl_linux_driver_package", "env.wsl_ldconfig_warning"}},
      {"the toolkit through the cuda meta-package",
       [](SystemSnapshot& s) { s.environment.wsl_details->driver_packages = {"cuda-12-8"}; },
       Status::warn,
       {"env.wsl_cuda_meta_package", "env.wsl_ldconfig_warning"}},
      {"symlinked copies: no ldconfig note",
       [](SystemSnapshot& s) {
         for (WslFile& file : s.environment.wsl_details->files) {
           file.is_symlink = true;
         }
       },
       Status::pass,
       {}},
  };
  run_cases(checks::env_wsl_check(), healthy_wsl(), cases);
}

TEST(DriverKernelModuleCheck, Wsl2HasNoLinuxModuleByDesign) {
  const CheckResult result = run_check(checks::driver_kernel_module_check(), healthy_wsl()).front();
  EXPECT_EQ(result.status, Status::pass);
  EXPECT_TRUE(result.findings.empty());
  EXPECT_NE(result.summary.find("WSL2: the Windows driver serves the GPU"), std::string::npos);
  // The same facts outside WSL are a module that is not loaded.
  SystemSnapshot native = healthy_wsl();
  native.environment.wsl = false;
  EXPECT_EQ(run_check(checks::driver_kernel_module_check(), native).front().status, Status::fail);
}

SystemSnapshot in_docker(uint64_t shm_bytes, int gpus) {
  SystemSnapshot s = healthy_h200(gpus);
  s.environment.container.kind = "docker";
  ShmInfo shm;
  shm.total_bytes = shm_bytes;
  shm.source = "mounts";
  shm.writable = true;
  s.environment.shm = shm;
  return s;
}

TEST(EnvShmCheck, Table) {
  const CheckCase cases[] = {
      {"two GPUs with 64 MiB", nullptr, Status::warn, {"env.shm_small"}},
      {"two GPUs with 16 GiB",
       [](SystemSnapshot& s) { s.environment.shm->total_bytes = 16 * k_gib; },
       Status::pass,
       {}},
      {"one GPU, no NCCL: 64 MiB is enough",
       [](SystemSnapshot& s) { s.gpus.resize(1); },
       Status::pass,
       {}},
      {"one GPU with NCCL",
       [](SystemSnapshot& s) {
         s.gpus.resize(1);
         LibraryFamily nccl;
         nccl.family = "nccl";
         nccl.load =
             loaded("libnccl.so.2", "/usr/lib/x86_64-linux-gnu/libnccl.so.2.28.3", "2.28.3");
         s.libraries.push_back(nccl);
       },
       Status::warn,
       {"env.shm_small"}},
      {"not writable",
       [](SystemSnapshot& s) {
         s.environment.shm->writable = false;
         s.environment.shm->total_bytes = 16 * k_gib;
       },
       Status::warn,
       {"env.shm_not_writable"}},
      {"no /dev/shm",
       [](SystemSnapshot& s) {
         s.environment.shm = ShmInfo{{}, {}, "absent", {}};
       },
       Status::warn,
       {"env.shm_missing"}},
      {"a snapshot that did not record it: skip",
       [](SystemSnapshot& s) { s.environment.shm.reset(); },
       Status::skip,
       {}},
      {"a host: skip",
       [](SystemSnapshot& s) { s.environment.container.kind = "none"; },
       Status::skip,
       {}},
  };
  run_cases(checks::env_shm_check(), in_docker(64ULL << 20U, 2), cases);
}

TEST(EnvShmCheck, RemedyNamesShmSizeAndIpcHost) {
  const CheckResult result = run_check(checks::env_shm_check(), in_docker(64ULL << 20U, 2)).front();
  ASSERT_EQ(result.findings.size(), 1U);
  EXPECT_NE(result.findings[0].message.find("64 MiB"), std::string::npos);
  EXPECT_NE(result.findings[0].message.find("2 GPUs"), std::string::npos);
  EXPECT_NE(result.findings[0].remedy.find("--shm-size"), std::string::npos);
  EXPECT_NE(result.findings[0].remedy.find("--ipc=host"), std::string::npos);
}

TEST(GpuDisplayCheck, Table) {
  SystemSnapshot base = healthy_h200();
  base.gpus[0].kernel_exec_timeout = false;
  base.gpus[0].display_active = false;
  base.gpus[0].display_mode = false;
  const CheckCase cases[] = {
      {"no display", nullptr, Status::pass, {}},
      {"watchdog on",
       [](SystemSnapshot& s) {
         s.gpus[0].kernel_exec_timeout = true;
         s.gpus[0].display_active = true;
       },
       Status::warn,
       {"gpu.display_watchdog"}},
      {"watchdog under WSL is a note",
       [](SystemSnapshot& s) {
         s.gpus[0].kernel_exec_timeout = true;
         s.environment.wsl = true;
       },
       Status::pass,
       {"gpu.display_watchdog"}},
      {"display without watchdog",
       [](SystemSnapshot& s) { s.gpus[0].display_active = true; },
       Status::pass,
       {"gpu.display_active"}},
      {"nothing reported: skip",
       [](SystemSnapshot& s) {
         s.gpus[0].kernel_exec_timeout.reset();
         s.gpus[0].display_active.reset();
         s.gpus[0].display_mode.reset();
       },
       Status::skip,
       {}},
  };
  run_cases(checks::gpu_display_check(), base, cases, 0);
}

TEST(DriverNvmlCheck, LostGpuIsNamedByItsPciAddress) {
  SystemSnapshot s = healthy_h200(2);
  s.nvml.device_count = 2;
  s.nvml.handle_failures.push_back({1, 15, "GPU_IS_LOST"});
  s.kernel_module.pci_devices[1].config_all_ones = true;
  s.gpus.resize(1);
  s.cuda.device_count = 1;
  const CheckResult result = run_check(checks::driver_nvml_check(), s).front();
  EXPECT_EQ(result.status, Status::fail);
  ASSERT_EQ(codes_of(result), (std::vector<std::string>{"gpu.lost"}));
  const Finding& f = result.findings[0];
  EXPECT_EQ(f.gpu_index, 1);
  EXPECT_NE(f.message.find(s.kernel_module.pci_devices[1].bdf), std::string::npos) << f.message;
  EXPECT_NE(f.message.find("0xffffffff"), std::string::npos) << f.message;
  EXPECT_NE(f.remedy.find("reseat"), std::string::npos);
  EXPECT_NE(f.remedy.find("RMA"), std::string::npos);

  // The kernel log's Xid 79 for that address is named as evidence.
  KernelLogEvent xid;
  xid.kind = "xid";
  xid.code = 79;
  xid.pci_bus_id = s.kernel_module.pci_devices[1].bdf;
  s.kernel_log.events.push_back(xid);
  const Finding with_log = run_check(checks::driver_nvml_check(), s).front().findings.at(0);
  EXPECT_NE(with_log.message.find("Xid 79"), std::string::npos) << with_log.message;

  s.nvml.handle_failures[0] = {1, 16, "RESET_REQUIRED"};
  EXPECT_EQ(codes_of(run_check(checks::driver_nvml_check(), s).front()),
            (std::vector<std::string>{"gpu.reset_required"}));

  // No PCI function to name it by: one "at", not two (issue 35).
  s.nvml.handle_failures[0] = {1, 15, "GPU_IS_LOST"};
  s.kernel_module.pci_devices.resize(1);
  const Finding unnamed = run_check(checks::driver_nvml_check(), s).front().findings.at(0);
  EXPECT_NE(unnamed.message.find("GPU 1 at an unknown PCI address is lost"), std::string::npos)
      << unnamed.message;
}

} // namespace
} // namespace gpucheck::testing
