#pragma once
/// gpu.memtest (the long level): the classic memory-test patterns over nearly all free device
/// memory for --duration, every word checked on the GPU; any word read back wrong is named.
/// Its work runs in the long level's child of each GPU, before the burn.

#include <cstdint>

#include "findings/codes.hpp"
#include "gpu_checks/gpu_check.hpp"

namespace gpucheck::gpu_checks {
/// Its payload is written and read by protocol/payloads.hpp's own functions.
template <>
struct PayloadCodec<protocol::MemtestReport>
    : CodecOf<protocol::MemtestReport, &protocol::write_memtest, &protocol::read_memtest> {};
} // namespace gpucheck::gpu_checks

namespace gpucheck::gpu_checks::memtest {

/// Its payload is the report protocol/payloads.hpp reads and writes ("memtest").
using Payload = protocol::MemtestReport;

inline constexpr FindingCode k_errors{"gpu.memtest_errors"};
inline constexpr FindingCode k_coverage_low{"gpu.memtest_coverage_low"};

/// The test should cover this fraction of the free memory (the child aims at 96%).
inline constexpr double k_coverage_floor = 0.95;

/// The verification kind of its words; its judge names the errors in full.
inline constexpr std::string_view k_verify_kind = "memtest";

/// The child's work (work.cpp).
void work(gpu::DeviceSession& session, const gpu::KernelModule& module, Output<Payload>& out);
/// The verdict on one GPU's report: gpu.memtest_errors for any word read back wrong,
/// gpu.memtest_coverage_low below the floor, gpu.long_interrupted when the user stopped it; the
/// summary says what was tested, under which patterns, how fast (check.cpp).
checks::Judgement judge(const checks::GpuTarget& gpu, const Payload& report,
                        const ChildReport& child);
/// A child forced beside other processes that left it no memory to test: a skip, not a
/// faulty GPU (check.cpp).
void amend_setup(const checks::GpuTarget& gpu, const ChildReport& child, checks::Judgement& setup);
/// Its findings' entries (check.cpp).
std::span<const FindingSpec> findings();

} // namespace gpucheck::gpu_checks::memtest
