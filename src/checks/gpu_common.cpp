#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>

#include "checks/gpu_checks.hpp"
#include "checks/gpu_work.hpp"
#include "gpucheck/finding_catalog.hpp"
#include "platform/child_process.hpp"

namespace gpucheck::checks {

namespace {
constexpr size_t k_stderr_shown = 400;

std::string tail(const std::string& text, size_t n) {
  return text.size() <= n ? text : "..." + text.substr(text.size() - n);
}

const GpuInfo* nvml_gpu_for(const SystemSnapshot& snapshot, int ordinal, const std::string& bus) {
  for (const GpuInfo& gpu : snapshot.gpus) {
    if (gpu.cuda_ordinal && *gpu.cuda_ordinal == ordinal) {
      return &gpu;
    }
  }
  for (const GpuInfo& gpu : snapshot.gpus) {
    if (!bus.empty() && gpu.pci_bus_id == bus) {
      return &gpu;
    }
  }
  return nullptr;
}

GpuTarget make_target(const SystemSnapshot& snapshot, int ordinal, std::string name,
                      std::string bus) {
  GpuTarget target;
  target.ordinal = ordinal;
  target.gpu_index = ordinal;
  target.name = std::move(name);
  target.pci_bus_id = std::move(bus);
  if (const GpuInfo* gpu = nvml_gpu_for(snapshot, ordinal, target.pci_bus_id)) {
    target.gpu_index = gpu->index;
    if (target.pci_bus_id.empty()) {
      target.pci_bus_id = gpu->pci_bus_id;
    }
    target.pcie_gen = gpu->pcie_gen_max;
    target.pcie_width = gpu->pcie_width_max;
    for (const GpuProcess& process : gpu->processes) {
      target.other_processes.push_back(process.name.empty()
                                           ? std::to_string(process.pid)
                                           : fmt::format("{} ({})", process.pid, process.name));
    }
  }
  return target;
}

std::string failure_detail(const ChildFailure& failure) {
  std::string detail = failure.detail;
  if (failure.kind == "timeout") {
    detail = fmt::format("no result within {:g} s: the GPU work hung or is very slow",
                         failure.timeout_s);
  }
  if (!failure.stderr_tail.empty()) {
    detail += fmt::format("; its last output: {}", tail(failure.stderr_tail, k_stderr_shown));
  }
  return detail;
}

std::string verify_code(const std::string& kind) {
  if (kind == "compute") {
    return "gpu.compute_mismatch";
  }
  if (kind == "copy") {
    return "gpu.copy_corrupt";
  }
  if (kind == "graph") {
    return "gpu.graph_mismatch";
  }
  if (kind == "cudnn_conv") {
    return "cudnn.conv_mismatch";
  }
  if (kind == "cudnn_activation") {
    return "cudnn.activation_mismatch";
  }
  return "gpu.compute_mismatch";
}
} // namespace

GpuTargets gpu_targets(const SystemSnapshot& snapshot, std::chrono::milliseconds timeout) {
  GpuTargets targets;
  const CudaDriverInfo& cuda = snapshot.cuda;
  if (cuda.failure) {
    targets.skip_reason = fmt::format("the CUDA driver probe failed ({})", cuda.failure->detail);
    return targets;
  }
  if (cuda.init_result) {
    if (*cuda.init_result != 0) {
      targets.skip_reason =
          fmt::format("cuInit failed ({}): see the cuda findings", cuda.init_result_name);
      return targets;
    }
    for (const CudaDevice& device : cuda.devices) {
      targets.gpus.push_back(make_target(snapshot, device.ordinal, device.name, device.pci_bus_id));
    }
    if (targets.gpus.empty()) {
      targets.skip_reason = "no CUDA device is visible";
    }
    return targets;
  }
  if (!cuda.library.loaded && !cuda.library.error.empty()) {
    targets.skip_reason = fmt::format("libcuda could not be loaded ({})", cuda.library.error);
    return targets;
  }
  // No driver-API facts in the snapshot at all: ask the driver in a child of our own.
  platform::ChildRequest request;
  request.mode = "gpu-devices";
  request.timeout = timeout;
  const platform::ChildOutcome outcome = platform::run_child(request);
  if (!outcome.ok()) {
    targets.skip_reason = fmt::format("listing CUDA devices failed: {}",
                                      outcome.failure ? outcome.failure->detail : "no result");
    return targets;
  }
  const nlohmann::json& payload = *outcome.payload;
  for (const nlohmann::json& device : payload.value("devices", nlohmann::json::array())) {
    targets.gpus.push_back(make_target(snapshot, device.value("ordinal", 0),
                                       device.value("name", ""), device.value("pci_bus_id", "")));
  }
  if (targets.gpus.empty()) {
    targets.skip_reason =
        payload.contains("error")
            ? fmt::format("no CUDA driver: {}", payload.value("error", ""))
            : fmt::format("no CUDA device (cuInit: {})", payload.value("init_name", "not run"));
  }
  return targets;
}

std::vector<Metric> payload_metrics(const nlohmann::json& payload, bool contended) {
  std::vector<Metric> metrics;
  for (const nlohmann::json& m : payload.value("metrics", nlohmann::json::array())) {
    Metric metric;
    metric.name = m.value("name", "");
    metric.value = m.value("value", 0.0);
    metric.unit = m.value("unit", "");
    metric.note = m.value("note", "");
    if (contended) {
      metric.note +=
          metric.note.empty() ? "measured under contention" : "; measured under contention";
    }
    metrics.push_back(std::move(metric));
  }
  return metrics;
}

std::vector<Finding> common_findings(const std::string& check_title, const GpuTarget& gpu,
                                     const nlohmann::json& payload) {
  std::vector<Finding> findings;
  const int index = gpu.gpu_index;
  if (payload.contains("failure")) {
    const nlohmann::json& f = payload["failure"];
    const std::string stage = f.value("stage", "");
    const std::string call = f.value("call", "");
    if (call.empty()) {
      findings.push_back(make_finding("gpu.child_failed", index, index, check_title,
                                      fmt::format("{}: {}", stage, f.value("message", ""))));
    } else if (stage == "driver" || stage == "context") {
      findings.push_back(
          make_finding("gpu.context_failed", index, index, call, stage, f.value("message", "")));
    } else {
      findings.push_back(make_finding("gpu.cuda_call_failed", index, index, call, stage,
                                      f.value("name", ""), f.value("text", "")));
    }
  }
  for (const nlohmann::json& v : payload.value("verify", nlohmann::json::array())) {
    const auto mismatches = v.value("mismatches", uint64_t{0});
    if (mismatches == 0) {
      continue;
    }
    findings.push_back(
        make_finding(verify_code(v.value("kind", "")), index, index, v.value("what", ""),
                     mismatches, v.value("checked", uint64_t{0}),
                     v.value("first_index", uint64_t{0}), v.value("got", ""), v.value("want", "")));
  }
  return findings;
}

bool all_verified(const nlohmann::json& payload) {
  const nlohmann::json verify = payload.value("verify", nlohmann::json::array());
  return !verify.empty() && std::all_of(verify.begin(), verify.end(), [](const nlohmann::json& v) {
    return v.value("mismatches", uint64_t{0}) == 0;
  });
}

namespace {
std::string load_remedy(int code, const nlohmann::json& module, int cc_major, int cc_minor) {
  const std::string toolkit = module.value("toolkit", "");
  switch (code) {
  case 200:
    return fmt::format("the driver could not read the image: a driver older than CUDA {0} (which "
                       "built gpucheck) cannot, so install one that supports CUDA {0} (r580 or "
                       "newer for 13.x); if the driver is current, the gpucheck binary is damaged: "
                       "reinstall it",
                       toolkit);
  case 222:
    return fmt::format("the driver is older than CUDA {0}, which built gpucheck: install a driver "
                       "that supports CUDA {0} (r580 or newer for 13.x), or use a gpucheck "
                       "built with the CUDA toolkit that matches this driver",
                       toolkit);
  case 209:
    return fmt::format("this build has no code for sm_{}{} and no PTX the driver can use: rebuild "
                       "gpucheck with a CUDA toolkit whose `nvcc --list-gpu-code` lists it",
                       cc_major, cc_minor);
  case 221:
    return "the PTX JIT compiler (libnvidia-ptxjitcompiler.so.1, part of the driver) is missing: "
           "install the full driver user-space; in a container, add 'compute' to "
           "NVIDIA_DRIVER_CAPABILITIES (e.g. NVIDIA_DRIVER_CAPABILITIES=compute,utility)";
  case 223:
    return "unset CUDA_DISABLE_PTX_JIT: this GPU has no SASS in the image and needs the JIT";
  case 218:
    return "the driver's JIT rejected the PTX (see the log): update the NVIDIA driver";
  default:
    return "look for Xid errors in `dmesg`; update the NVIDIA driver if the error persists";
  }
}
} // namespace

std::optional<Finding> kernel_load_finding(const GpuTarget& gpu, const nlohmann::json& payload) {
  if (!payload.contains("module") || payload["module"].value("loaded", false)) {
    return std::nullopt;
  }
  const nlohmann::json& module = payload["module"];
  const int code = module.value("code", 0);
  if (code == -2) {
    return make_finding("gpu.kernels_not_built", gpu.gpu_index, gpu.gpu_index);
  }
  int cc_major = 0;
  int cc_minor = 0;
  const std::string cc = payload.contains("device") ? payload["device"].value("cc", "") : "";
  if (std::sscanf(cc.c_str(), "%d.%d", &cc_major, &cc_minor) != 2) {
    cc_major = cc_minor = 0;
  }
  std::string image;
  for (const nlohmann::json& entry : module.value("image", nlohmann::json::array())) {
    image += (image.empty() ? "" : " ") + entry.get<std::string>();
  }
  std::string log = module.value("error_log", "");
  if (log.empty()) {
    log = module.value("info_log", "");
  }
  return make_finding("gpu.kernel_load_failed", gpu.gpu_index, gpu.gpu_index, gpu.name,
                      fmt::format("{}{}", cc_major, cc_minor), module.value("call", ""),
                      module.value("name", ""), module.value("text", ""), image,
                      log.empty() ? std::string() : "; JIT log: " + tail(log, k_stderr_shown),
                      load_remedy(code, module, cc_major, cc_minor));
}

std::vector<CheckResult> run_per_gpu(const CheckInfo& info, const CheckContext& context,
                                     const std::string& mode, bool parallel, const Judge& judge,
                                     const std::vector<std::string>& extra_args) {
  const GpuTargets targets = gpu_targets(context.snapshot, context.options.timeout);
  if (targets.gpus.empty()) {
    if (context.gpu_work != nullptr) {
      context.gpu_work->cancel(); // started on a guess; nothing to test after all
    }
    return {skip_result(info, targets.skip_reason)};
  }
  // Outcomes of the children started ahead (gpu_work.hpp); what they did not cover runs now.
  std::vector<std::optional<platform::ChildOutcome>> ahead(targets.gpus.size());
  if (context.gpu_work != nullptr && extra_args.empty()) {
    for (size_t i = 0; i < targets.gpus.size(); ++i) {
      ahead[i] = context.gpu_work->outcome(mode, targets.gpus[i].ordinal);
    }
  }
  std::vector<platform::ChildRequest> requests;
  for (size_t i = 0; i < targets.gpus.size(); ++i) {
    if (ahead[i]) {
      continue;
    }
    platform::ChildRequest request;
    request.mode = mode;
    request.args = {std::to_string(targets.gpus[i].ordinal)};
    request.args.insert(request.args.end(), extra_args.begin(), extra_args.end());
    request.timeout = context.options.timeout;
    requests.push_back(std::move(request));
  }
  std::vector<platform::ChildOutcome> now;
  if (parallel) {
    now = platform::run_children(requests);
  } else {
    for (const platform::ChildRequest& request : requests) {
      now.push_back(platform::run_child(request));
    }
  }
  std::vector<platform::ChildOutcome> outcomes;
  auto next_now = now.begin();
  for (std::optional<platform::ChildOutcome>& outcome : ahead) {
    outcomes.push_back(outcome ? std::move(*outcome) : std::move(*next_now++));
  }
  std::vector<CheckResult> results;
  for (size_t i = 0; i < targets.gpus.size(); ++i) {
    const GpuTarget& gpu = targets.gpus[i];
    const platform::ChildOutcome& outcome = outcomes[i];
    CheckResult result;
    if (!outcome.ok()) {
      const std::string detail =
          outcome.failure ? failure_detail(*outcome.failure) : std::string("no result");
      result = make_result(info, fmt::format("GPU {}: the check process failed", gpu.gpu_index),
                           {make_finding("gpu.child_failed", gpu.gpu_index, gpu.gpu_index,
                                         std::string(info.title), detail)},
                           gpu.gpu_index);
    } else {
      const nlohmann::json& payload = *outcome.payload;
      std::vector<Finding> findings = common_findings(std::string(info.title), gpu, payload);
      Judgement judgement = judge(gpu, payload);
      findings.insert(findings.end(), judgement.findings.begin(), judgement.findings.end());
      const bool contended = !gpu.other_processes.empty();
      if (contended) {
        std::string list;
        for (const std::string& p : gpu.other_processes) {
          list += (list.empty() ? "" : ", ") + p;
        }
        findings.push_back(make_finding("gpu.contention", gpu.gpu_index, gpu.gpu_index,
                                        gpu.other_processes.size(), list));
      }
      result = judgement.skipped ? skip_result(info, std::move(judgement.summary), gpu.gpu_index)
                                 : make_result(info, std::move(judgement.summary),
                                               std::move(findings), gpu.gpu_index);
      result.metrics = payload_metrics(payload, contended);
    }
    result.duration = outcome.elapsed;
    results.push_back(std::move(result));
  }
  return results;
}

std::optional<Judgement> judge_kernel_setup(const GpuTarget& gpu, const nlohmann::json& payload) {
  Judgement judgement;
  if (auto load = kernel_load_finding(gpu, payload)) {
    judgement.findings.push_back(std::move(*load));
    judgement.summary = fmt::format("GPU {}: gpucheck's kernels did not load", gpu.gpu_index);
    return judgement;
  }
  if (payload.contains("failure")) {
    judgement.summary = fmt::format("GPU {}: failed during {}", gpu.gpu_index,
                                    payload["failure"].value("stage", "setup"));
    return judgement;
  }
  return std::nullopt;
}

} // namespace gpucheck::checks
