// cuda.init: every cuInit outcome the check decodes.
#include <gtest/gtest.h>

#include "checks/checks.hpp"
#include "unit/check_case_runner.hpp"

namespace gpucheck::testing {
namespace {

std::function<void(SystemSnapshot&)> cu_init(int code, std::string name) {
  return [code, name](SystemSnapshot& s) {
    s.cuda.init_result = code;
    s.cuda.init_result_name = name;
    s.cuda.init_result_text = "text from cuGetErrorString";
    s.cuda.device_count.reset();
    s.cuda.devices.clear();
  };
}

TEST(CudaInitCheck, Table) {
  const CheckCase cases[] = {
      {"healthy H200", nullptr, Status::pass, {}},
      {"100 no device", cu_init(100, "CUDA_ERROR_NO_DEVICE"), Status::fail, {"cuda.no_device"}},
      {"999 unknown", cu_init(999, "CUDA_ERROR_UNKNOWN"), Status::fail, {"cuda.unknown_error"}},
      {"34 stub", cu_init(34, "CUDA_ERROR_STUB_LIBRARY"), Status::fail, {"cuda.stub_library"}},
      {"35 insufficient driver",
       cu_init(35, "CUDA_ERROR_INSUFFICIENT_DRIVER"),
       Status::fail,
       {"cuda.insufficient_driver"}},
      {"803 mismatch",
       cu_init(803, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH"),
       Status::fail,
       {"cuda.system_driver_mismatch"}},
      {"804 compat",
       cu_init(804, "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE"),
       Status::fail,
       {"cuda.compat_unsupported"}},
      {"46 unavailable",
       cu_init(46, "CUDA_ERROR_DEVICES_UNAVAILABLE"),
       Status::fail,
       {"cuda.devices_unavailable"}},
      {"802 not ready",
       cu_init(802, "CUDA_ERROR_SYSTEM_NOT_READY"),
       Status::fail,
       {"cuda.system_not_ready"}},
      {"other code by name",
       cu_init(3, "CUDA_ERROR_NOT_INITIALIZED"),
       Status::fail,
       {"cuda.init_failed"}},
      {"stub path even with success",
       [](SystemSnapshot& s) {
         s.cuda.library.real_path =
             "/usr/local/cuda-13.0/targets/x86_64-linux/lib/stubs/libcuda.so";
       },
       Status::fail,
       {"cuda.stub_library"}},
      {"zero devices while NVML sees one",
       [](SystemSnapshot& s) {
         s.cuda.device_count = 0;
         s.cuda.devices.clear();
       },
       Status::fail,
       {"cuda.no_visible_device"}},
      {"libcuda missing with module loaded",
       [](SystemSnapshot& s) { s.cuda.library = not_loaded("libcuda.so.1"); },
       Status::fail,
       {"cuda.library_missing"}},
      {"no driver at all: skip",
       [](SystemSnapshot& s) {
         s.cuda.library = not_loaded("libcuda.so.1");
         s.kernel_module.proc_version_present = false;
       },
       Status::skip,
       {}},
      {"cuInit not called",
       [](SystemSnapshot& s) { s.cuda.init_result.reset(); },
       Status::skip,
       {}},
      {"probe crashed",
       [](SystemSnapshot& s) { s.cuda.failure = crashed("SIGSEGV", 11, "in cuInit"); },
       Status::error,
       {"probe.crashed"}},
  };
  run_cases(checks::cuda_init_check(), healthy_h200(), cases);
}

TEST(CudaInitCheck, StubRemedyNamesTheStubsDirectory) {
  SystemSnapshot s = healthy_h200();
  s.cuda.library.real_path = "/usr/local/cuda-13.0/targets/x86_64-linux/lib/stubs/libcuda.so";
  s.cuda.init_result = 34;
  s.cuda.init_result_name = "CUDA_ERROR_STUB_LIBRARY";
  const CheckResult result = run_check(checks::cuda_init_check(), s).front();
  ASSERT_EQ(result.findings.size(), 1U);
  EXPECT_EQ(result.findings[0].remedy.substr(0, 59),
            "remove /usr/local/cuda-13.0/targets/x86_64-linux/lib/stubs ");
}

TEST(CudaInitCheck, CrashFindingQuotesSignalAndStderr) {
  SystemSnapshot s = healthy_h200();
  s.cuda.failure = crashed("SIGSEGV", 11, "fatal: bad thing in cuInit\n");
  const CheckResult result = run_check(checks::cuda_init_check(), s).front();
  ASSERT_EQ(result.findings.size(), 1U);
  EXPECT_EQ(to_string(result.findings[0].severity), "error");
  EXPECT_NE(result.findings[0].message.find("SIGSEGV"), std::string::npos);
  EXPECT_NE(result.findings[0].message.find("\"fatal: bad thing in cuInit\""), std::string::npos)
      << result.findings[0].message;
}

TEST(CudaInitCheck, NoDeviceMentionsVisibleDevices) {
  SystemSnapshot s = healthy_h200(2);
  s.environment.variables["CUDA_VISIBLE_DEVICES"] = "-1";
  cu_init(100, "CUDA_ERROR_NO_DEVICE")(s);
  const CheckResult result = run_check(checks::cuda_init_check(), s).front();
  ASSERT_EQ(result.findings.size(), 1U);
  EXPECT_EQ(result.findings[0].message,
            "cuInit returned CUDA_ERROR_NO_DEVICE (100); NVML sees 2 GPUs; "
            "CUDA_VISIBLE_DEVICES=\"-1\"");
}

TEST(CudaInitCheck, UnknownErrorPointsAtUvm) {
  SystemSnapshot s = healthy_h200();
  s.kernel_module.uvm_loaded = false;
  cu_init(999, "CUDA_ERROR_UNKNOWN")(s);
  const CheckResult result = run_check(checks::cuda_init_check(), s).front();
  ASSERT_EQ(result.findings.size(), 1U);
  EXPECT_EQ(result.findings[0].message,
            "cuInit returned CUDA_ERROR_UNKNOWN (999); the nvidia_uvm module is not loaded");
}

} // namespace
} // namespace gpucheck::testing
