#pragma once

/// The range of the floating-point numbers a snapshot may hold. snapshot_from_text refuses any
/// other (a replayed file is outside data); the probes keep what they read from the machine (a
/// timestamp, an uptime) inside it, so every snapshot gpucheck writes reads back.

#include <optional>

namespace gpucheck {

/// Finite, not negative and below 2^31.
constexpr bool snapshot_float_in_range(double value) {
  return value >= 0.0 && value < 2147483648.0; // false for NaN
}

/// `value` where snapshot_float_in_range holds, else nullopt.
constexpr std::optional<double> snapshot_float(double value) {
  return snapshot_float_in_range(value) ? std::optional<double>(value) : std::nullopt;
}

} // namespace gpucheck
