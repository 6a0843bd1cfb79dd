#pragma once
/// The merge table as text (for a terminal or a log), JSON (for programs) and Markdown (for a
/// ticket or a wiki). Pure and deterministic: the same inputs give the same bytes.

#include <string>

#include "fleet/fleet_table.hpp"

namespace gpucheck::fleet {

/// Summary line, the code groups ("12 nodes  gpu.row_remap_pending  ..." with each node's GPUs),
/// the node table (with mode, age and each failing code's GPU), refused inputs, stale reports and
/// notes.
std::string render_fleet_text(const FleetTable& table);

/// {"merge_format_version": 1, "merged_at", "summary", "groups", "nodes", "rejected", "stale"}
/// (docs/merge.schema.json); keys sorted, 2-space indent, trailing newline.
std::string render_fleet_json(const FleetTable& table);

/// GitHub/GitLab Markdown: summary, a table of groups, a table of nodes, refused inputs, stale
/// reports, notes.
std::string render_fleet_markdown(const FleetTable& table);

} // namespace gpucheck::fleet
