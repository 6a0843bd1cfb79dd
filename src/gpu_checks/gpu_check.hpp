#pragma once
/// A GPU check of its own folder (docs/architecture.md, "Adding a GPU check"): its child-side
/// work, its typed payload, its judge, its findings, metrics and verifications, described once
/// by a GpuCheck and made known to every part of gpucheck by one line of registry.hpp.
///
/// The work fills an Output<Payload>; the payload is written to the child's JSON and read back
/// for the judge by the same declaration of its fields (NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE in
/// the check's header), so a renamed field fails to compile, not a GPU test.

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "checks/active/judging.hpp"
#include "checks/rules/expected_figures.hpp"
#include "engine/gpu_engine.hpp"
#include "engine/plan.hpp"
#include "findings/catalog.hpp"
#include "gpucheck/check.hpp"
#include "gpucheck/expected.hpp"
#include "gpucheck/registry.hpp"
#include "protocol/payloads.hpp"

namespace gpucheck::gpu {
class DeviceSession;
class KernelModule;
struct LaneSteps;  // gpu/work_lane.hpp
class PeerSession; // gpu/peer_session.hpp
struct SpanStep;   // gpu/gpu_children.hpp
} // namespace gpucheck::gpu

namespace gpucheck::gpu_checks {

/// What a check's child work hands back: its own fields, its metrics and its verifications.
/// Written to the child's JSON even when the work throws, so what it measured before stays.
template <typename Payload> struct Output {
  Payload payload;
  std::vector<protocol::PayloadMetric> metrics;
  std::vector<protocol::PayloadVerification> verify;
  /// The device as the work saw it once its gate opened (its budget then); unset: as the child
  /// described it before the work.
  std::optional<protocol::DeviceDescription> device;
};

/// A metric the check reports: its name (as --min and Prometheus know it), its unit, and what
/// it should reach on a GPU model the datasheet table knows (checks/rules/expected_figures.hpp;
/// no figure: none), identical GPUs of a run compared on it or not.
struct MetricSpec {
  std::string_view name;
  std::string_view unit;
  checks::DatasheetFloor floor{};
};

/// A verification kind of the check and the finding a mismatch of it gives (nullopt: the
/// check's own judge names a mismatch in full, and no common finding is made of it).
struct VerifySpec {
  std::string_view kind;
  std::optional<FindingCode> code;
};

/// What a GPU child reports besides its check's payload, read once for the judge: its envelope
/// (failure, verifications, metrics), the kernel module it loaded and the device it worked on.
struct ChildReport {
  protocol::ChildEnvelope envelope;
  std::optional<protocol::KernelModuleReport> module;
  std::optional<protocol::DeviceDescription> device;
};

/// A lane's work on the shared child's session and kernels (gpu::LaneWork, gpu/work_lane.hpp,
/// which this header does not include).
using LaneWork = void (*)(gpu::DeviceSession& session, const gpu::KernelModule& module,
                          nlohmann::json& out, const gpu::LaneSteps& steps);
/// A check's own child mode, given the arguments after the mode.
using OwnChild = nlohmann::json (*)(const std::vector<std::string>& args);

/// Where reports list a check among the active ones (gpucheck/registry.hpp).
using Listed = CheckPlace;

/// A work of the GPU children on its JSON line (gpu::GpuWork, gpu/gpu_children.hpp, which this
/// header does not include).
using GpuWork = void (*)(gpu::DeviceSession& session, const gpu::KernelModule& module,
                         nlohmann::json& out);

/// A further work of a check, after its first in the same child and judged with it (gpu.bandwidth's
/// copies on every GPU at once and its device-local copy): its row's name, copy rule and memory
/// (protocol::WorkRow), and how it runs (typed_work<>() of its own payload).
struct WorkPart {
  std::string_view work;
  protocol::Copies copies = protocol::Copies::none;
  uint64_t min_mib = 0;
  uint64_t wanted_mib = 0;
  uint64_t prepare_mib = 0;
  GpuWork run = nullptr;
  bool on_kept = false; ///< it runs on what the work before it kept (GpuCheck::release_kept)
};

/// Before a GPU's child JSON is judged: what a check's further parts add to it, with a finding
/// for a part's own failure (`keys`: every GPU of the run, as the engine knows them).
using Fold = void (*)(const CheckContext& context, const std::vector<engine::TargetKey>& keys,
                      size_t index, const checks::GpuTarget& gpu, nlohmann::json& json,
                      std::vector<Finding>& findings);

/// One GPU check, whole. Its work runs in each GPU's shared child (engine::WorkChild::shared)
/// in the registry's order, before the works that copy (`copies`: after them, gpu.bandwidth's),
/// or in the long level's child (the memory test, then the burn), in the registry's order; its
/// child mode runs it alone.
template <typename Payload> struct GpuCheck {
  using payload_type = Payload;
  CheckInfo info;        ///< id, title, description; kind active
  std::string_view work; ///< its name in the shared child's work list and result lines
  std::string_view mode; ///< the child mode that runs it alone ("gpu-...")
  /// Device memory (MiB) as engine::MemoryModel counts it: the least it runs with, what it
  /// uses when it can, what it holds before its gate.
  uint64_t min_mib = 0;
  uint64_t wanted_mib = 0;
  uint64_t prepare_mib = 0;
  bool needs_kernels = false; ///< it launches gpucheck's kernels
  void (*run)(gpu::DeviceSession& session, const gpu::KernelModule& module,
              Output<Payload>& out) = nullptr;
  /// The check's own findings and summary from a payload whose child got to its work, with the
  /// rest of its report (its failures, verifications and metrics are judged in common).
  checks::Judgement (*judge)(const checks::GpuTarget& gpu, const Payload& payload,
                             const ChildReport& child) = nullptr;
  std::span<const FindingSpec> findings;
  std::span<const MetricSpec> metrics;
  std::span<const VerifySpec> verify;
  /// What the check adds to the judgement of a child that did not get to its work (its kernels
  /// did not load, a stage failed), from what of its report could be read; nullptr: nothing.
  void (*amend_setup)(const checks::GpuTarget& gpu, const ChildReport& child,
                      checks::Judgement& setup) = nullptr;
  Listed listed = Listed::after_builtin;
  protocol::WorkChild child = protocol::WorkChild::shared; ///< or long_level
  bool alone = false; ///< gpu::WorkRunner::alone: nothing of cuDNN's lane beside its timed work
  std::string_view phase = {}; ///< a long-level work: the progress line's name for it
  bool together = false;       ///< WorkRow::together: every GPU's timed work starts in one step
  /// After every GPU's result is judged: what comparing the GPUs of the run adds to each result
  /// (the burn's siblings and references); nullptr: nothing.
  void (*compare)(std::vector<CheckResult>& results, const CheckContext& context) = nullptr;
  /// A lane's work (cuDNN's; `run` is then nullptr): in its GPU's shared child it prepares on a
  /// thread of its own from the start and comes last (gpu/work_lane.hpp). It writes its payload
  /// into its line itself.
  LaneWork lane = nullptr;
  std::string_view lane_name = {}; ///< what messages call the lane ("cuDNN")
  int connections = 1;             ///< the hardware queues its context needs
  /// Its own child mode (`mode`) where it takes more than an ordinal (gpu-cudnn's "full");
  /// nullptr: a session, the kernels and `run`.
  OwnChild own_child = nullptr;
  /// What the engine's copy rules know of its work (gpu.bandwidth's host copies).
  protocol::Copies copies = protocol::Copies::none;
  /// Its further works, after its own in the same child, in order (gpu.bandwidth's); each is a
  /// job of the plan, and its outcome is the check's to read (`fold`, `compare`).
  std::span<const WorkPart> parts = {};
  /// Frees what its work kept for the part after it (gpu::WorkRunner::release_kept).
  void (*release_kept)() = nullptr;
  /// What its parts add to a GPU's result before it is judged; nullptr: nothing.
  Fold fold = nullptr;
  /// A kernel module that did not load ends its judgement (checks::judge_kernel_setup); false:
  /// the check judges what its work measured without gpucheck's kernels (the copies, ungated).
  bool judged_on_kernels = true;
};

/// A work of the child over every GPU on its JSON line (gpu::SpanRunner::run,
/// gpu/gpu_children.hpp).
using SpanWork = void (*)(gpu::PeerSession& session, const gpu::SpanStep& step,
                          nlohmann::json& out);
/// The judge of a spanning work's JSON: its findings and summary, its metrics appended.
using SpanJudge = checks::Judgement (*)(const SystemSnapshot& snapshot, const nlohmann::json& json,
                                        bool contended, std::vector<Metric>& metrics);

/// A GPU check whose work runs in the child over every GPU of the run (gpu.p2p, gpu.nccl), in
/// the registry's order, once every other job on its GPUs has gone: one result per run, a skip
/// with one GPU. Its envelope's failures, verifications and metrics are judged in common
/// (checks::run_spanning).
template <typename Payload> struct SpanCheck {
  using payload_type = Payload;
  CheckInfo info;        ///< id, title, description; kind active
  std::string_view work; ///< its name in the child's work list and result lines
  /// Device memory (MiB) per GPU, as GpuCheck's.
  uint64_t min_mib = 0;
  uint64_t wanted_mib = 0;
  uint64_t prepare_mib = 0;
  void (*run)(gpu::PeerSession& session, const gpu::SpanStep& step, Output<Payload>& out) = nullptr;
  checks::Judgement (*judge)(const SystemSnapshot& snapshot, const Payload& payload, bool contended,
                             std::vector<Metric>& metrics) = nullptr;
  /// A key its payload has once its work got under way: a result with a failure and without it
  /// stopped before that (no driver, no context), which `stopped` says and its failure names.
  std::string_view first_key;
  std::string_view stopped;
  std::span<const FindingSpec> findings;
  std::span<const MetricSpec> metrics;
  std::span<const VerifySpec> verify;
  void (*load)() = nullptr;                             ///< gpu::SpanRunner::load
  void (*prepare)(gpu::PeerSession& session) = nullptr; ///< gpu::SpanRunner::prepare
  /// It takes memory beyond gpucheck's budget (WorkRow::beyond_budget: NCCL's buffers).
  bool beyond_budget = false;
};

/// A GpuCheck or a SpanCheck with its types erased: what registry.cpp installs.
struct Registration {
  CheckDef check; ///< its findings among them
  /// Its judge as the runner calls it, on the child's JSON (for the fuzz targets too).
  checks::Judgement (*judge)(const checks::GpuTarget& gpu, const nlohmann::json& json) = nullptr;
  engine::WorkRow work;
  /// How its child runs it (gpu::WorkRunner's fields).
  GpuWork run = nullptr;
  bool needs_kernels = false;
  std::span<const MetricSpec> metrics;
  std::span<const VerifySpec> verify;
  Listed listed = Listed::after_builtin;
  bool alone = false;
  LaneWork lane = nullptr;
  int connections = 1;
  OwnChild own_child = nullptr;
  std::span<const WorkPart> parts;
  void (*release_kept)() = nullptr;
  /// A SpanCheck's (its row's child is spanning; `judge` and `run` are then nullptr).
  SpanWork span_run = nullptr;
  SpanJudge span_judge = nullptr;
  void (*span_load)() = nullptr;
  void (*span_prepare)(gpu::PeerSession& session) = nullptr;
};

/// The metrics and verifications of `out` written into a child's JSON.
template <typename Payload>
void write_measurements(const Output<Payload>& out, nlohmann::json& json) {
  for (const protocol::PayloadMetric& m : out.metrics) {
    json["metrics"].push_back(protocol::to_json(m));
  }
  for (const protocol::PayloadVerification& v : out.verify) {
    json["verify"].push_back(protocol::to_json(v));
  }
}

/// Why a payload's field could not be read, in the words of the other payloads' readers
/// ("least is missing") where json names the key.
Error payload_error(const nlohmann::json::exception& e);

/// The report of a child's JSON besides its payload, or why it cannot be read.
Expected<ChildReport> read_child_report(const nlohmann::json& json);
/// What of that report can be read (an unreadable part left empty), for amend_setup.
ChildReport readable_child_report(const nlohmann::json& json);

/// The payload of a child's JSON, or why it cannot be read (a missing or mistyped field).
template <typename Payload> Expected<Payload> read_payload(const nlohmann::json& json) {
  try {
    return json.get<Payload>();
  } catch (const nlohmann::json::exception& e) {
    return payload_error(e);
  }
}

/// How a payload goes into a child's JSON and back: from the declaration of its fields
/// (NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE), unless its type specialises PayloadCodec with its own
/// writer and reader (the memtest's and the burn's, from protocol/payloads.hpp). A type, not a
/// GpuCheck field: the choice is made while compiling, under every compiler's flags.
template <typename Payload> struct PayloadCodec {
  static void write(const Payload& payload, nlohmann::json& json) {
    json.update(nlohmann::json(payload));
  }
  static Expected<Payload> read(const nlohmann::json& json) { return read_payload<Payload>(json); }
};

/// A PayloadCodec made of a payload's own writer and reader (protocol/payloads.hpp's, for a
/// payload older than its check's folder): `template <> struct PayloadCodec<P> :
/// CodecOf<P, &write_p, &read_p> {};`.
template <typename Payload, void (*Write)(const Payload&, nlohmann::json&),
          Expected<Payload> (*Read)(const nlohmann::json&)>
struct CodecOf {
  static void write(const Payload& payload, nlohmann::json& json) { Write(payload, json); }
  static Expected<Payload> read(const nlohmann::json& json) { return Read(json); }
};

namespace detail {
template <const auto& Check>
using PayloadOf = typename std::remove_cvref_t<decltype(Check)>::payload_type;

} // namespace detail

/// The payload (through its PayloadCodec), metrics, verifications and device of `out` written
/// into a child's JSON line.
template <typename Payload> void write_output(const Output<Payload>& out, nlohmann::json& json) {
  PayloadCodec<Payload>::write(out.payload, json);
  write_measurements(out, json);
  if (out.device) {
    json["device"] = protocol::to_json(*out.device);
  }
}

/// `run` on an Output written into `json` even when it throws, so what it measured before stays.
template <typename Payload, typename Run> void run_writing(const Run& run, nlohmann::json& json) {
  Output<Payload> out;
  try {
    run(out);
  } catch (...) {
    write_output(out, json);
    throw;
  }
  write_output(out, json);
}

/// A typed work of a GPU's child on its JSON line.
template <typename Payload>
void run_typed(void (*run)(gpu::DeviceSession&, const gpu::KernelModule&, Output<Payload>&),
               gpu::DeviceSession& session, const gpu::KernelModule& module, nlohmann::json& json) {
  run_writing<Payload>([&](Output<Payload>& out) { run(session, module, out); }, json);
}

/// A typed work as a work of the children (a WorkPart's `run`).
template <typename Payload,
          void (*Run)(gpu::DeviceSession&, const gpu::KernelModule&, Output<Payload>&)>
void typed_work(gpu::DeviceSession& session, const gpu::KernelModule& module,
                nlohmann::json& json) {
  run_typed<Payload>(Run, session, module, json);
}

namespace detail {
template <const auto& Check>
void child_work(gpu::DeviceSession& session, const gpu::KernelModule& module,
                nlohmann::json& json) {
  run_typed<PayloadOf<Check>>(Check.run, session, module, json);
}

template <const auto& Check>
Expected<PayloadOf<Check>> read_payload_of(const nlohmann::json& json) {
  return PayloadCodec<PayloadOf<Check>>::read(json);
}

template <const auto& Check>
checks::Judgement judge_json(const checks::GpuTarget& gpu, const nlohmann::json& json) {
  if (std::optional<checks::Judgement> setup =
          Check.judged_on_kernels ? checks::judge_kernel_setup(Check.info.title, gpu, json)
                                  : checks::judge_child_setup(Check.info.title, gpu, json)) {
    if (Check.amend_setup != nullptr) {
      Check.amend_setup(gpu, readable_child_report(json), *setup);
    }
    return std::move(*setup);
  }
  const Expected<PayloadOf<Check>> payload = read_payload_of<Check>(json);
  if (!payload) {
    return checks::unreadable_result(Check.info.title, gpu, payload.error());
  }
  const Expected<ChildReport> child = read_child_report(json);
  if (!child) {
    return checks::unreadable_result(Check.info.title, gpu, child.error());
  }
  return Check.judge(gpu, payload.value(), child.value());
}

template <const auto& Check> std::vector<CheckResult> run_check(const CheckContext& context) {
  checks::Amend fold;
  if (Check.fold != nullptr) {
    // The GPUs' keys once a GPU's result is there to fold into (the targets are known by then).
    fold = [&context, keys = std::optional<std::vector<engine::TargetKey>>()](
               size_t index, const checks::GpuTarget& gpu, nlohmann::json& json,
               std::vector<Finding>& findings) mutable {
      if (!keys) {
        keys.emplace();
        for (const checks::GpuTarget& target :
             checks::gpu_targets(context.snapshot, context.options.timeout).gpus) {
          keys->push_back({target.ordinal, target.pci_bus_id});
        }
      }
      Check.fold(context, *keys, index, gpu, json, findings);
    };
  }
  std::vector<CheckResult> results =
      checks::run_per_gpu(Check.info, context, &judge_json<Check>, fold);
  // Tested when it runs: a function's address is no constant expression under UBSan's GCC.
  if (Check.compare != nullptr) {
    Check.compare(results, context);
  }
  return results;
}

template <const auto& Check> std::span<const FindingSpec> findings_of() {
  return Check.findings;
}
} // namespace detail

/// The registration of a check (its folder's `<name>_registration()`, registry.hpp).
template <const auto& Check> Registration registration() {
  Registration r;
  r.check = {Check.info, &detail::run_check<Check>, &detail::findings_of<Check>};
  r.work = {engine::Work{}, Check.work,     Check.info.id,    Check.mode,
            Check.child,    Check.min_mib,  Check.wanted_mib, Check.prepare_mib,
            Check.phase,    Check.together, Check.lane_name,  Check.copies};
  r.judge = &detail::judge_json<Check>;
  // Compared at run time: a function's address is no constant expression under UBSan's GCC.
  r.run = Check.run != nullptr ? &detail::child_work<Check> : nullptr;
  r.lane = Check.lane;
  r.connections = Check.connections;
  r.own_child = Check.own_child;
  r.needs_kernels = Check.needs_kernels;
  r.metrics = Check.metrics;
  r.verify = Check.verify;
  r.listed = Check.listed;
  r.alone = Check.alone;
  r.parts = Check.parts;
  r.release_kept = Check.release_kept;
  return r;
}

namespace detail {
template <const auto& Check>
void span_work(gpu::PeerSession& session, const gpu::SpanStep& step, nlohmann::json& json) {
  run_writing<PayloadOf<Check>>(
      [&](Output<PayloadOf<Check>>& out) { Check.run(session, step, out); }, json);
}

template <const auto& Check>
checks::Judgement span_judge(const SystemSnapshot& snapshot, const nlohmann::json& json,
                             bool contended, std::vector<Metric>& metrics) {
  const Expected<PayloadOf<Check>> payload = read_payload_of<Check>(json);
  if (!payload) {
    if (json.is_object() && json.contains("failure") &&
        !json.contains(std::string(Check.first_key))) {
      checks::Judgement stopped;
      stopped.summary = std::string(Check.stopped);
      return stopped;
    }
    return checks::unreadable_result(Check.info.title, checks::GpuTarget{}, payload.error());
  }
  return Check.judge(snapshot, payload.value(), contended, metrics);
}

template <const auto& Check> std::vector<CheckResult> run_span_check(const CheckContext& context) {
  return checks::run_spanning(
      Check.info, context,
      [&context](const nlohmann::json& payload, bool contended, std::vector<Metric>& metrics) {
        return span_judge<Check>(context.snapshot, payload, contended, metrics);
      });
}
} // namespace detail

/// The registration of a check over every GPU (its folder's `<name>_registration()`).
template <const auto& Check> Registration span_registration() {
  Registration r;
  r.check = {Check.info, &detail::run_span_check<Check>, &detail::findings_of<Check>};
  r.work = {engine::Work{}, Check.work,       Check.info.id,    {}, protocol::WorkChild::spanning,
            Check.min_mib,  Check.wanted_mib, Check.prepare_mib};
  r.work.beyond_budget = Check.beyond_budget;
  r.metrics = Check.metrics;
  r.verify = Check.verify;
  r.span_run = &detail::span_work<Check>;
  r.span_judge = &detail::span_judge<Check>;
  r.span_load = Check.load;
  r.span_prepare = Check.prepare;
  r.listed = Listed::over_gpus;
  return r;
}

} // namespace gpucheck::gpu_checks
