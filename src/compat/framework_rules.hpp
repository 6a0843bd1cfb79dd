#pragma once
/// The framework rules: pure functions from one framework in one Python environment,
/// the snapshot and the compatibility matrix to findings (codes in findings/table_frameworks.cpp),
/// beside the other compatibility rules of src/compat/.
/// Remedies name builds the matrix says fit this driver and these GPUs.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compat/matrix.hpp"
#include "compat/what_runs.hpp"
#include "gpucheck/model/finding.hpp"
#include "gpucheck/model/snapshot.hpp"

namespace gpucheck::compat::fw {

/// "/opt/torch/.venv" (the prefix), or the interpreter when the prefix is unknown.
std::string env_label(const PythonEnvironment& env);

/// "PyTorch 2.11.0+cu130 in /opt/torch/.venv".
std::string subject(const PythonEnvironment& env, const FrameworkInstall& fw);

/// "PyTorch", "TensorFlow", "JAX".
std::string framework_label(std::string_view name);

/// The pip command for a PyTorch wheel: pip install torch==2.9.* --index-url .../whl/cu126.
std::string pytorch_command(const compat::PytorchWheel& wheel);

/// The newest PyTorch wheel that fits the machine (SASS or PTX for every GPU, driver runs it),
/// preferring `release` when one of its wheels fits; nullptr when none does.
const compat::PytorchWheel* best_pytorch_wheel(const compat::Matrix& matrix,
                                               const compat::MachineQuery& query,
                                               const std::optional<Version>& release);

/// Rules for one framework (driver, architectures, cuDNN, CPU-only build), by fw.name.
std::vector<Finding> framework_findings(const SystemSnapshot& snapshot,
                                        const compat::Matrix& matrix, const PythonEnvironment& env,
                                        const FrameworkInstall& fw);

/// The libraries it resolves: missing, shadowed by LD_LIBRARY_PATH, other copies not used.
std::vector<Finding> library_findings(const SystemSnapshot& snapshot, const compat::Matrix& matrix,
                                      const PythonEnvironment& env, const FrameworkInstall& fw);

/// Whether the environment's files call `framework` a CPU-only build (the onnxruntime package,
/// torch +cpu): it sees no GPU by design.
bool cpu_only_build(const PythonEnvironment& env, std::string_view framework);

/// What --import showed for one framework.
std::vector<Finding> import_findings(const SystemSnapshot& snapshot, const PythonEnvironment& env,
                                     const FrameworkImport& result);

} // namespace gpucheck::compat::fw
