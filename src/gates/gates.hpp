#pragma once
/// CI gates (docs/ci.md): each gate is a result of its own (gate.expect_gpus,
/// gate.require.<component>, gate.min.<metric>, gate.fail_on), evaluated after every check from
/// the snapshot and the checks' results, so a pipeline log says which gate failed and by how much.

#include <string>
#include <vector>

#include "gates/gate_spec.hpp"
#include "gpucheck/model/check_result.hpp"
#include "gpucheck/model/snapshot.hpp"

namespace gpucheck::gates {

/// Marks every finding whose code is in `codes` as ignored, and recomputes the status of each
/// result whose status followed its findings (pass/warn/fail from the worst finding) from the
/// findings that are not ignored. A status a check set for another reason (skip, error without
/// such a finding) is kept.
void apply_ignores(std::vector<CheckResult>& results, const std::vector<std::string>& codes);

/// The results of the --expect-gpus, --require and --min gates (in that order), judged from the
/// snapshot and `results` (the other checks' results). A --min gate whose metric no check
/// reported is a skip that says so, never a pass.
std::vector<CheckResult> evaluate_gates(const GateSpec& spec, const SystemSnapshot& snapshot,
                                        const std::vector<CheckResult>& results);

/// The --fail-on warn gate over `results`: fails when any result warns (ignored findings do not
/// count, since they no longer set a status).
CheckResult fail_on_warn_gate(const std::vector<CheckResult>& results);

/// The whole gate stage of a run: ignores applied to the checks' results, the gates appended
/// (ignores apply to their findings too), then the --fail-on gate over everything. With an
/// empty spec, returns `results` unchanged.
std::vector<CheckResult> apply_gates(const GateSpec& spec, const SystemSnapshot& snapshot,
                                     std::vector<CheckResult> results);

} // namespace gpucheck::gates
