#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "checks/checks.hpp"
#include "findings/catalog.hpp"
#include "gpucheck/plural.hpp"

namespace gpucheck::checks {

namespace {
constexpr CheckInfo k_info{
    "env.device_nodes", "GPU device nodes",
    "/dev/nvidiactl, /dev/nvidia-uvm and a /dev/nvidiaN per GPU exist and this user can open "
    "them for reading and writing.",
    CheckKind::passive};

bool is_gpu_node(std::string_view path) {
  constexpr std::string_view k_prefix = "/dev/nvidia";
  if (!path.starts_with(k_prefix) || path.size() == k_prefix.size()) {
    return false;
  }
  const std::string_view rest = path.substr(k_prefix.size());
  return std::all_of(rest.begin(), rest.end(),
                     [](unsigned char c) { return std::isdigit(c) != 0; });
}

const DeviceNode* find_node(const KernelModuleInfo& module, std::string_view path) {
  for (const DeviceNode& node : module.device_nodes) {
    if (node.path == path) {
      return &node;
    }
  }
  return nullptr;
}

void judge_access(const DeviceNode& node, std::vector<Finding>& findings) {
  if (node.readable && node.writable) {
    return;
  }
  const std::string what = !node.readable && !node.writable ? "reading and writing"
                           : !node.readable                 ? "reading"
                                                            : "writing";
  const std::string mode = node.mode ? fmt::format("{:04o}", *node.mode) : std::string("unknown");
  findings.push_back(
      make_finding(codes::k_env_device_node_no_access, std::nullopt, node.path, what, mode));
}

std::vector<CheckResult> run(const CheckContext& context) {
  const KernelModuleInfo& module = context.snapshot.kernel_module;
  if (!module.proc_version_present) {
    return {skip_result(k_info, "no NVIDIA kernel module is loaded, so no device node is expected "
                                "(see driver.kernel_module)")};
  }
  if (module.device_nodes.empty()) {
    return {skip_result(k_info, "device nodes were not probed")};
  }
  std::vector<Finding> findings;
  const std::string uvm_context = module.uvm_loaded
                                      ? " (the nvidia_uvm module is loaded: the node was not "
                                        "created)"
                                      : " (the nvidia_uvm module is not loaded)";
  for (const auto& [path, context_text] :
       {std::pair<std::string_view, std::string>{"/dev/nvidiactl", ""},
        std::pair<std::string_view, std::string>{"/dev/nvidia-uvm", uvm_context}}) {
    const DeviceNode* node = find_node(module, path);
    if (node == nullptr || !node->exists) {
      findings.push_back(
          make_finding(codes::k_env_device_node_missing, std::nullopt, path, context_text));
    } else {
      judge_access(*node, findings);
    }
  }
  int gpu_nodes = 0;
  for (const DeviceNode& node : module.device_nodes) {
    if (!is_gpu_node(node.path)) {
      continue;
    }
    if (!node.exists) {
      findings.push_back(
          make_finding(codes::k_env_device_node_missing, std::nullopt, node.path, ""));
      continue;
    }
    ++gpu_nodes;
    judge_access(node, findings);
  }
  if (gpu_nodes == 0 && find_node(module, "/dev/nvidia0") == nullptr) {
    findings.push_back(make_finding(codes::k_env_device_node_missing, std::nullopt, "/dev/nvidia0",
                                    " (no /dev/nvidiaN node exists for any GPU)"));
  }
  return {make_result(k_info,
                      fmt::format("{} checked, {} present",
                                  plural(module.device_nodes.size(), "device node"),
                                  plural(gpu_nodes, "per-GPU node")),
                      std::move(findings))};
}
} // namespace

CheckDef env_device_nodes_check() {
  return {k_info, &run};
}

} // namespace gpucheck::checks
