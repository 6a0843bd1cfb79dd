// env.visible_devices, env.container, env.device_nodes, env.nouveau, env.variables.
#include <gtest/gtest.h>

#include "checks/checks.hpp"
#include "unit/check_case_runner.hpp"

namespace gpucheck::testing {
namespace {

std::function<void(SystemSnapshot&)> set_env(std::string name, std::string value) {
  return [name, value](SystemSnapshot& s) { s.environment.variables[name] = value; };
}

TEST(EnvVisibleDevicesCheck, Table) {
  const CheckCase cases[] = {
      {"unset", nullptr, Status::pass, {}},
      {"all valid", set_env("CUDA_VISIBLE_DEVICES", "1,0"), Status::pass, {}},
      {"UUID",
       set_env("CUDA_VISIBLE_DEVICES", "GPU-5f3c2a1b-7d4e-4c2a-9b1f-000000000001"),
       Status::pass,
       {}},
      {"empty",
       set_env("CUDA_VISIBLE_DEVICES", ""),
       Status::fail,
       {"env.visible_devices_hides_all"}},
      {"-1",
       set_env("CUDA_VISIBLE_DEVICES", "-1"),
       Status::fail,
       {"env.visible_devices_hides_all"}},
      {"NoDevFiles",
       set_env("CUDA_VISIBLE_DEVICES", "NoDevFiles"),
       Status::fail,
       {"env.visible_devices_hides_all"}},
      {"index beyond count",
       set_env("CUDA_VISIBLE_DEVICES", "2"),
       Status::fail,
       {"env.visible_devices_no_match"}},
      {"unknown UUID",
       set_env("CUDA_VISIBLE_DEVICES", "GPU-deadbeef"),
       Status::fail,
       {"env.visible_devices_no_match"}},
      {"partly invalid",
       set_env("CUDA_VISIBLE_DEVICES", "0,5,1"),
       Status::warn,
       {"env.visible_devices_partly_invalid"}},
  };
  run_cases(checks::env_visible_devices_check(), healthy_h200(2), cases);
}

TEST(EnvVisibleDevicesCheck, PartlyInvalidNamesWhatCudaKeeps) {
  SystemSnapshot s = healthy_h200(2);
  s.environment.variables["CUDA_VISIBLE_DEVICES"] = "1,3,0";
  const CheckResult result = run_check(checks::env_visible_devices_check(), s).front();
  ASSERT_EQ(result.findings.size(), 1U);
  EXPECT_EQ(result.findings[0].message,
            "CUDA_VISIBLE_DEVICES=\"1,3,0\": entry '3' is invalid (no GPU has index 3 (NVML sees "
            "2)), so CUDA ignores it and everything after it; CUDA enumerates only 1");
}

TEST(EnvVisibleDevicesCheck, HidesAllSuggestsTheIndices) {
  SystemSnapshot s = healthy_h200(2);
  s.environment.variables["CUDA_VISIBLE_DEVICES"] = "";
  const CheckResult result = run_check(checks::env_visible_devices_check(), s).front();
  ASSERT_EQ(result.findings.size(), 1U);
  EXPECT_NE(result.findings[0].remedy.find("CUDA_VISIBLE_DEVICES=0,1"), std::string::npos);
}

TEST(EnvContainerCheck, Table) {
  auto in_docker = [](SystemSnapshot& s) {
    s.environment.container.kind = "docker";
    s.environment.variables["NVIDIA_DRIVER_CAPABILITIES"] = "compute,utility";
    s.environment.variables["NVIDIA_VISIBLE_DEVICES"] = "all";
  };
  auto with = [in_docker](std::string name, std::optional<std::string> value) {
    return [in_docker, name, value](SystemSnapshot& s) {
      in_docker(s);
      if (value) {
        s.environment.variables[name] = *value;
      } else {
        s.environment.variables.erase(name);
      }
    };
  };
  const CheckCase cases[] = {
      {"not a container", nullptr, Status::skip, {}},
      {"docker, compute", in_docker, Status::pass, {}},
      {"capabilities all", with("NVIDIA_DRIVER_CAPABILITIES", "all"), Status::pass, {}},
      {"capabilities utility only",
       with("NVIDIA_DRIVER_CAPABILITIES", "utility"),
       Status::warn,
       {"env.driver_capabilities_no_compute"}},
      {"capabilities unset: info",
       with("NVIDIA_DRIVER_CAPABILITIES", std::nullopt),
       Status::pass,
       {"env.driver_capabilities_unset"}},
      {"visible devices void",
       with("NVIDIA_VISIBLE_DEVICES", "void"),
       Status::fail,
       {"env.nvidia_visible_devices_none"}},
      {"visible devices none",
       with("NVIDIA_VISIBLE_DEVICES", "none"),
       Status::fail,
       {"env.nvidia_visible_devices_none"}},
  };
  run_cases(checks::env_container_check(), healthy_h200(), cases);
}

TEST(EnvDeviceNodesCheck, Table) {
  auto set_node = [](std::string path, bool exists, bool readable, bool writable) {
    return [=](SystemSnapshot& s) {
      for (DeviceNode& n : s.kernel_module.device_nodes) {
        if (n.path == path) {
          n = node(path, exists, readable, writable);
        }
      }
    };
  };
  const CheckCase cases[] = {
      {"healthy H200", nullptr, Status::pass, {}},
      {"uvm node missing",
       set_node("/dev/nvidia-uvm", false, false, false),
       Status::fail,
       {"env.device_node_missing"}},
      {"ctl node missing",
       set_node("/dev/nvidiactl", false, false, false),
       Status::fail,
       {"env.device_node_missing"}},
      {"gpu node missing",
       set_node("/dev/nvidia0", false, false, false),
       Status::fail,
       {"env.device_node_missing"}},
      {"gpu node not writable",
       set_node("/dev/nvidia0", true, true, false),
       Status::fail,
       {"env.device_node_no_access"}},
      {"uvm-tools is optional",
       set_node("/dev/nvidia-uvm-tools", false, false, false),
       Status::pass,
       {}},
      {"no module: skip",
       [](SystemSnapshot& s) { s.kernel_module.proc_version_present = false; },
       Status::skip,
       {}},
      {"not probed: skip",
       [](SystemSnapshot& s) { s.kernel_module.device_nodes.clear(); },
       Status::skip,
       {}},
  };
  run_cases(checks::env_device_nodes_check(), healthy_h200(), cases);
}

TEST(EnvDeviceNodesCheck, NoAccessNamesModeAndGroups) {
  SystemSnapshot s = healthy_h200();
  for (DeviceNode& n : s.kernel_module.device_nodes) {
    if (n.path == "/dev/nvidiactl") {
      n.readable = false;
      n.writable = false;
      n.mode = 0660;
    }
  }
  const CheckResult result = run_check(checks::env_device_nodes_check(), s).front();
  ASSERT_EQ(result.findings.size(), 1U);
  EXPECT_EQ(result.findings[0].message,
            "/dev/nvidiactl exists but this user cannot open it for reading and writing (mode "
            "0660)");
  EXPECT_NE(result.findings[0].remedy.find("video"), std::string::npos);
}

TEST(EnvNouveauCheck, Table) {
  const CheckCase cases[] = {
      {"healthy H200", nullptr, Status::pass, {}},
      {"nouveau bound",
       [](SystemSnapshot& s) {
         s.kernel_module.nouveau_loaded = true;
         s.kernel_module.pci_devices[0].driver = "nouveau";
       },
       Status::fail,
       {"env.nouveau_bound"}},
      {"nouveau loaded only",
       [](SystemSnapshot& s) { s.kernel_module.nouveau_loaded = true; },
       Status::warn,
       {"env.nouveau_loaded"}},
  };
  run_cases(checks::env_nouveau_check(), healthy_h200(), cases);
}

TEST(EnvVariablesCheck, Table) {
  const CheckCase cases[] = {
      {"nothing set", nullptr, Status::pass, {}},
      {"launch blocking",
       set_env("CUDA_LAUNCH_BLOCKING", "1"),
       Status::warn,
       {"env.risky_variable"}},
      {"launch blocking off", set_env("CUDA_LAUNCH_BLOCKING", "0"), Status::pass, {}},
      {"injection",
       set_env("CUDA_INJECTION64_PATH", "/opt/nsight/libToolsInjection64.so"),
       Status::warn,
       {"env.risky_variable"}},
      {"eager loading, any case",
       set_env("CUDA_MODULE_LOADING", "eager"),
       Status::warn,
       {"env.risky_variable"}},
      {"lazy loading", set_env("CUDA_MODULE_LOADING", "LAZY"), Status::pass, {}},
      {"two at once",
       [](SystemSnapshot& s) {
         s.environment.variables["CUDA_LAUNCH_BLOCKING"] = "1";
         s.environment.variables["CUDA_CACHE_DISABLE"] = "1";
       },
       Status::warn,
       {"env.risky_variable", "env.risky_variable"}},
  };
  run_cases(checks::env_variables_check(), healthy_h200(), cases);
}

TEST(EnvVariablesCheck, NamesTheVariable) {
  SystemSnapshot s = healthy_h200();
  s.environment.variables["CUDA_LAUNCH_BLOCKING"] = "1";
  const CheckResult result = run_check(checks::env_variables_check(), s).front();
  ASSERT_EQ(result.findings.size(), 1U);
  EXPECT_EQ(result.findings[0].message.substr(0, 31), "CUDA_LAUNCH_BLOCKING=1 is set: ");
}

} // namespace
} // namespace gpucheck::testing
