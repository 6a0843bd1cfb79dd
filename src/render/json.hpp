#pragma once
/// JSON renderer: the report as documented in docs/report-format.md and docs/report.schema.json.

#include <string>

#include "gpucheck/model/report.hpp"

namespace gpucheck::render {

/// Deterministic: keys sorted, two-space indent, trailing newline.
std::string render_json(const Report& report);

/// The snapshot alone (what `gpucheck snapshot` writes).
std::string render_snapshot_json(const SystemSnapshot& snapshot);

} // namespace gpucheck::render
