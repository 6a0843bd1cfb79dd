#pragma once
/// `gpucheck matrix` (rule 8 for this machine or a hypothetical one) and `--matrix FILE`.

#include <optional>
#include <string>
#include <vector>

#include "compat/matrix.hpp"
#include "compat/what_runs.hpp"
#include "gpucheck/expected.hpp"

namespace gpucheck::cli {

struct MatrixOptions {
  std::optional<std::string> driver; ///< --driver 535.104.05
  std::vector<std::string> gpus;     ///< --gpu sm_86 / 8.6 / "H100" (repeatable, comma-separated)
};

/// The machine to answer for: --driver and --gpu where given, the rest from `probed` (absent
/// when the command line gives both). Fails with a message naming the bad value.
Expected<compat::MachineQuery> matrix_query(const MatrixOptions& options,
                                            const compat::Matrix& matrix,
                                            const std::optional<compat::MachineQuery>& probed);

/// Rule 8 as text or as JSON (ends with a newline).
std::string render_matrix(const compat::Matrix& matrix, const compat::MachineQuery& query,
                          bool json);

/// Load, validate and activate a --matrix FILE; returns its matrix_version. The error names the
/// file, the JSON path and the problem.
Expected<std::string> activate_matrix_file(const std::string& path);

} // namespace gpucheck::cli
