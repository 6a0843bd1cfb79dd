#pragma once
/// The GPU checks of their own folders: one line each. A line here makes the engine plan its
/// work, the children run it (its own mode, and in gpu-device), the runner report it, and
/// --min, `gpucheck explain` and Prometheus know its metrics and findings.

#include <span>

#include "gpu_checks/gpu_check.hpp"

// clang-format off
#define GPUCHECK_GPU_CHECKS(X)                                                                     \
  X(compute)     /* gpu.compute: context, kernel load, FMA chains and a reduction */               \
  X(bandwidth)   /* gpu.bandwidth: host copies alone and together, device-local, verified */      \
  X(cudnn)       /* gpu.cudnn: convolutions, activations (the shared child's lane) */           \
  X(streams)     /* gpu.streams: priorities, events, graph capture */                              \
  X(memory_pool) /* gpu.memory_pool: stream-ordered allocations, timed and verified */          \
  X(p2p)         /* gpu.p2p: peer access, bandwidth, latency (>= 2 GPUs, one child over all) */ \
  X(nccl)        /* gpu.nccl: NCCL all-reduce, verified (after gpu.p2p, in the same child) */    \
  X(memtest)     /* gpu.memtest (long level): patterns over nearly all free memory */           \
  X(burn)        /* gpu.burn (long level): GEMMs on every GPU at once, clocks, Xids */
// clang-format on

namespace gpucheck::gpu_checks {

#define GPUCHECK_DECLARE_GPU_CHECK(name) Registration name##_registration();
GPUCHECK_GPU_CHECKS(GPUCHECK_DECLARE_GPU_CHECK)
#undef GPUCHECK_DECLARE_GPU_CHECK

/// Every registered check, in the order above.
std::span<const Registration> registered();

/// Make every registered check known to the engine, the children, the runner, the catalogue and
/// the gates: first thing in main() (and the unit tests' main), before any of them is used. Once.
void install();

} // namespace gpucheck::gpu_checks
