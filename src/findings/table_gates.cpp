#include "findings/tables.hpp"

namespace gpucheck {

// Findings of the CI gates (src/gates/, docs/ci.md). Sorted by code; arguments are positional, and
// where(...) says what each stands for. A gate finding always fails its gate: the gate was asked
// for.
namespace {
constexpr FindingSpec k_table[] = {
    {codes::k_gate_gpu_count_mismatch, Severity::fail, "Not the expected number of GPUs",
     "--expect-gpus names how many GPUs this machine must show; gpucheck found another number. "
     "Usual causes: a GPU fell off the bus (Xid 79), is not bound to the nvidia driver, is hidden "
     "by CUDA_VISIBLE_DEVICES, or the job landed on another kind of node.",
     "found {0} GPUs, expected {1} ({2})",
     "compare `lspci -d 10de: -nn` with `nvidia-smi -L`, look for Xid errors in `dmesg`, check "
     "CUDA_VISIBLE_DEVICES and the job's GPU request; if the machine changed on purpose, set "
     "--expect-gpus {0}",
     where("GPUs found (CUDA's count, else NVML's)", "GPUs expected (--expect-gpus)",
           "what CUDA and NVML each report"),
     Drain::yes},
    {codes::k_gate_metric_below_minimum, Severity::fail, "Measured value below its --min",
     "A check measured a value below the minimum a --min gate sets for it.",
     "{0} {1} < {2}{3} ({4})",
     "see why {4} measured less than expected (its own findings, `gpucheck --only {4} -v`); if "
     "the minimum is too strict for this machine, lower --min {0}=...",
     where("metric named by --min", "value measured", "minimum required", "\" on GPU N\", or empty",
           "check that measured it")},
    {codes::k_gate_metric_not_measured, Severity::fail, "Gated metric not measured",
     "A --min gate names a metric that its check measures on other GPUs but did not measure on "
     "this one: the check failed, errored or was skipped there.",
     "{0} was not measured{1}: {2} {3}: {4}",
     "fix what stops {2} on that GPU (its result above says what), then rerun",
     where("metric named by --min", "\" on GPU N\", or empty", "check that measures it",
           "that check's status", "that check's summary")},
    {codes::k_gate_requirement_not_met, Severity::fail, "Version requirement not met",
     "A --require gate names a version range for a driver, library, toolkit or compute "
     "capability, and the one found here is outside it.",
     "{0} {1} {2} required {3}{4}", "install a {0} that meets {5}, or change the --require gate",
     where("component required (driver, cuda, cudart, cudnn, ...)", "version found",
           "the comparison that holds instead (\"<\" for a \">=\" requirement)", "version required",
           "\" on GPU N (name)\" for a per-GPU requirement, or empty",
           "the --require gate as written")},
    {codes::k_gate_requirement_unknown, Severity::fail, "Version for a requirement not found",
     "A --require gate names a component whose version gpucheck could not find on this machine "
     "(not installed, not loadable, or its probe failed), so the requirement cannot be met.",
     "{0} version unknown ({1}); required {2}",
     "install the {0} that meets {2} and make it loadable (gpucheck -v shows where gpucheck "
     "looked), or drop the --require gate",
     where("component required (driver, cuda, cudnn, ...)", "why its version is unknown",
           "the --require gate as written")},
    {codes::k_gate_warnings_present, Severity::fail, "Warnings with --fail-on warn",
     "--fail-on warn turns every warning into a failure of the run, and some checks warned.",
     "{0} with --fail-on warn: {1}",
     "fix what the warnings say (each carries its own remedy), or mark an accepted one with "
     "--ignore CODE",
     where("how many results warned (\"2 results warned\")",
           "the results that warned (\"gpu.pcie [GPU 2], ...\")")},
};
} // namespace

std::span<const FindingSpec> findings_gates() {
  return k_table;
}

} // namespace gpucheck
