#pragma once
/// What every GPU child does around its work: run_gpu_child() (the entry: the ordinal, the
/// failure of whatever threw, the peak resident memory), the stage it is at and its timeline,
/// the JSON conventions of its result, and the switches the GPU tests and the long level set.
///
/// Child JSON: {"device": {...}, "failure": {...}?, "metrics": [{name, value, unit, note}],
///              "verify": [{kind, what, checked, mismatches, first_index, got, want}], ...}
#include <nlohmann/json.hpp>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/payloads.hpp"

namespace gpucheck::gpu {

/// What the child was doing when it failed ("context", "load kernels", "h2d copy", ...). The
/// timeline belongs to the child's main thread: a helper thread calls stages_off_on_this_thread()
/// and its set_stage() calls are ignored; a lane (a work prepared on a thread of its own beside
/// the main thread's works: cuDNN's in the shared child) calls own_stages_on_this_thread() and
/// keeps a stage of its own, written into the timeline under its name.
void set_stage(std::string stage);
const std::string& current_stage();
void stages_off_on_this_thread();
void own_stages_on_this_thread(std::string lane);
/// The child's stage timeline so far (`timeline_ms`, `timeline_rss_mib`), which GPUCHECK_TRACE
/// prints on the parent's clock; written into a child's last result.
void write_timeline(nlohmann::json& out);

/// The value of GPUCHECK_PLANT_FAULT ("compute", "copy", "cudnn", "graph"), for the GPU tests:
/// the child then corrupts one output element on purpose and the check must fail.
bool fault_planted(std::string_view what);

/// Each timed part of the long level (memory test, burn): GPUCHECK_LONG_DURATION_MS, which the
/// engine sets from --duration; 10 s for a child run by hand.
std::chrono::milliseconds long_level_duration();

/// This process's resident memory now, MiB (/proc/self/statm).
double resident_mib();

/// A metric entry for the child JSON.
nlohmann::json metric(std::string name, double value, std::string unit, std::string note = {});

/// A verification entry (protocol/payloads.hpp): `kind` ("compute", "copy", "cudnn_conv", ...),
/// `what` it covered; written with protocol::to_json().
using Verification = protocol::PayloadVerification;

/// Run `body` for the device named by args[0] and return its JSON; a CudaCallError or another
/// exception becomes {"failure": {"stage", "call", "code", "name", "text"}} next to whatever
/// `body` had already written into `out`. Peak host RSS is added as a metric.
nlohmann::json run_gpu_child(const std::vector<std::string>& args,
                             const std::function<void(int ordinal, nlohmann::json& out)>& body);

/// Run `body`; what it threw, as the failure a child reports (nullopt when it returned).
std::optional<protocol::PayloadFailure> failure_of(const std::function<void()>& body);

/// The child's peak resident memory so far, as a metric (host_peak_rss_mib).
nlohmann::json peak_rss_metric();

} // namespace gpucheck::gpu
