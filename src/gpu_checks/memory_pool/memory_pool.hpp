#pragma once
/// gpu.memory_pool: the stream-ordered allocator (cuMemAllocAsync from the device's default
/// pool, as PyTorch's cudaMallocAsync backend, JAX and RAPIDS use it) allocates, reuses and
/// frees blocks with the right contents, and does so faster than cuMemAlloc.

#include <nlohmann/json.hpp>

#include <cstdint>

#include "findings/codes.hpp"
#include "gpu_checks/gpu_check.hpp"

namespace gpucheck::gpu_checks::memory_pool {

/// What the child measured; every field is written, whatever it got to.
struct Payload {
  bool supported = false;       ///< CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED
  uint64_t block_bytes = 0;     ///< each allocation's size
  int timed_pairs = 0;          ///< alloc+free pairs timed, each way
  double pool_pair_us = 0.0;    ///< cuMemAllocAsync+cuMemFreeAsync, median per pair
  double plain_pair_us = 0.0;   ///< cuMemAlloc+cuMemFree, median per pair
  uint64_t blocks_verified = 0; ///< pool blocks read back whole (half reallocated after a free)
  bool operator==(const Payload&) const = default;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Payload, supported, block_bytes, timed_pairs, pool_pair_us,
                                   plain_pair_us, blocks_verified)

inline constexpr FindingCode k_not_reused{"gpu.memory_pool_not_reused"};
inline constexpr FindingCode k_corrupt{"gpu.memory_pool_corrupt"};

/// The verification kind of the pool blocks' contents.
inline constexpr std::string_view k_verify_kind = "memory_pool";

/// The child's work (work.cpp).
void work(gpu::DeviceSession& session, const gpu::KernelModule& module, Output<Payload>& out);
/// The judge (check.cpp).
checks::Judgement judge(const checks::GpuTarget& gpu, const Payload& payload,
                        const ChildReport& child);
/// Its findings' entries (check.cpp).
std::span<const FindingSpec> findings();

} // namespace gpucheck::gpu_checks::memory_pool
