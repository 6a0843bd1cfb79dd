#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>

#include "checks/active/judging.hpp"
#include "checks/driver/facts.hpp"
#include "checks/rules/expected_figures.hpp"
#include "engine/gpu_engine.hpp"
#include "findings/catalog.hpp"
#include "gpucheck/plural.hpp"
#include "process/child_process.hpp"
#include "protocol/payloads.hpp"

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
    target.uuid = gpu->uuid;
    target.compute_mode = gpu->compute_mode.value_or("");
    for (const GpuProcess& process : gpu->processes) {
      target.other_processes.push_back(process.name.empty()
                                           ? std::to_string(process.pid)
                                           : fmt::format("{} ({})", process.pid, process.name));
    }
  }
  target.fell_off_bus = log_says_fallen_off(snapshot, target.pci_bus_id);
  return target;
}

std::string failure_detail(const ChildFailure& failure) {
  std::string detail = failure.detail;
  if (failure.kind == ChildFailureKind::timeout) {
    detail = fmt::format("no result within {:g} s: the GPU work hung or is very slow",
                         failure.timeout_s);
  }
  if (!failure.stderr_tail.empty()) {
    detail += fmt::format("; its last output: {}", tail(failure.stderr_tail, k_stderr_shown));
  }
  return detail;
}

Finding unreadable_finding(std::string_view check_title, const GpuTarget& gpu, const Error& error) {
  return make_finding(codes::k_gpu_child_failed, gpu.gpu_index, gpu.gpu_index,
                      std::string(check_title),
                      fmt::format("it reported a result gpucheck cannot read: {}", error.message));
}

/// The kinds whose checks name their mismatches themselves: those added by
/// add_own_verify_kind() (gpu.memtest's, gpu.burn's).
std::vector<std::string_view>& own_verify_kinds() {
  static std::vector<std::string_view> kinds;
  return kinds;
}

/// The verification kinds of the checks of their own folders (add_verify_code()).
std::vector<std::pair<std::string_view, FindingCode>>& added_verify_codes() {
  static std::vector<std::pair<std::string_view, FindingCode>> codes;
  return codes;
}

/// The finding of a failed verification of `kind`; nullopt for a kind no check knows.
std::optional<FindingCode> verify_code(const std::string& kind) {
  for (const auto& [added, code] : added_verify_codes()) {
    if (added == kind) {
      return code;
    }
  }
  return std::nullopt;
}
} // namespace

void add_verify_code(std::string_view kind, FindingCode code) {
  added_verify_codes().emplace_back(kind, code);
}

void add_own_verify_kind(std::string_view kind) {
  own_verify_kinds().push_back(kind);
}

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
  process::ChildRequest request;
  request.mode = "gpu-devices";
  request.timeout = timeout;
  const process::ChildOutcome outcome = process::run_child(request);
  if (!outcome.ok()) {
    targets.skip_reason = fmt::format("listing CUDA devices failed: {}",
                                      outcome.failure ? outcome.failure->detail : "no result");
    return targets;
  }
  const Expected<protocol::DeviceListing> listing = protocol::read_device_listing(*outcome.payload);
  if (!listing) {
    targets.skip_reason = fmt::format("listing CUDA devices failed: its result cannot be read ({})",
                                      listing.error().message);
    return targets;
  }
  for (const protocol::ListedDevice& device : listing.value().devices) {
    targets.gpus.push_back(make_target(snapshot, device.ordinal, device.name, ""));
  }
  if (targets.gpus.empty()) {
    targets.skip_reason = listing.value().error
                              ? fmt::format("no CUDA driver: {}", *listing.value().error)
                              : fmt::format("no CUDA device (cuInit: {})",
                                            listing.value().init_name.value_or("not run"));
  }
  return targets;
}

std::vector<Metric> payload_metrics(const nlohmann::json& payload, bool contended) {
  return payload_metrics(protocol::read_envelope(payload), contended);
}

