#pragma once
/// The child side of isolation: `gpucheck --child MODE ARGS...` runs one registered handler and
/// writes its JSON result on the fd named by GPUCHECK_RESULT_FD.

#include <nlohmann/json_fwd.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace gpucheck::child_dispatch {

using ChildHandler = nlohmann::json (*)(const std::vector<std::string>& args);

struct ChildMode {
  std::string_view name;
  ChildHandler handler;
};

/// The registered modes (see child_modes.cpp); the GPU works' own modes (gpu-compute, ...) come
/// from the works' table (protocol/works.hpp) and their runners (gpu/gpu_children.hpp).
const ChildMode* find_child_mode(std::string_view name);

/// If argv is `--child MODE ...`, run it and return the process exit code; otherwise nullopt.
/// Called first thing by main() (and by the unit-test main, whose binary is then the child).
int run_child_mode(int argc, char** argv);

/// True when argv asks for a child mode.
bool is_child_invocation(int argc, char** argv);

} // namespace gpucheck::child_dispatch
