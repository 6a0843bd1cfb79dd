#pragma once
/// The compatibility rules: pure functions over a snapshot and the matrix, each returning the
/// findings of one check (codes in src/findings/table_compat.cpp). Rules never fail on a driver,
/// GPU or library the matrix does not know: they say so in an info finding.

#include <optional>
#include <string>
#include <vector>

#include "compat/matrix.hpp"
#include "gpucheck/model/finding.hpp"
#include "gpucheck/model/snapshot.hpp"

namespace gpucheck::compat {

/// What one rule concluded. `skip_reason` set: the facts it needs are absent (no verdict).
struct RuleOutcome {
  std::string summary;
  std::vector<Finding> findings;
  std::optional<std::string> skip_reason;
};

/// Rule 1: the driver against each CUDA runtime found (minor-version compatibility included).
RuleOutcome driver_runtime_rule(const SystemSnapshot& snapshot, const Matrix& matrix);

/// Rule 2: the driver against the CUDA each cuDNN was built for (cudnnGetCudartVersion).
RuleOutcome driver_cudnn_rule(const SystemSnapshot& snapshot, const Matrix& matrix);

/// Rule 3: each GPU's architecture against the installed driver branch.
RuleOutcome gpu_driver_rule(const SystemSnapshot& snapshot, const Matrix& matrix);

/// Rule 4: each GPU's architecture against each runtime and toolkit found.
RuleOutcome gpu_toolkit_rule(const SystemSnapshot& snapshot, const Matrix& matrix);

/// Rule 5: each GPU's architecture against each cuDNN release found.
RuleOutcome gpu_cudnn_rule(const SystemSnapshot& snapshot, const Matrix& matrix);

/// Rule 6: the nvcc toolkit against the driver (would a build made here run here?).
RuleOutcome toolkit_driver_rule(const SystemSnapshot& snapshot, const Matrix& matrix);

/// Rule 7: a forward-compatibility libcuda, against the GPU classes and base branches allowed.
RuleOutcome forward_compat_rule(const SystemSnapshot& snapshot, const Matrix& matrix);

} // namespace gpucheck::compat