std::vector<Metric> payload_metrics(const ReadEnvelope& envelope, bool contended) {
  std::vector<Metric> metrics;
  if (!envelope) {
    return metrics;
  }
  for (const protocol::PayloadMetric& m : envelope.value().metrics) {
    Metric metric;
    metric.name = m.name;
    metric.value = m.value;
    metric.unit = m.unit;
    metric.note = m.note;
    if (contended) {
      metric.note +=
          metric.note.empty() ? "measured under contention" : "; measured under contention";
    }
    // The child's JSON holds names only: its labels, as for a report read back.
    metrics.push_back(labelled(std::move(metric)));
  }
  return metrics;
}

/// Why a GPU child's failure means the GPU stopped answering, or nullopt: CUDA says the device
/// is unavailable (46) where no compute mode makes it so (exclusive-process or prohibited: busy,
/// not lost), or the kernel log has the GPU falling off the bus and its context could not be
/// created (issue 35 item 2).
std::optional<std::string> lost_gpu_evidence(const GpuTarget& gpu,
                                             const protocol::PayloadFailure& failure) {
  constexpr int k_device_unavailable = 46;
  const bool unavailable =
      failure.code == k_device_unavailable || failure.name == "CUDA_ERROR_DEVICE_UNAVAILABLE";
  const bool mode_explains =
      gpu.compute_mode == "exclusive_process" || gpu.compute_mode == "prohibited";
  const bool opening = failure.stage == "driver" || failure.stage == "context";
  if (failure.call.empty() || !((unavailable && !mode_explains) || (gpu.fell_off_bus && opening))) {
    return std::nullopt;
  }
  std::string evidence =
      fmt::format("CUDA's {} returned {} ({}) during {}", failure.call,
                  failure.name.empty() ? std::string("an error") : failure.name, failure.code,
                  failure.stage.empty() ? std::string("setup") : failure.stage);
  if (!gpu.compute_mode.empty()) {
    evidence += fmt::format(" in compute mode {}", gpu.compute_mode);
  }
  if (!gpu.uuid.empty()) {
    evidence += fmt::format("; its UUID {}", gpu.uuid);
  }
  if (gpu.fell_off_bus) {
    evidence += "; the kernel log says it fell off the bus (Xid 79)";
  }
  return evidence;
}

std::vector<Finding> common_findings(const std::string& check_title, const GpuTarget& gpu,
                                     const nlohmann::json& payload) {
  return common_findings(check_title, gpu, protocol::read_envelope(payload));
}

std::vector<Finding> common_findings(const std::string& check_title, const GpuTarget& gpu,
                                     const ReadEnvelope& envelope) {
  std::vector<Finding> findings;
  const int index = gpu.gpu_index;
  if (!envelope) {
    findings.push_back(unreadable_finding(check_title, gpu, envelope.error()));
    return findings;
  }
  if (const auto& f = envelope.value().failure) {
    if (const std::optional<std::string> evidence = lost_gpu_evidence(gpu, *f)) {
      const std::string address =
          gpu.pci_bus_id.empty() ? std::string("an unknown PCI address") : gpu.pci_bus_id;
      findings.push_back(make_finding(codes::k_gpu_lost, index, index, address, *evidence));
    } else if (f->call.empty()) {
      findings.push_back(make_finding(codes::k_gpu_child_failed, index, index, check_title,
                                      fmt::format("{}: {}", f->stage, f->message)));
    } else if (f->stage == "driver" || f->stage == "context") {
      findings.push_back(
          make_finding(codes::k_gpu_context_failed, index, index, f->call, f->stage, f->message));
    } else {
      findings.push_back(make_finding(codes::k_gpu_cuda_call_failed, index, index, f->call,
                                      f->stage, f->name, f->text));
    }
  }
  for (const protocol::PayloadVerification& v : envelope.value().verify) {
    const std::vector<std::string_view>& own = own_verify_kinds();
    if (v.mismatches == 0 || std::find(own.begin(), own.end(), v.kind) != own.end()) {
      continue;
    }
    if (const std::optional<FindingCode> code = verify_code(v.kind)) {
      findings.push_back(make_finding(*code, index, index, v.what, v.mismatches, v.checked,
                                      v.first_index, v.got, v.want));
    } else {
      // Wrong results all the same, of a kind this gpucheck cannot name: never a pass.
      findings.push_back(
          make_finding(codes::k_gpu_child_failed, index, index, check_title,
                       fmt::format("{} of {} results of an unknown kind '{}' were wrong ({})",
                                   v.mismatches, v.checked, v.kind, v.what)));
    }
  }
  return findings;
}

