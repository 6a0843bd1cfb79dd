#pragma once
/// The one-line drain reason (--format reason): what a cluster's health check puts in a node's
/// drain reason or condition message (deploy/slurm, deploy/k8s; docs/fleet.md).

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "gpucheck/model/report.hpp"

namespace gpucheck::render {

/// The prefix of every reason: how deploy/slurm tells a drain of its own from an admin's.
inline constexpr std::string_view k_reason_marker = "gpucheck:";
/// The longest reason line in bytes, newline excluded: short enough for `sinfo -R`, the
/// slurmctld log and a node-problem-detector condition message.
inline constexpr std::size_t k_max_reason_bytes = 200;

/// Whether a finding code drains the node (the catalogue's FindingSpec::drain; render/ does not
/// see core/, so cli/ passes it in).
using DrainPredicate = std::function<bool(std::string_view code)>;

/// "gpucheck: gpu.ecc_uncorrected GPU 1 (1320221015632), log.xid_fatal GPU 1 (...), +2 more\n":
/// the findings that drain the node, each (code, GPU) once: not ignored (--ignore), severity warn
/// or fail (a finding lowered to info, e.g. an old kernel-log entry after a day, does not drain)
/// and a code the predicate accepts; fail before warn, otherwise in report order. Each with its
/// GPU (index and serial, else UUID, else PCI bus id), as many as fit in k_max_reason_bytes, then
/// how many more; printable ASCII only (anything else from the machine becomes '?'). Empty when
/// nothing drains. Pure and deterministic.
std::string render_reason(const Report& report, const DrainPredicate& drains);

} // namespace gpucheck::render
