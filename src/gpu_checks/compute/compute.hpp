#pragma once
/// gpu.compute: the primary context, gpucheck's own kernels loaded, FMA chains and an integer
/// reduction on fresh random input checked against the CPU bit for bit, and the FP32 FMA rate.
/// The first work of each GPU's shared child, so its judge also speaks for the kernel image.

#include <nlohmann/json.hpp>

#include <cstdint>

#include "findings/codes.hpp"
#include "gpu_checks/gpu_check.hpp"

namespace gpucheck::gpu_checks::compute {

/// What the child measured; every field is written, whatever it got to.
struct Payload {
  double fma_gflops = 0.0; ///< FP32 FMA throughput, median of the timed launches
  uint32_t fma_chains = 0; ///< chains in the timed launch
  uint32_t fma_steps = 0;  ///< FMA steps of each chain
  bool operator==(const Payload&) const = default;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Payload, fma_gflops, fma_chains, fma_steps)

inline constexpr FindingCode k_mismatch{"gpu.compute_mismatch"};
inline constexpr FindingCode k_image_fallback{"gpu.kernel_image_fallback"};
inline constexpr FindingCode k_jit_used{"gpu.kernel_jit_used"};

/// The verification kind of its kernels' results.
inline constexpr std::string_view k_verify_kind = "compute";

/// The child's work (work.cpp).
void work(gpu::DeviceSession& session, const gpu::KernelModule& module, Output<Payload>& out);
/// The judge (check.cpp).
checks::Judgement judge(const checks::GpuTarget& gpu, const Payload& payload,
                        const ChildReport& child);
/// Its note on the kernel image when the child did not get to its work (check.cpp).
void amend_setup(const checks::GpuTarget& gpu, const ChildReport& child, checks::Judgement& setup);
/// Its findings' entries (check.cpp).
std::span<const FindingSpec> findings();

} // namespace gpucheck::gpu_checks::compute
