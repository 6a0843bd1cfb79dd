// Rules 1, 2 and 6: the installed driver against the CUDA builds found on the machine.

#include <fmt/format.h>

#include "compat/lookup.hpp"
#include "compat/machine.hpp"
#include "compat/rules.hpp"
#include "findings/catalog.hpp"

namespace gpucheck::compat {

namespace {

std::string driver_cuda_text(const DriverVerdict& verdict) {
  return verdict.driver_cuda ? verdict.driver_cuda->str() : "an unknown version";
}

/// Findings for one CUDA build on this driver (rules 1 and 2 share them).
void judge_build(const Matrix& matrix, const MachineFacts& facts, const CudaBuild& build,
                 std::vector<Finding>& findings, int& ok_count) {
  const DriverVerdict v = judge_driver(matrix, facts.driver, facts.driver_cuda, build.cuda);
  const std::string driver = facts.driver_text.value_or("(unknown)");
  switch (v.fit) {
  case DriverFit::native:
    ++ok_count;
    break;
  case DriverFit::minor_version:
    ++ok_count;
    findings.push_back(make_finding(codes::k_compat_minor_version_compat, std::nullopt, build.what,
                                    build.cuda.str(), driver, driver_cuda_text(v), v.mvc_min_driver,
                                    v.native_min_driver.empty() ? needed_driver_text(v, build.cuda)
                                                                : v.native_min_driver,
                                    unconfirmed_note(v.unconfirmed)));
    break;
  case DriverFit::too_old:
    findings.push_back(make_finding(codes::k_compat_driver_too_old, std::nullopt, build.what,
                                    build.cuda.str(), needed_driver_text(v, build.cuda), driver,
                                    driver_cuda_text(v), unconfirmed_note(v.unconfirmed)));
    break;
  case DriverFit::unknown:
    findings.push_back(make_finding(codes::k_compat_cuda_unknown, std::nullopt, build.what,
                                    build.cuda.str(), matrix.matrix_version, driver));
    break;
  }
}

/// An info finding when the driver is newer than anything the data knows.
void note_unknown_driver(const Matrix& matrix, const MachineFacts& facts,
                         std::vector<Finding>& findings) {
  const int newest = newest_known_branch(matrix);
  if (facts.driver && facts.driver->major_number() > newest) {
    findings.push_back(make_finding(codes::k_compat_driver_unknown, std::nullopt,
                                    *facts.driver_text, matrix.matrix_version, newest));
  }
}

RuleOutcome judge_builds(const Matrix& matrix, const MachineFacts& facts,
                         const std::vector<CudaBuild>& builds, std::string_view noun) {
  RuleOutcome out;
  if (!facts.driver && !facts.driver_cuda) {
    out.skip_reason = "the driver version is not known";
    return out;
  }
  if (builds.empty()) {
    out.skip_reason = fmt::format("no {} found", noun);
    return out;
  }
  note_unknown_driver(matrix, facts, out.findings);
  int ok = 0;
  for (const CudaBuild& build : builds) {
    judge_build(matrix, facts, build, out.findings, ok);
  }
  out.summary =
      fmt::format("driver {} (CUDA {}): {} of {} {} can run", facts.driver_text.value_or("?"),
                  facts.driver_cuda ? facts.driver_cuda->str() : "?", ok, builds.size(), noun);
  return out;
}

} // namespace

RuleOutcome driver_runtime_rule(const SystemSnapshot& snapshot, const Matrix& matrix) {
  const MachineFacts facts = machine_facts(snapshot, matrix);
  RuleOutcome out = judge_builds(matrix, facts, facts.runtimes, "CUDA runtimes");
  if (out.skip_reason && facts.runtimes.empty() && (facts.driver || facts.driver_cuda)) {
    // No runtime to judge, but an unknown driver is still worth saying.
    note_unknown_driver(matrix, facts, out.findings);
    if (!out.findings.empty()) {
      out.skip_reason.reset();
      out.summary = "no CUDA runtime found; the driver is unknown to this matrix";
    }
  }
  return out;
}

RuleOutcome driver_cudnn_rule(const SystemSnapshot& snapshot, const Matrix& matrix) {
  const MachineFacts facts = machine_facts(snapshot, matrix);
  std::vector<CudaBuild> builds;
  for (const InstalledCudnn& cudnn : facts.cudnn) {
    if (cudnn.built_for) {
      // The message adds "(CUDA x.y)": the CUDA this cuDNN was built for.
      builds.push_back({fmt::format("cuDNN {} ({})", cudnn.version, cudnn.path), *cudnn.built_for});
    }
  }
  return judge_builds(matrix, facts, builds, "cuDNN builds");
}

RuleOutcome toolkit_driver_rule(const SystemSnapshot& snapshot, const Matrix& matrix) {
  const MachineFacts facts = machine_facts(snapshot, matrix);
  RuleOutcome out;
  if (!facts.nvcc) {
    out.skip_reason = "no nvcc found";
    return out;
  }
  if (!facts.driver && !facts.driver_cuda) {
    out.skip_reason = "the driver version is not known";
    return out;
  }
  const DriverVerdict v = judge_driver(matrix, facts.driver, facts.driver_cuda, *facts.nvcc);
  const std::string driver = facts.driver_text.value_or("(unknown)");
  switch (v.fit) {
  case DriverFit::native:
    out.summary = fmt::format("nvcc {} builds binaries driver {} runs", *facts.nvcc_text, driver);
    break;
  case DriverFit::minor_version:
    out.summary = fmt::format("nvcc {} is newer than the driver's CUDA {}", *facts.nvcc_text,
                              driver_cuda_text(v));
    out.findings.push_back(make_finding(
        codes::k_compat_toolkit_minor_version, std::nullopt, *facts.nvcc_text, facts.nvcc->str(),
        driver, driver_cuda_text(v),
        v.native_min_driver.empty() ? needed_driver_text(v, *facts.nvcc) : v.native_min_driver,
        unconfirmed_note(v.unconfirmed)));
    break;
  case DriverFit::too_old:
    out.summary =
        fmt::format("nvcc {} builds binaries driver {} cannot run", *facts.nvcc_text, driver);
    out.findings.push_back(make_finding(
        codes::k_compat_toolkit_too_new, std::nullopt, *facts.nvcc_text, facts.nvcc->str(), driver,
        driver_cuda_text(v), needed_driver_text(v, *facts.nvcc), unconfirmed_note(v.unconfirmed)));
    break;
  case DriverFit::unknown:
    out.summary = "nvcc's CUDA version is unknown to this matrix";
    out.findings.push_back(make_finding(codes::k_compat_cuda_unknown, std::nullopt,
                                        fmt::format("nvcc {}", *facts.nvcc_text), facts.nvcc->str(),
                                        matrix.matrix_version, driver));
    break;
  }
  return out;
}

} // namespace gpucheck::compat
