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
/// The prefix of a line that says gpucheck could not see the GPUs or the driver and nothing it
/// saw drains the node: no verdict either way (node-problem-detector: Unknown; the Slurm health
/// check changes nothing), never "healthy" (issue 36 item 3).
inline constexpr std::string_view k_blind_marker = "gpucheck-blind:";
/// The codes that say gpucheck could not see the GPUs or the driver (warn or fail, not ignored).
inline constexpr std::string_view k_blind_codes[] = {"driver.missing",
                                                     "cuda.library_missing",
                                                     "nvml.library_missing",
                                                     "cuda.no_device",
                                                     "cuda.no_visible_device",
                                                     "env.device_node_missing",
                                                     "env.device_node_no_access",
                                                     "nvml.no_permission",
                                                     "env.visible_devices_hides_all",
                                                     "env.visible_devices_no_match"};
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
/// how many more; printable ASCII only (anything else from the machine becomes '?'). When
/// nothing drains: "gpucheck-blind: cannot see the GPUs or the driver: CODE, ...\n" when a
/// k_blind_codes finding is there, else empty. Pure and deterministic.
std::string render_reason(const Report& report, const DrainPredicate& drains);

} // namespace gpucheck::render