bool all_verified(const nlohmann::json& payload) {
  const Expected<protocol::ChildEnvelope> envelope = protocol::read_envelope(payload);
  return envelope && all_verified(envelope.value());
}

bool all_verified(const protocol::ChildEnvelope& envelope) {
  return !envelope.verify.empty() &&
         std::all_of(envelope.verify.begin(), envelope.verify.end(),
                     [](const protocol::PayloadVerification& v) { return v.mismatches == 0; });
}

namespace {
std::string load_remedy(int code, const std::string& toolkit, int cc_major, int cc_minor) {
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

std::optional<Finding>
kernel_load_finding(const GpuTarget& gpu, const protocol::KernelModuleReport& module,
                    const std::optional<protocol::DeviceDescription>& device) {
  if (module.loaded) {
    return std::nullopt;
  }
  if (module.code == -2) {
    return make_finding(codes::k_gpu_kernels_not_built, gpu.gpu_index, gpu.gpu_index);
  }
  const int cc_major = device ? device->cc_major : 0;
  const int cc_minor = device ? device->cc_minor : 0;
  std::string image = module.image_name.empty() ? std::string() : module.image_name + ": ";
  for (size_t i = 0; i < module.image.size(); ++i) {
    image += (i == 0 ? "" : " ") + module.image[i];
  }
  if (module.attempts.size() > 1) {
    image += "; tried";
    for (const protocol::KernelLoadAttempt& attempt : module.attempts) {
      image += fmt::format(" {} ({})", attempt.image, attempt.name);
    }
  }
  const std::string& log = module.error_log.empty() ? module.info_log : module.error_log;
  return make_finding(codes::k_gpu_kernel_load_failed, gpu.gpu_index, gpu.gpu_index, gpu.name,
                      fmt::format("{}{}", cc_major, cc_minor), module.call, module.name,
                      module.text, image,
                      log.empty() ? std::string() : "; JIT log: " + tail(log, k_stderr_shown),
                      load_remedy(module.code, module.toolkit, cc_major, cc_minor));
}

Judgement unreadable_result(std::string_view check_title, const GpuTarget& gpu,
                            const Error& error) {
  Judgement judgement;
  judgement.findings.push_back(unreadable_finding(check_title, gpu, error));
  judgement.summary = fmt::format("GPU {}: its result cannot be read", gpu.gpu_index);
  return judgement;
}

namespace {
/// The call that ran out of device memory (building its context or allocating), if one did.
std::optional<std::string> out_of_memory_call(const ReadEnvelope& envelope) {
  if (!envelope || !envelope.value().failure ||
      envelope.value().failure->name != "CUDA_ERROR_OUT_OF_MEMORY") {
    return std::nullopt;
  }
  const std::string& call = envelope.value().failure->call;
  return call.empty() ? std::string("a CUDA call") : call;
}

/// Findings that compare a figure with a floor (a check's own such findings, gpu.bandwidth_low,
/// are labelled by its judge).
bool is_threshold_verdict(const std::string& code) {
  return code == codes::k_gpu_below_expected;
}

std::string memory_words(const engine::GpuReport& gpu) {
  constexpr uint64_t k_mib = 1ULL << 20;
  if (gpu.before && gpu.before->free_bytes) {
    return fmt::format("{} MiB of {} MiB free", *gpu.before->free_bytes / k_mib,
                       gpu.before->total_bytes.value_or(0) / k_mib);
  }
  return "free memory unknown";
}
} // namespace

namespace {
/// The GPU's other processes over the whole measurement (before any context and after the
/// timed work), as the findings name them.
std::vector<std::string> process_names(const std::vector<protocol::CensusProcess>& others) {
  std::vector<std::string> names;
  for (const protocol::CensusProcess& p : others) {
    names.push_back(p.name.empty() ? std::to_string(p.pid) : fmt::format("{} ({})", p.pid, p.name));
  }
  return names;
}

/// A GPU whose job never ran: stopped or a long work left out beside others (a skip that says
/// why), another run's turn or no memory to spare (a warning naming it); nullopt when it ran.
std::optional<CheckResult> not_run_result(const CheckInfo& info, const GpuTarget& gpu,
                                          const engine::JobView& view, const std::string& holders) {
  if (view.job.outcome) {
    return std::nullopt;
  }
  if (view.job.skip == engine::JobReport::Skip::stopped ||
      view.job.skip == engine::JobReport::Skip::busy) {
    return skip_result(info, view.job.skip_reason, gpu.gpu_index);
  }
  const bool other_run = view.job.skip == engine::JobReport::Skip::other_run;
  return make_result(
      info, fmt::format("GPU {}: not tested ({})", gpu.gpu_index, view.job.skip_reason),
      {other_run
           ? make_finding(codes::k_gpu_other_run, gpu.gpu_index, gpu.gpu_index,
                          view.job.skip_reason)
           : make_finding(codes::k_gpu_busy_not_tested, gpu.gpu_index, gpu.gpu_index,
                          fmt::format("{} ({})", view.job.skip_reason, memory_words(view.gpu)),
                          holders)},
      gpu.gpu_index);
}

/// A payload judged: the envelope's own findings, the amendment's, the judge's; threshold
/// verdicts made notes and contention named beside other processes; metrics with expectations.
CheckResult judged_result(const CheckInfo& info, const GpuTarget& gpu,
                          const nlohmann::json& payload, const ReadEnvelope& envelope,
                          std::vector<Finding> amended, const Judge& judge,
                          const std::string& holders) {
  std::vector<Finding> findings = common_findings(std::string(info.title), gpu, envelope);
  findings.insert(findings.end(), amended.begin(), amended.end());
  Judgement judgement = judge(gpu, payload);
  findings.insert(findings.end(), judgement.findings.begin(), judgement.findings.end());
  const bool contended = !gpu.other_processes.empty();
  if (contended) {
    // Threshold verdicts say what the GPU did beside others, not what it can do: notes.
    for (Finding& finding : findings) {
      if (is_threshold_verdict(finding.code) && finding.severity != Severity::info) {
        finding.severity = Severity::info;
        finding.message += " (measured under contention)";
      }
    }
    findings.push_back(make_finding(
        codes::k_gpu_contention, gpu.gpu_index, gpu.gpu_index,
        plural(gpu.other_processes.size(), "other process", "other processes"), holders));
  }
  CheckResult result =
      judgement.skipped
          ? skip_result(info, std::move(judgement.summary), gpu.gpu_index)
          : make_result(info, std::move(judgement.summary), std::move(findings), gpu.gpu_index);
  result.metrics = payload_metrics(envelope, contended);
  apply_sibling_bases(judgement, result.metrics);
  if (result.status != Status::skip) {
    std::optional<int> sm_count;
    if (const auto device = protocol::read_device(payload); device && device.value()) {
      sm_count = device.value()->sm_count;
    }
    add_expectations(gpu, result, contended, sm_count);
  }
  return result;
}

/// One GPU's job that ran: a failed child, out of memory beside other processes (contention,
/// not a broken GPU), or its payload judged.
CheckResult ran_result(const CheckInfo& info, size_t index, const GpuTarget& gpu,
                       const process::ChildOutcome& outcome, const engine::JobView& view,
                       const Judge& judge, const Amend& amend, const std::string& holders) {
  if (!outcome.ok()) {
    const std::string detail =
        outcome.failure ? failure_detail(*outcome.failure) : std::string("no result");
    return make_result(info, fmt::format("GPU {}: the check process failed", gpu.gpu_index),
                       {make_finding(codes::k_gpu_child_failed, gpu.gpu_index, gpu.gpu_index,
                                     std::string(info.title), detail)},
                       gpu.gpu_index);
  }
  nlohmann::json payload = *outcome.payload;
  std::vector<Finding> amended;
  if (amend) {
    amend(index, gpu, payload, amended);
  }
  // Read once: the judgement below and the common findings share it.
  const ReadEnvelope envelope = protocol::read_envelope(payload);
  if (const auto oom_call = out_of_memory_call(envelope);
      oom_call && !gpu.other_processes.empty()) {
    return make_result(
        info,
        fmt::format("GPU {}: not tested (out of memory beside other processes)", gpu.gpu_index),
        {make_finding(
            codes::k_gpu_busy_not_tested, gpu.gpu_index, gpu.gpu_index,
            fmt::format("{} ran out of device memory ({})", *oom_call, memory_words(view.gpu)),
            holders)},
        gpu.gpu_index);
  }
  return judged_result(info, gpu, payload, envelope, std::move(amended), judge, holders);
}
} // namespace

void apply_sibling_bases(const Judgement& judgement, std::vector<Metric>& metrics) {
  for (const auto& [name, basis] : judgement.sibling_bases) {
    for (Metric& metric : metrics) {
      if (metric.name == name) {
        metric.sibling_basis = basis;
      }
    }
  }
}

std::vector<CheckResult> run_per_gpu(const CheckInfo& info, const CheckContext& context,
                                     const Judge& judge, const Amend& amend) {
  const GpuTargets targets = gpu_targets(context.snapshot, context.options.timeout);
  if (targets.gpus.empty()) {
    if (context.gpu_engine != nullptr) {
      context.gpu_engine->cancel(); // started on the driver's list; nothing to test after all
    }
    return {skip_result(info, targets.skip_reason)};
  }
  const std::optional<engine::Work> work = engine::work_for_check(info.id);
  if (context.gpu_engine == nullptr || !work) {
    return {skip_result(info, "no GPU engine for this check")};
  }
  std::vector<engine::TargetKey> keys;
  for (const GpuTarget& gpu : targets.gpus) {
    keys.push_back({gpu.ordinal, gpu.pci_bus_id});
  }
  std::vector<CheckResult> results;
  for (size_t i = 0; i < targets.gpus.size(); ++i) {
    GpuTarget gpu = targets.gpus[i];
    const std::optional<engine::JobView> view = context.gpu_engine->result(*work, keys[i], keys);
    if (!view) {
      results.push_back(make_result(
          info, fmt::format("GPU {}: not scheduled", gpu.gpu_index),
          {make_finding(codes::k_gpu_child_failed, gpu.gpu_index, gpu.gpu_index,
                        std::string(info.title),
                        fmt::format("the GPU engine did not schedule CUDA device {} ({}): the "
                                    "driver's GPU list under /proc/driver/nvidia/gpus and CUDA "
                                    "disagree",
                                    gpu.ordinal, gpu.pci_bus_id))},
          gpu.gpu_index));
      continue;
    }
    const std::vector<protocol::CensusProcess> others = view->gpu.other_processes();
    gpu.other_processes = process_names(others);
    const std::string holders = others.empty() ? std::string("no other process listed")
                                               : protocol::describe_processes(others);
    if (std::optional<CheckResult> skipped = not_run_result(info, gpu, *view, holders)) {
      results.push_back(std::move(*skipped));
      continue;
    }
    const process::ChildOutcome& outcome = *view->job.outcome;
    CheckResult result = ran_result(info, i, gpu, outcome, *view, judge, amend, holders);
    result.duration = outcome.elapsed;
    results.push_back(std::move(result));
  }
  compare_siblings(results, targets.gpus);
  return results;
}

std::optional<Judgement> judge_child_setup(std::string_view check_title, const GpuTarget& gpu,
                                           const nlohmann::json& payload) {
  const Expected<protocol::ChildEnvelope> envelope = protocol::read_envelope(payload);
  if (!envelope) {
    return unreadable_result(check_title, gpu, envelope.error());
  }
  if (const auto& failure = envelope.value().failure) {
    Judgement judgement;
    judgement.summary = fmt::format("GPU {}: failed during {}", gpu.gpu_index,
                                    failure->stage.empty() ? std::string("setup") : failure->stage);
    return judgement;
  }
  return std::nullopt;
}

std::optional<Judgement> judge_kernel_setup(std::string_view check_title, const GpuTarget& gpu,
                                            const nlohmann::json& payload) {
  const Expected<protocol::ChildEnvelope> envelope = protocol::read_envelope(payload);
  if (!envelope) {
    // common_findings() has named the key already.
    Judgement judgement;
    judgement.summary = fmt::format("GPU {}: its result cannot be read", gpu.gpu_index);
    return judgement;
  }
  const auto module = protocol::read_kernel_module(payload);
  if (!module) {
    return unreadable_result(check_title, gpu, module.error());
  }
  const auto device = protocol::read_device(payload);
  if (!device) {
    return unreadable_result(check_title, gpu, device.error());
  }
  if (module.value() && module.value()->code == -3) {
    // None of gpucheck's images fits this driver and GPU (a GPU older than sm_50, a driver older
    // than CUDA 11): not the machine's fault; the checks that need no kernel of ours still run.
    Judgement judgement;
    judgement.skipped = true;
    judgement.summary = fmt::format("GPU {}: gpucheck's kernels cannot run here: {}", gpu.gpu_index,
                                    module.value()->reason);
    return judgement;
  }
  if (module.value()) {
    if (auto load = kernel_load_finding(gpu, *module.value(), device.value())) {
      Judgement judgement;
      judgement.findings.push_back(std::move(*load));
      judgement.summary = fmt::format("GPU {}: gpucheck's kernels did not load", gpu.gpu_index);
      return judgement;
    }
  }
  if (const auto& failure = envelope.value().failure) {
    Judgement judgement;
    judgement.summary = fmt::format("GPU {}: failed during {}", gpu.gpu_index, failure->stage);
    return judgement;
  }
  return std::nullopt;
}

namespace {
/// "0000:3b:00.0" for any spelling ("00000000:3B:00.0" too).
std::string span_bus_key(const std::string& bus) {
  std::string text = bus;
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const size_t colon = text.find(':');
  if (colon != std::string::npos && colon > 4) {
    text = text.substr(colon - 4);
  }
  return text;
}
} // namespace

namespace {
/// The GPU findings about the spanning work are on: the one its child ran its job on.
int span_anchor(const engine::SpanView& view, const GpuTargets& targets) {
  int anchor = targets.gpus.front().gpu_index;
  if (view.job.gpu < view.gpus.size()) {
    const std::string bus = span_bus_key(view.gpus[view.job.gpu].visible.gpu.bus_id);
    for (const GpuTarget& gpu : targets.gpus) {
      if (!bus.empty() && span_bus_key(gpu.pci_bus_id) == bus) {
        anchor = gpu.gpu_index;
      }
    }
  }
  return anchor;
}

/// Contention over the whole measurement, on every GPU of the run, each process once.
std::vector<protocol::CensusProcess> span_others(const engine::SpanView& view) {
  std::vector<protocol::CensusProcess> others;
  for (const engine::GpuReport& gpu : view.gpus) {
    for (const protocol::CensusProcess& p : gpu.other_processes()) {
      if (std::none_of(others.begin(), others.end(),
                       [&p](const protocol::CensusProcess& q) { return q.pid == p.pid; })) {
        others.push_back(p);
      }
    }
  }
  return others;
}

/// The spanning job that never ran: a skip that says why, or a warning naming another run or
/// the processes that left no room.
CheckResult span_not_run_result(const CheckInfo& info, const engine::SpanView& view, int anchor,
                                const std::string& holders) {
  if (view.job.skip == engine::JobReport::Skip::stopped ||
      view.job.skip == engine::JobReport::Skip::busy) {
    return skip_result(info, view.job.skip_reason);
  }
  if (view.job.skip == engine::JobReport::Skip::other_run) {
    return make_result(
        info, fmt::format("not tested ({})", view.job.skip_reason),
        {make_finding(codes::k_gpu_other_run, anchor, anchor, view.job.skip_reason)});
  }
  if (!view.job.skip_is_contention) {
    return skip_result(info, view.job.skip_reason);
  }
  return make_result(
      info, fmt::format("not tested ({})", view.job.skip_reason),
      {make_finding(codes::k_gpu_busy_not_tested, anchor, anchor, view.job.skip_reason, holders)});
}

/// The spanning job's payload judged, its figures expected of its GPUs' one model (none for a
/// mix of models).
CheckResult span_judged_result(const CheckInfo& info, const GpuTargets& targets, int anchor,
                               const nlohmann::json& payload, size_t other_count,
                               const std::string& holders, const SpanJudge& judge) {
  GpuTarget target = targets.gpus.front();
  target.gpu_index = anchor;
  const ReadEnvelope envelope = protocol::read_envelope(payload);
  std::vector<Finding> findings = common_findings(std::string(info.title), target, envelope);
  const bool contended = other_count > 0;
  std::vector<Metric> metrics = payload_metrics(envelope, contended);
  Judgement judgement = judge(payload, contended, metrics);
  findings.insert(findings.end(), judgement.findings.begin(), judgement.findings.end());
  if (contended) {
    findings.push_back(make_finding(codes::k_gpu_contention, anchor, anchor,
                                    plural(other_count, "other process", "other processes"),
                                    holders));
  }
  CheckResult result = judgement.skipped && findings.empty()
                           ? skip_result(info, std::move(judgement.summary))
                           : make_result(info, std::move(judgement.summary), std::move(findings));
  result.metrics = std::move(metrics);
  const bool one_model =
      std::all_of(targets.gpus.begin(), targets.gpus.end(),
                  [&target](const GpuTarget& gpu) { return gpu.name == target.name; });
  if (one_model && result.status != Status::skip) {
    add_expectations(target, result, contended);
  }
  return result;
}
} // namespace

std::vector<CheckResult> run_spanning(const CheckInfo& info, const CheckContext& context,
                                      const SpanJudge& judge) {
  const GpuTargets targets = gpu_targets(context.snapshot, context.options.timeout);
  if (targets.gpus.size() < 2) {
    return {skip_result(info, targets.gpus.empty() ? targets.skip_reason
                                                   : "one GPU: nothing between GPUs to test")};
  }
  if (context.gpu_engine == nullptr) {
    return {skip_result(info, "no GPU engine for this check")};
  }
  std::vector<engine::TargetKey> keys;
  for (const GpuTarget& gpu : targets.gpus) {
    keys.push_back({gpu.ordinal, gpu.pci_bus_id});
  }
  const std::optional<engine::Work> work = engine::work_for_check(info.id);
  const std::optional<engine::SpanView> view =
      work ? context.gpu_engine->spanning_result(*work, keys) : std::nullopt;
  if (!view) {
    return {skip_result(info, "the GPU engine planned no work over several GPUs")};
  }
  const int anchor = span_anchor(*view, targets);
  const std::vector<protocol::CensusProcess> others = span_others(*view);
  const std::string holders = others.empty() ? std::string("no other process listed")
                                             : protocol::describe_processes(others);
  if (!view->job.outcome) {
    return {span_not_run_result(info, *view, anchor, holders)};
  }
  const process::ChildOutcome& outcome = *view->job.outcome;
  CheckResult result;
  if (!outcome.ok()) {
    const std::string detail = outcome.failure ? outcome.failure->detail : std::string("no result");
    result = make_result(
        info, "the check process failed",
        {make_finding(codes::k_gpu_child_failed, anchor, anchor, std::string(info.title), detail)});
  } else {
    result =
        span_judged_result(info, targets, anchor, *outcome.payload, others.size(), holders, judge);
  }
  result.duration = outcome.elapsed;
  return {result};
}

} // namespace gpucheck::checks
