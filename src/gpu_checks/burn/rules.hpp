#pragma once
/// Pure rules of the burn (gpu.burn): what its NVML samples, Xids, mismatches, result hashes and
/// TFLOP/s mean, per GPU and across the GPUs of one model. No GPU needed (burn_test.cpp).

#include <nlohmann/json_fwd.hpp>

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "checks/active/judging.hpp"
#include "protocol/payloads.hpp"

namespace gpucheck::gpu_checks::burn {

using checks::GpuTarget;
using checks::Judgement;

/// A hardware clock-event reason active in more than this share of the burn's samples (and in
/// at least k_min_throttled_samples of them) fails the burn: one stray sample is no throttle.
inline constexpr double k_hw_throttle_share = 0.01;
inline constexpr size_t k_min_throttled_samples = 2;
/// SW thermal slowdown in more than this share of the samples is a warning.
inline constexpr double k_sw_thermal_share = 0.05;
/// A GEMM type's median below this fraction of the model's reference, or of the median of the
/// other GPUs of its model in the run, is a warning.
inline constexpr double k_burn_slow_fraction = 0.8;

// nvmlClocksEventReasons bits (nvml.h).
inline constexpr uint64_t k_reason_gpu_idle = 0x1;
inline constexpr uint64_t k_reason_sw_power_cap = 0x4;
inline constexpr uint64_t k_reason_hw_slowdown = 0x8;
inline constexpr uint64_t k_reason_sw_thermal = 0x20;
inline constexpr uint64_t k_reason_hw_thermal = 0x40;
inline constexpr uint64_t k_reason_hw_power_brake = 0x80;

/// The burn's NVML samples judged: findings (gpu.burn_throttled_hw, gpu.burn_thermal) and the
/// summary's words on clocks, temperature and power.
struct ClockVerdict {
  std::vector<Finding> findings;
  std::string summary;
};
ClockVerdict judge_burn_clocks(const GpuTarget& gpu, const protocol::BurnWatch& watch);

/// gpu.burn_xid for the Xids NVML delivered during the burn (nothing when none); an
/// application Xid on a GPU that other processes use is only a warning (it may be theirs).
std::vector<Finding> burn_xid_findings(const GpuTarget& gpu, const protocol::BurnReport& burn);

/// gpu.burn's verdict on one GPU alone: mismatches, clocks, Xids, interruption; the summary gives
/// per type the median TFLOP/s and iterations, and the clocks. The comparison with the model's
/// reference and with the other GPUs is judge_burn_peers().
Judgement judge_burn(const GpuTarget& gpu, const protocol::BurnReport& burn);

/// What one GPU model reaches in one GEMM type and size (not its datasheet peak), with where the
/// figure comes from.
struct GemmReference {
  std::string_view model; ///< the CUDA device name, exactly: "NVIDIA H200"
  std::string_view type;  ///< bf16, fp16, fp32, fp64
  int n = 0;              ///< square size m = n = k
  double tflops = 0.0;
  std::string_view source;
};

/// Every reference row; only figures measured on that model, each with its source.
std::span<const GemmReference> gemm_references();
/// The row for a model, type and size, or nullptr.
const GemmReference* find_gemm_reference(std::string_view model, std::string_view type, int n);

/// One GPU's burn, as the comparison across GPUs needs it.
struct BurnPeer {
  int gpu_index = 0;
  std::string model; ///< device name
  int sm_count = 0;
  std::string cublas;     ///< cuBLAS version
  bool contended = false; ///< other processes used the GPU (its figures are not judged slow)
  std::vector<protocol::BurnType> types;
};

/// What the comparison found for one GPU: findings (gpu.burn_slow, gpu.burn_outlier,
/// gpu.burn_gpus_disagree) and a note for its summary (the reference used, the siblings compared
/// with, or "no TFLOP/s reference for this model").
struct PeerVerdict {
  std::vector<Finding> findings;
  std::string note;
};

/// Every GPU of the run judged against its model's reference row and against the other GPUs of
/// its model (same device name, SM count and cuBLAS version): result hashes of one type and size
/// must agree; a median below k_burn_slow_fraction of the row or of the others' median is slow.
/// One verdict per peer, in order.
std::vector<PeerVerdict> judge_burn_peers(const std::vector<BurnPeer>& peers);

/// One GPU's burn payload as judge_burn_peers() needs it (device name and SM count from its
/// "device", cuBLAS and types from its "burn"); nullopt when either cannot be read (its own
/// result already says so).
std::optional<BurnPeer> burn_peer(int gpu_index, const nlohmann::json& payload, bool contended);

/// judge_burn_peers() over `peers`, added to the per-GPU results: peers[i] is results[slots[i]];
/// each GEMM type's metric shows the floor gpu.burn_slow judges it by, a finding lowers that
/// result's status, the note ends its summary; a skipped result is left alone.
void add_peer_verdicts(std::vector<CheckResult>& results, const std::vector<size_t>& slots,
                       const std::vector<BurnPeer>& peers);

} // namespace gpucheck::gpu_checks::burn
