#pragma once
/// gpu.burn (the long level): cuBLAS GEMMs in every type the GPU has on every GPU at once for
/// --duration, each iteration compared bit for bit with the first and across the GPUs of one
/// model, with NVML's clocks, temperature, power, clock-event reasons and Xids watched. Its
/// work runs in the long level's child of each GPU, after the memory test; every GPU's starts
/// in one step (WorkRow::together). Its pure rules are in rules.hpp.

#include <span>
#include <string_view>
#include <vector>

#include "findings/codes.hpp"
#include "gpu_checks/gpu_check.hpp"

namespace gpucheck::gpu_checks {
/// Its payload is written and read by protocol/payloads.hpp's own functions.
template <>
struct PayloadCodec<protocol::BurnReport>
    : CodecOf<protocol::BurnReport, &protocol::write_burn, &protocol::read_burn> {};
} // namespace gpucheck::gpu_checks

namespace gpucheck::gpu_checks::burn {

/// Its payload is the report protocol/payloads.hpp reads and writes ("burn").
using Payload = protocol::BurnReport;

inline constexpr FindingCode k_gpus_disagree{"gpu.burn_gpus_disagree"};
inline constexpr FindingCode k_mismatch{"gpu.burn_mismatch"};
inline constexpr FindingCode k_outlier{"gpu.burn_outlier"};
inline constexpr FindingCode k_slow{"gpu.burn_slow"};
inline constexpr FindingCode k_thermal{"gpu.burn_thermal"};
inline constexpr FindingCode k_throttled_hw{"gpu.burn_throttled_hw"};
inline constexpr FindingCode k_xid{"gpu.burn_xid"};

/// The verification kind of its iterations; its judge names the mismatches in full.
inline constexpr std::string_view k_verify_kind = "burn";

/// The child's work (work.cpp).
void work(gpu::DeviceSession& session, const gpu::KernelModule& module, Output<Payload>& out);
/// The verdict on one GPU's report alone (judge_burn in rules.hpp, check.cpp).
checks::Judgement judge(const checks::GpuTarget& gpu, const Payload& report,
                        const ChildReport& child);
/// No usable cuBLAS to burn with is a skip that says so, not a verdict on the GPU (check.cpp).
void amend_setup(const checks::GpuTarget& gpu, const ChildReport& child, checks::Judgement& setup);
/// Every GPU's burn compared with its model's reference and with the other GPUs of its model
/// in this run: findings and a note on each GPU's result (check.cpp).
void compare(std::vector<CheckResult>& results, const CheckContext& context);
/// Its findings' entries (check.cpp).
std::span<const FindingSpec> findings();

} // namespace gpucheck::gpu_checks::burn
