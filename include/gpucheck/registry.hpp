#pragma once
/// THE ordered list of checks (src/core/registry.cpp expands GPUCHECK_CHECKS, then the GPU checks
/// of their own folders join it through add_check()). docs/architecture.md, "Adding a check",
/// says where a new check goes.

#include <span>

#include "gpucheck/check.hpp"

namespace gpucheck {

/// Every check in report order. Its first call also adds the checks' own finding entries
/// (CheckDef::findings) to the catalogue, so it comes before the catalogue is read (main() calls
/// gpu_checks::install(), which calls it).
std::span<const CheckDef> all_checks();

/// Where add_check() lists a check among the active ones; the checks added to one place keep
/// the order they were added in.
enum class CheckPlace {
  after_builtin, ///< after the other per-GPU active checks, before those over GPUs (gpu.p2p)
  /// before every other active check, in the order added (gpu.compute: do gpucheck's kernels
  /// run? then gpu.bandwidth)
  first,
  before_long, ///< before the long level's checks (gpu.memtest)
  /// after every per-GPU active check, before the long level's, in the order added (gpu.p2p,
  /// gpu.nccl: the child over every GPU)
  over_gpus,
};

/// Add a check of its own folder (src/gpu_checks/, registry.cpp there) at start-up.
void add_check(const CheckDef& check, CheckPlace place = CheckPlace::after_builtin);

} // namespace gpucheck
