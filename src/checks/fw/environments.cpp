#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <span>

#include "checks/checks.hpp"
#include "compat/framework_rules.hpp"
#include "findings/catalog.hpp"

namespace gpucheck::checks {

namespace fw = compat::fw; // the framework rules (compat/framework_rules.hpp)

namespace {
// Its findings, spelt here (CheckDef::findings adds them to the catalogue).
constexpr FindingCode k_fw_interpreter_failed{"fw.interpreter_failed"};
constexpr FindingCode k_fw_python_not_found{"fw.python_not_found"};

constexpr FindingSpec k_findings[] = {
    {k_fw_interpreter_failed, Severity::info, "Python interpreter did not answer",
     "When an interpreter's files do not say where its environment is (a wrapper script, no "
     "version anywhere), gpucheck asks the interpreter for its version and site-packages in a "
     "child with a short deadline. This one crashed, hung or printed no answer; its environment "
     "was read from its directory layout as far as it goes.",
     "Python interpreter {0} did not answer ({1}); its environment was read from its "
     "directory layout",
     "Run '{0} -c \"import sys; print(sys.prefix)\"' to see why it fails.",
     where("path of the Python interpreter", "why it did not answer")},
    {k_fw_python_not_found, Severity::warn, "--python interpreter not found",
     "An interpreter named with --python does not exist or is not a regular file.",
     "--python {0}: no such interpreter",
     "Give the path of a Python interpreter, e.g. /opt/venv/bin/python3.",
     where("path given to --python")},
};

std::span<const FindingSpec> own_findings() {
  return k_findings;
}

constexpr CheckInfo k_info{"fw.environments", "Python environments",
                           "The Python interpreters on PATH, $VIRTUAL_ENV, $CONDA_PREFIX and "
                           "--python were found and could be read.",
                           CheckKind::passive};

std::vector<CheckResult> run(const CheckContext& context) {
  const std::vector<PythonEnvironment>& envs = context.snapshot.python_environments;
  if (envs.empty()) {
    return {skip_result(k_info, "no Python interpreter was found")};
  }
  std::vector<CheckResult> results;
  for (const PythonEnvironment& env : envs) {
    std::vector<Finding> findings;
    const bool given =
        std::find(env.found_by.begin(), env.found_by.end(), "--python") != env.found_by.end();
    // An interpreter that was asked and did not answer is reported as such, even when it was
    // given with --python (the command line refuses a --python that names no executable).
    if (env.query_failure) {
      findings.push_back(make_finding(k_fw_interpreter_failed, std::nullopt, env.interpreter,
                                      env.query_failure->detail.empty()
                                          ? std::string(to_string(env.query_failure->kind))
                                          : env.query_failure->detail));
    } else if (given && env.site_packages.empty() && env.source == "layout" &&
               env.version.empty()) {
      findings.push_back(make_finding(k_fw_python_not_found, std::nullopt, env.interpreter));
    }
    std::vector<std::string> frameworks;
    for (const FrameworkInstall& fw : env.frameworks) {
      frameworks.push_back(fmt::format("{} {}", fw::framework_label(fw.name), fw.version));
    }
    results.push_back(make_result(
        k_info,
        fmt::format("{} ({}; Python {}, {}, found by {}): {}", fw::env_label(env), env.interpreter,
                    env.version.empty() ? "?" : env.version, env.kind,
                    fmt::join(env.found_by, ", "),
                    frameworks.empty() ? std::string("no framework")
                                       : fmt::format("{}", fmt::join(frameworks, ", "))),
        std::move(findings)));
  }
  return results;
}
} // namespace

CheckDef fw_environments_check() {
  return {k_info, &run, &own_findings};
}

} // namespace gpucheck::checks
