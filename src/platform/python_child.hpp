#pragma once
/// The "python" child mode: the child replaces itself (execv) with a Python interpreter running
/// one of gpucheck's small scripts, which writes its JSON result on the result fd
/// (GPUCHECK_RESULT_FD) like any child. A crash, hang or missing result of the interpreter is
/// then the child machinery's ChildFailure, never gpucheck's crash.
///
/// Scripts: "query" (version, sys.prefix, site-packages: imports nothing else) and
/// "import-pytorch", "import-tensorflow", "import-jax" (--import: import the framework, ask
/// whether it sees a GPU, run one tiny operation there, list the CUDA libraries mapped).

#include <nlohmann/json_fwd.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpucheck::platform {

/// The Python source of a named script, or nullopt for an unknown name.
std::optional<std::string> python_script(std::string_view name);

/// Child handler: args = {interpreter (host path), script name}. Does not return on success;
/// exits 127 with a message on stderr when the interpreter cannot be executed.
nlohmann::json child_python(const std::vector<std::string>& args);

/// Whether the environment entry "NAME=value" reaches the interpreter: an allow-list of what it
/// and the frameworks need (PATH, HOME, the locale, CUDA_*, NVIDIA_*, NCCL_*, TF_*, XLA_*, JAX_*,
/// the venv or conda prefix, LD_LIBRARY_PATH as gpucheck filtered it, ...), never PYTHON*,
/// LD_PRELOAD or anything else that makes it load code from elsewhere.
bool python_env_allowed(std::string_view entry);

} // namespace gpucheck::platform
