#include "findings/tables.hpp"

namespace gpucheck {

// Findings the active GPU checks share (src/checks/active/common.cpp). Arguments are positional;
// each check file builds them from its child's JSON. {0} is always the GPU index when there is one.
namespace {
// What recurring arguments stand for (FindingSpec::placeholders).

constexpr FindingSpec k_table[] = {
    {codes::k_gpu_below_expected, Severity::warn, "a figure is below what this GPU model does",
     "A figure gpucheck measured is below the floor expected of this GPU model: a fraction of "
     "the figure in NVIDIA's datasheet, chosen from healthy GPUs of the model with a margin "
     "(docs/checks.md, \"Expected figures\"). A healthy GPU of the model does not fall there; "
     "a clock or power cap, a degraded memory or link, or another load on the GPU does.",
     "GPU {0} ({1}): {2} = {3} {4} is below the {5} {4} expected of this model ({6})",
     "compare with this GPU's siblings and with nvidia-smi -q -d CLOCK,PERFORMANCE,POWER (clocks "
     "held low, a power cap, clock-event reasons); check for other processes on the GPU; if it "
     "stays low when idle, run the long level (gpucheck --level long) and ask the vendor",
     where(k_where_gpu_index, "GPU model (name)", "the figure (metric name)", "its value",
           "its unit", "the floor",
           "where the floor comes from (fraction of the datasheet figure, source)")},
    {codes::k_gpu_busy_not_tested, Severity::warn, "GPU too busy to test",
     "Other processes hold so much of this GPU's memory that gpucheck's active checks, which stay "
     "within min(1 GiB, 10% of the free memory) contexts included, would not fit, or ran out of "
     "memory beside them. The GPU was not tested; nothing says it is faulty.",
     "GPU {0}: not tested: {1}; holding its memory: {2}",
     "nothing is wrong with the GPU; to test it, run gpucheck when those processes have ended "
     "(nvidia-smi lists them), or drain the node first",
     where(k_where_gpu_index, "why it was not tested (and the GPU's memory in use)",
           "the processes holding its memory")},
    {codes::k_gpu_child_failed, Severity::fail, "GPU check process failed",
     "The isolated process that ran this check's GPU work crashed, hung past its deadline or "
     "exited without a result. A hang usually means the GPU stopped responding.",
     "{1} on GPU {0}: {2}",
     "read driver.kernel_log's Xid findings (the kernel log since boot); if the GPU is merely slow "
     "or busy, "
     "raise the deadline with --timeout SECONDS",
     where(k_where_gpu_index, "the check (its title) or the work that failed",
           "what went wrong (deadline, crash, unreadable result) and the child's last output")},
    {codes::k_gpu_contention, Severity::info, "GPU shared with other processes",
     "Other processes were using this GPU while gpucheck measured, so its figures are lower "
     "than the GPU can do. gpucheck stays within min(1 GiB, 10% of free memory) and disturbs "
     "nothing of theirs.",
     "GPU {0} is used by {1} ({2}): figures were measured under contention",
     "nothing is wrong; for figures without contention run gpucheck again when the GPU is idle "
     "(nvidia-smi shows its processes)",
     where(k_where_gpu_index, "how many other processes use the GPU (\"2 other processes\")",
           "those processes")},
    {codes::k_gpu_context_failed, Severity::fail, "cannot use the GPU",
     "The CUDA driver could not be opened, initialised or create a context on this GPU.",
     "GPU {0}: {1} failed during {2}: {3}",
     "see the cuda.* findings for the driver; a GPU in exclusive-process mode used by another "
     "process, or one that fell off the bus (Xid 79), also fails here",
     where(k_where_gpu_index, "the CUDA call that failed", "the stage of the check it failed in",
           "the error")},
    {codes::k_gpu_cuda_call_failed, Severity::fail, "CUDA call failed during GPU work",
     "A driver API call failed while gpucheck ran work on the GPU.",
     "GPU {0}: {1} failed during {2}: {3} ({4})",
     "look for Xid errors in `dmesg`; an illegal-address or launch failure that repeats means "
     "the GPU needs a reset (nvidia-smi -r, or reboot) or service",
     where(k_where_gpu_index, "the CUDA call that failed", "the stage of the check it failed in",
           "the CUresult name", "its description")},
    {codes::k_gpu_kernel_load_failed, Severity::fail, "GPU kernels cannot be loaded",
     "The driver refused gpucheck's embedded kernel image. Frameworks fail the same way: the "
     "driver is older than the toolkit that built the code, the PTX JIT compiler is missing "
     "(containers without the 'compute' capability), or the image has no code for this GPU. "
     "Checks that need no kernel of gpucheck's (copies, cuDNN) still run.",
     "GPU {0} ({1}, sm_{2}): {3} returned {4} ({5}); image: {6}{7}", "{8}",
     where(k_where_gpu_index, "GPU model (name)", "compute capability (\"90\")",
           "the driver call that failed (cuModuleLoadData, ...)", "its CUresult name",
           "its description", "the kernel image tried",
           "\"; JIT log: \" and the JIT's log, or empty", "what to do, for this error")},
    {codes::k_gpu_kernels_not_built, Severity::warn, "gpucheck built without GPU kernels",
     "The build found no nvcc, so this gpucheck carries no kernels and cannot test computation.",
     "GPU {0}: this gpucheck was built without nvcc and carries no GPU kernels",
     "rebuild gpucheck with the CUDA toolkit installed (cmake -DCUDAToolkit_ROOT=/usr/local/cuda)",
     where(k_where_gpu_index)},
    {codes::k_gpu_long_interrupted, Severity::warn, "long test stopped before its end",
     "The user stopped gpucheck (Ctrl-C, SIGINT) while the long level's memory test or burn "
     "ran. What ran is reported; the part that did not run was not tested, so the check cannot "
     "pass.",
     "GPU {0}: {1} was stopped by the user (SIGINT) after {2} of {3} s: {4}",
     "nothing says the GPU is faulty; run `gpucheck --level long` again and let it finish to test "
     "the rest",
     where(k_where_gpu_index, "the test stopped (\"the memory test\", \"the burn\")",
           "seconds it ran", "seconds it was to run", "what was tested, and what was not")},
    {codes::k_gpu_other_run, Severity::warn, "another gpucheck run had the GPU",
     "gpucheck runs on one host take turns per GPU and queue for them. This run waited for the "
     "other run's turn on this GPU for all of its wait (--wait-turn; by default 30 s and 15 s "
     "per GPU, long enough for several whole runs) and it did not end, so this run's active "
     "checks skipped the GPU rather than disturb or be disturbed by the other's measurements. "
     "A run of the long level holds its turn for minutes.",
     "GPU {0}: not tested: {1}",
     "nothing is wrong with the GPU; run gpucheck again when the other run (often a Slurm "
     "prolog, a Kubernetes probe, a long-level run or a person) has finished, or give it a "
     "longer --wait-turn",
     where(k_where_gpu_index, "why it was not tested: the other run that holds the GPU")},
    {codes::k_gpu_slower_than_siblings, Severity::warn, "one GPU is slower than its siblings",
     "Among the GPUs of one model in this run, this one's figure is clearly below their median: "
     "GPUs of one model measured by the same run should agree, so no baseline is needed to see "
     "that this one is the odd one out.",
     "GPU {0} ({1}): {2} = {3} {4} is {5}% of the median of {6} GPUs of this model ({7} {4})",
     "compare this GPU's clocks, power limit and temperature with its siblings' (nvidia-smi -q -d "
     "CLOCK,POWER,TEMPERATURE -i {0}); check for other processes on it; if it stays slower when "
     "idle, drain it and run the long level (gpucheck --level long)",
     where(k_where_gpu_index, "GPU model (name)", "the figure (metric name)", "its value",
           "its unit", "that as a percentage of the median", "GPUs of this model measured",
           "their median")},
};
} // namespace

std::span<const FindingSpec> findings_gpu() {
  return k_table;
}

} // namespace gpucheck
