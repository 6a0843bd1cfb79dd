#pragma once
/// What every GPU check child reports, as types: the envelope around each child's own results
/// (its failure, its metrics, its verifications). The child writes it and the judge reads it
/// through the functions below, so a key renamed on one side fails the round-trip tests instead
/// of passing every test that runs without a GPU. A protocol header: std and nlohmann only.
///
/// The checks' own fields (bandwidth figures, cuDNN's cases, the kernel module's load) are still
/// read by key in each judge (docs/architecture.md, "Payloads").

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpucheck/expected.hpp"

namespace gpucheck::engine {

struct PayloadMetric {
  std::string name;
  double value = 0.0;
  std::string unit;
  std::string note;
  bool operator==(const PayloadMetric&) const = default;
};

/// A verification: `kind` ("compute", "copy", "cudnn_conv", ...), `what` it covered.
struct PayloadVerification {
  std::string kind;
  std::string what;
  uint64_t checked = 0;
  uint64_t mismatches = 0;
  uint64_t first_index = 0;
  std::string got;  ///< first bad value, printed
  std::string want; ///< its expected value
  bool operator==(const PayloadVerification&) const = default;
};

/// Where the child stopped: the stage, and the driver call and its CUresult when one failed.
struct PayloadFailure {
  std::string stage;
  std::string call; ///< empty when no driver call failed (another exception)
  int code = 0;
  std::string name; ///< "CUDA_ERROR_OUT_OF_MEMORY", or "symbol missing"
  std::string text;
  std::string message;
  bool operator==(const PayloadFailure&) const = default;
};

struct ChildEnvelope {
  std::optional<PayloadFailure> failure;
  std::vector<PayloadMetric> metrics;
  std::vector<PayloadVerification> verify;
  bool operator==(const ChildEnvelope&) const = default;
};

nlohmann::json to_json(const PayloadMetric& metric);
nlohmann::json to_json(const PayloadVerification& verification);
nlohmann::json to_json(const PayloadFailure& failure);
/// Write the envelope's keys into a child's JSON object (leaving its other keys).
void write_envelope(const ChildEnvelope& envelope, nlohmann::json& out);
/// Read the envelope from a child's JSON; an error names the key that is missing or of the wrong
/// type. Never throws.
Expected<ChildEnvelope> read_envelope(const nlohmann::json& payload);

} // namespace gpucheck::engine
