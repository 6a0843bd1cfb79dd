#pragma once
// The works that checks of their own folders added (src/gpu_checks/, installed by the test
// main), for the engine's tests: by name, and how many join each GPU's shared child; and the
// unit of those tests' memory sizes.

#include <algorithm>
#include <cstdint>

#include "engine/plan.hpp"

namespace gpucheck::engine {

/// One GiB in bytes, for the tests' GPU memory sizes.
constexpr uint64_t k_gib = 1ULL << 30;

/// How many works before the copies are one more job on every GPU, in the shared child (not the
/// copies' three, nor the lane, cuDNN's, which comes after them).
inline size_t added() {
  return static_cast<size_t>(
      std::count_if(work_table().begin(), work_table().end(), [](const WorkRow& row) {
        return row.child == WorkChild::shared && row.lane.empty() && row.copies == Copies::none;
      }));
}

/// gpu.bandwidth's works (src/gpu_checks/bandwidth/): its host copies alone, on every GPU at
/// once, and the device-local copy.
inline Work bandwidth() {
  return *work_named("bandwidth");
}
inline Work copies_together() {
  return *work_named("copies_together");
}
inline Work local_copies() {
  return *work_named("local_copies");
}
/// gpu.p2p's and gpu.nccl's works, one after the other in the child over every GPU
/// (src/gpu_checks/p2p/, src/gpu_checks/nccl/).
inline Work peers() {
  return *work_named("peers");
}
inline Work nccl() {
  return *work_named("nccl");
}

/// gpu.streams' work, one of them (src/gpu_checks/streams/).
inline Work streams() {
  return *work_named("streams");
}
/// gpu.compute's work, the first of each shared child (src/gpu_checks/compute/).
inline Work compute() {
  return *work_named("compute");
}
/// gpu.cudnn's work, the shared child's lane, its last (src/gpu_checks/cudnn/).
inline Work cudnn() {
  return *work_named("cudnn");
}
/// gpu.memtest's work, the first of the long level's child (src/gpu_checks/memtest/).
inline Work memtest() {
  return *work_named("memtest");
}
/// gpu.burn's work, after the memory test, every GPU's at once (src/gpu_checks/burn/).
inline Work burn() {
  return *work_named("burn");
}

} // namespace gpucheck::engine
