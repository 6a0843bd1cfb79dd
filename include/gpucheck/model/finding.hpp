#pragma once
/// A Finding is one diagnosed fact with a stable code, its cause in plain words and a remedy.

#include <optional>
#include <string>

#include "gpucheck/model/status.hpp"

namespace gpucheck {

struct Finding {
  std::string code; ///< stable code from the catalogue, e.g. "cuda.init_failed"
  Severity severity = Severity::info;
  std::string message;          ///< cause, filled from facts
  std::string remedy;           ///< what to install or change, with versions; may be empty for info
  std::optional<int> gpu_index; ///< NVML index of the GPU concerned, when one is
  /// Named by --ignore: kept in the report but not counted in its result's status or the verdict.
  bool ignored = false;

  bool operator==(const Finding&) const = default;
};

} // namespace gpucheck
