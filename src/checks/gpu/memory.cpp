#include <fmt/format.h>
#include <fmt/ranges.h>

#include <span>

#include "checks/checks.hpp"
#include "checks/rules/per_gpu.hpp"
#include "findings/catalog.hpp"

namespace gpucheck::checks {

namespace {
// Its findings, spelt here (CheckDef::findings adds them to the catalogue).
constexpr FindingCode k_memory_held_by_others{"gpu.memory_held_by_others"};
constexpr FindingCode k_memory_in_use{"gpu.memory_in_use"};

constexpr FindingSpec k_findings[] = {
    {k_memory_held_by_others, Severity::warn, "GPU memory held by other processes",
     "Most of the GPU memory is already allocated by other processes, so new work will run out "
     "of memory (often reported as CUDNN_STATUS_NOT_INITIALIZED or CUDA out of memory).",
     "GPU {0}: {1} of {2} memory ({3}%) is in use; {4}",
     "stop the processes holding it ({5}), look for leftover/zombie processes of earlier jobs; "
     "memory with no visible process belongs to another container or namespace: check with "
     "nvidia-smi on the host",
     where(k_where_gpu, "memory in use", "total memory", "that as a percentage",
           "who holds it (\"no process using it is visible from here\")",
           "the PIDs holding it, or \"none visible\"")},
    {k_memory_in_use, Severity::info, "GPU memory in use by running processes",
     "Most of the GPU memory is allocated by processes that are running on it now: the GPU is "
     "busy, not faulty. New work may run out of memory until they end.",
     "GPU {0}: {1} of {2} memory ({3}%) is in use; {4}",
     "nothing is wrong with the GPU; wait for those processes ({5}) to end, or run new work on "
     "another GPU",
     where(k_where_gpu, "memory in use", "total memory", "that as a percentage",
           "the processes holding it", "their PIDs")},
};

std::span<const FindingSpec> own_findings() {
  return k_findings;
}

constexpr CheckInfo k_info{"gpu.memory", "Free GPU memory",
                           "Less than 90% of the GPU's memory is already in use by other "
                           "processes.",
                           CheckKind::passive};

constexpr int k_busy_percent = 90;

CheckResult judge(const CheckInfo& info, const GpuInfo& gpu, const SystemSnapshot&) {
  if (!gpu.memory_total_bytes || !gpu.memory_used_bytes || *gpu.memory_total_bytes == 0) {
    return skip_result(info, "memory use is not reported for this GPU", gpu.index);
  }
  const uint64_t used = *gpu.memory_used_bytes;
  const uint64_t total = *gpu.memory_total_bytes;
  const int percent = static_cast<int>((used * 100) / total);
  const std::string summary =
      fmt::format("{} of {} in use ({}%)", bytes_text(used), bytes_text(total), percent);
  if (percent < k_busy_percent) {
    return make_result(info, summary, {}, gpu.index);
  }
  std::vector<std::string> holders;
  std::vector<std::string> pids;
  for (const GpuProcess& process : gpu.processes) {
    const std::string name = process.name.empty() ? std::string("?") : process.name;
    holders.push_back(process.used_memory_bytes
                          ? fmt::format("PID {} {} ({})", process.pid, name,
                                        bytes_text(*process.used_memory_bytes))
                          : fmt::format("PID {} {}", process.pid, name));
    pids.push_back(std::to_string(process.pid));
  }
  const std::string who = holders.empty() ? std::string("no process using it is visible from here")
                                          : fmt::format("held by {}", fmt::join(holders, ", "));
  const std::string pid_list =
      pids.empty() ? std::string("none visible") : fmt::format("PIDs {}", fmt::join(pids, " "));
  // Running processes that hold the memory are a busy GPU, not a fault: a note. Memory that no
  // visible process holds (leaked, or another container's) is worth a warning.
  return make_result(
      info, summary,
      {make_finding(holders.empty() ? k_memory_held_by_others : k_memory_in_use, gpu.index,
                    gpu_label(gpu), bytes_text(used), bytes_text(total), percent, who, pid_list)},
      gpu.index);
}

std::vector<CheckResult> run(const CheckContext& context) {
  return for_each_gpu(k_info, context.snapshot, &judge);
}
} // namespace

CheckDef gpu_memory_check() {
  return {k_info, &run, &own_findings};
}

} // namespace gpucheck::checks
