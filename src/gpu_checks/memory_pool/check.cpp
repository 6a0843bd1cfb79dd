// gpu.memory_pool's judge, findings, metrics and registration.
#include <fmt/format.h>

#include "gpu_checks/memory_pool/memory_pool.hpp"
#include "gpu_checks/registry.hpp"

namespace gpucheck::gpu_checks::memory_pool {

namespace {

constexpr FindingSpec k_findings[] = {
    {k_corrupt, Severity::fail, "stream-ordered allocation corrupted",
     "Blocks allocated with cuMemAllocAsync from the GPU's memory pool, some of them reusing "
     "memory freed just before, did not read back what was written into them: two live blocks "
     "overlap, or the GPU's memory is faulty.",
     "GPU {0}: {1}: {2} of {3} words wrong, first at word {4}: got {5}, expected {6}",
     "run gpu.memtest (gpucheck --level long --only gpu.memtest) and read driver.kernel_log's "
     "Xid findings and the ECC counters (nvidia-smi -q -d ECC); if those are clean, update the "
     "NVIDIA driver",
     where(k_where_gpu_index, "the blocks checked", "words wrong", "words checked",
           "index of the first wrong word", "value read there", "value expected"),
     Drain::yes},
    {k_not_reused, Severity::info, "stream-ordered allocations are not faster",
     "An allocation and free from the GPU's memory pool took as long as cuMemAlloc and cuMemFree, "
     "although freed blocks stay in the pool: frameworks that allocate this way (PyTorch's "
     "cudaMallocAsync backend, JAX, RAPIDS) gain nothing from it here.",
     "GPU {0}: cuMemAllocAsync+cuMemFreeAsync took {1} us, cuMemAlloc+cuMemFree {2} us",
     "update the NVIDIA driver; under a vGPU or WSL2, ask whether its driver supports memory "
     "pools fully",
     where(k_where_gpu_index, "microseconds per pool allocation and free",
           "microseconds per cuMemAlloc and cuMemFree")},
};

constexpr MetricSpec k_metrics[] = {
    {"memory_pool_alloc_free_us", "us"},
    {"memory_alloc_free_us", "us"},
};

constexpr VerifySpec k_verify[] = {{k_verify_kind, k_corrupt}};

/// A pool pair this much of a plain pair, or more, is no faster (the pool's own, after warm-up,
/// is a small fraction of it).
constexpr double k_not_faster = 1.0;

constexpr GpuCheck<Payload> k_check{
    {"gpu.memory_pool", "Stream-ordered allocations work",
     "Allocates and frees blocks with cuMemAllocAsync from the GPU's memory pool, times them "
     "against cuMemAlloc, and reads back every word of blocks that reuse freed memory.",
     CheckKind::active},
    "memory_pool",
    "gpu-memory-pool",
    // Eight live blocks of 1 MiB, and the pool's rounding of them.
    16,
    16,
    0,
    false,
    &work,
    &judge,
    k_findings,
    k_metrics,
    k_verify,
};
} // namespace

std::span<const FindingSpec> findings() {
  return k_findings;
}

checks::Judgement judge(const checks::GpuTarget& gpu, const Payload& payload,
                        const ChildReport& /*child*/) {
  checks::Judgement judgement;
  if (!payload.supported) {
    // Some vGPU and older drivers: not a fault of this machine, and nothing was tested.
    judgement.skipped = true;
    judgement.summary = fmt::format(
        "GPU {}: the driver reports no stream-ordered allocator (memory pools) on this GPU, so "
        "cudaMallocAsync is unavailable; a driver of CUDA 11.2 or later has it",
        gpu.gpu_index);
    return judgement;
  }
  if (payload.plain_pair_us > 0 && payload.pool_pair_us >= k_not_faster * payload.plain_pair_us) {
    judgement.findings.push_back(make_finding(k_not_reused, gpu.gpu_index, gpu.gpu_index,
                                              fmt::format("{:.1f}", payload.pool_pair_us),
                                              fmt::format("{:.1f}", payload.plain_pair_us)));
  }
  judgement.summary = fmt::format(
      "GPU {}: stream-ordered allocation and free {:.2f} us (cuMemAlloc and cuMemFree {:.1f} us), "
      "{} blocks of {} MiB read back, half of them reallocated after a free",
      gpu.gpu_index, payload.pool_pair_us, payload.plain_pair_us, payload.blocks_verified,
      payload.block_bytes >> 20);
  return judgement;
}

} // namespace gpucheck::gpu_checks::memory_pool

namespace gpucheck::gpu_checks {
Registration memory_pool_registration() {
  return registration<memory_pool::k_check>();
}
} // namespace gpucheck::gpu_checks
