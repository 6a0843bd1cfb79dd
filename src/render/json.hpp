#pragma once
/// JSON renderer: the report as documented in docs/report-format.md and docs/report.schema.json.

#include <nlohmann/json_fwd.hpp>

#include <string>

#include "gpucheck/model/report.hpp"

namespace gpucheck::render {

/// Deterministic: keys sorted, two-space indent, trailing newline; `compact`: the same on one
/// line (log collectors split a pretty report into thousands of events).
std::string render_json(const Report& report, bool compact = false);

/// `j` as two-space-indented JSON with a trailing newline, never throwing: bytes that are not
/// UTF-8 in its strings and keys are written as the visible text "\xNN" (render/utf8.hpp).
std::string dump_valid_json(nlohmann::json j);

/// The snapshot alone (what `gpucheck snapshot` writes).
std::string render_snapshot_json(const SystemSnapshot& snapshot);

} // namespace gpucheck::render
